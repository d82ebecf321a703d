"""YAML files found by name in a folder of the repository, or by path (benchmark suites,
throughput ladders, presets, ``--config`` files), read with bounds and one-line errors.

This is the one home of reading YAML from a file or a command line. What a file may be is
bounded before any of it is parsed, and what it may expand to before any of it is used:

* a regular file (not a FIFO, which would block forever, nor ``/dev/zero``, which never ends)
  of at most `MAX_BYTES`, UTF-8 text;
* a document of at most `MAX_EXPANDED` characters and nodes with every alias written out (a
  "billion laughs" of nine aliases of nine aliases ... is a few lines that expand to gigabytes
  as soon as anything turns it into text), without an alias inside the node it names (a cycle),
  and nested at most as deep as Python's parser recurses.

Each refusal is one line naming the file (the ``error`` class the caller gives).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import yaml

__all__ = ["MAX_BYTES", "MAX_EXPANDED", "BoundedLoader", "UniqueKeyLoader", "find", "load_text",
           "read", "read_text"]

MAX_BYTES = 512 * 1024  # the committed suites are at most 35 kB; PyYAML parses ~4 s per MB
MAX_EXPANDED = 4 * MAX_BYTES  # characters + nodes of a document with its aliases written out


def find(name_or_path: str, folder: Path, what: str, error: type[Exception]) -> Path:
    """``folder/NAME.yaml`` for a name, else the path itself; ``error`` (one line) if neither."""
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml") or path.exists():
        if not path.is_file():
            raise error(f"no {what} file {str(path)!r}")
        return path
    candidate = folder / f"{name_or_path}.yaml"
    if not candidate.is_file():
        known = sorted(p.stem for p in folder.glob("*.yaml")) if folder.is_dir() else []
        raise error(f"unknown {what} {name_or_path!r}; known {what}s: "
                    f"{', '.join(known) or '(none)'} (or give a path to a YAML file)")
    return candidate


def read(path: os.PathLike | str, what: str, error: type[Exception],
         unique_keys: bool = False) -> Any:
    """The YAML document of the file ``path`` (a ``what``: "suite", "--config" ...), within
    the module's bounds; ``error`` (one line naming the file, and the line of the file where
    it can) for a file that is not a bounded regular UTF-8 file or not bounded valid YAML.
    ``unique_keys``: a mapping with the same key twice is refused too (plain YAML keeps the
    last value silently)."""
    return load_text(read_text(path, what, error), f"{what} {str(path)!r}", error, unique_keys)


def read_text(path: os.PathLike | str, what: str, error: type[Exception],
              max_bytes: int = MAX_BYTES) -> str:
    """The text of ``path``, a regular file of at most ``max_bytes`` bytes of UTF-8; else
    ``error`` naming it. A FIFO or a device is refused before anything is read from it (it is
    opened non-blocking, so a FIFO with no writer does not hang the open either)."""
    name = f"{what} {str(path)!r}"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except (OSError, ValueError) as err:  # ValueError: a NUL in the path
        raise error(f"{name}: cannot read it ({getattr(err, 'strerror', None) or err})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # a directory, a FIFO, a device
        os.close(fd)
        raise error(f"{name} is not a regular file")
    with os.fdopen(fd, "rb") as file:
        try:
            data = file.read(max_bytes + 1)
        except OSError as err:
            raise error(f"{name}: cannot read it ({err.strerror or err})") from None
    if len(data) > max_bytes:
        raise error(f"{name} is larger than {max_bytes:,} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise error(f"{name} is not UTF-8 text (at byte {err.start:,})") from None


def load_text(text: str, name: str, error: type[Exception], unique_keys: bool = False) -> Any:
    """The YAML document ``text`` (from ``name``, for messages), within the module's bounds;
    ``error`` (one line) if it is not valid YAML or goes past them."""
    try:
        return yaml.load(text, Loader=UniqueKeyLoader if unique_keys else BoundedLoader)
    except Refused as err:
        raise error(f"{name} {err.problem}{_line(err)}") from None
    except yaml.YAMLError as err:
        raise error(f"{name} is not valid YAML{_line(err)}") from None
    except RecursionError:
        raise error(f"{name} is nested too deeply") from None


def _line(err: yaml.YAMLError) -> str:
    mark = getattr(err, "problem_mark", None)
    return f" (line {mark.line + 1})" if mark is not None else ""


class Refused(yaml.MarkedYAMLError):
    """YAML this module refuses though a plain loader would read it; ``problem`` says why."""


class BoundedLoader(yaml.SafeLoader):
    """A safe loader (pure Python: libyaml's parser crashes the process on deep nesting) whose
    document is refused (`Refused`) when its aliases expand it past `MAX_EXPANDED` or
    refer to a node that contains them."""

    def get_single_node(self):
        node = super().get_single_node()
        if node is not None:
            check_expansion(node, MAX_EXPANDED)
        return node


class UniqueKeyLoader(BoundedLoader):
    """`BoundedLoader` that also refuses a mapping with the same key twice."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if not isinstance(key, str):
                continue
            if key in seen:
                raise Refused(problem=f"has a duplicate key {key!r}",
                              problem_mark=key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return list(node.value) if isinstance(node, yaml.SequenceNode) else []


def check_expansion(root: yaml.Node, limit: int) -> int:
    """The size of the document under ``root`` with every alias written out (a node counts
    one, a scalar one plus its length); `Refused` past ``limit`` or for an alias inside the
    node it names. Each distinct node is visited once (an alias is a shared node), so this is
    linear in the file, whatever it expands to."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()  # on the current path from the root
    stack = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if key in sizes:
            continue
        if not children_done:
            if key in open_nodes:
                raise Refused(problem="has an alias inside the node it names (a cycle)",
                              problem_mark=node.start_mark)
            open_nodes.add(key)
            stack.append((node, True))
            stack.extend((child, False) for child in _children(node) if id(child) not in sizes)
            continue
        open_nodes.discard(key)
        size = 1 + (len(node.value) if isinstance(node, yaml.ScalarNode)
                    else sum(sizes[id(child)] for child in _children(node)))
        if size > limit:
            raise Refused(problem=f"expands past {limit:,} characters with its aliases "
                                  "written out")
        sizes[key] = size
    return sizes[id(root)]

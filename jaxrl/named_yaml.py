"""YAML files found by name in a folder of the repository, or by path (benchmark suites,
throughput ladders), read with one-line errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

__all__ = ["find", "read"]


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


def read(path: Path, what: str, error: type[Exception]) -> Any:
    """The file's YAML; ``error`` naming the line for invalid YAML."""
    try:
        return yaml.safe_load(path.read_text())
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise error(f"{what} {str(path)!r} is not valid YAML{where}") from None

"""What the host launches, per iteration of each loop, to run a GPU program: read from the
thunk sequence XLA's GPU compiler writes, so that it needs no GPU (a deviceless compile,
experiments/gpu_hlo.py, does).

    XLA_FLAGS=--xla_dump_to=DUMP JAX_PLATFORMS=cpu PYTHONPATH=CUDA_PLUGIN_SITE \\
        .venv/bin/python experiments/gpu_hlo.py jaxrl ppo-brax-hopper 256 --out DIR
    python experiments/gpu_thunks.py DUMP/module_0001.jit_chunk [...] [--labels L ...] [--json OUT]

The argument is the dump's prefix of one module: the script reads its
``.thunk_sequence_after_thunk_passes.txt`` (the thunks the executable runs, command buffers
formed), its ``.thunk_metadata.txt`` (which HLO instruction each thunk id runs) and its
``.sm_*_gpu_after_optimizations.txt`` (each ``while``'s known trip count).

A loop body is a sequence the host walks once per iteration: each entry is one launch. A
command buffer (a CUDA graph, ``kCommandBuffer``) is one launch however many kernels it holds;
any other thunk at the body's level (a kernel, a copy, a dynamic-slice thunk) is one more, and a
nested ``while`` counts its body's launches times its trip count. A dynamic-slice thunk
(``kDynamicSliceFusion``: an in-place slice or update the compiler did not fuse) also ends the
command buffer before it: where its offset is not a function of the loop's counter, the host
reads it back from the device and waits (XLA's ``DynamicSliceThunk``). What a launch costs is
not in these counts.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

_ENTRY = re.compile(r"^( *)(\d+): (k\w+)")
_WHILE_HLO = re.compile(r"^\s*(?:ROOT )?%?([\w.\-]+) = .* while\(.*\"known_trip_count\":\{\"n\":\"(\d+)\"")


@dataclass
class Thunk:
    """One entry of a thunk sequence; a ``while`` holds its body's entries."""

    kind: str
    thunk_id: int
    body: list[Thunk] = field(default_factory=list)


def parse_sequence(text: str) -> list[Thunk]:
    """The top-level entries of a ``thunk_sequence*.txt`` dump, each ``while`` with its body.
    A command buffer's own commands (indented under it) and a ``while``'s condition are left
    out: the host launches neither apart."""
    top: list[Thunk] = []
    stack: list[tuple[int | None, list[Thunk] | None]] = [(None, top)]
    last_while: Thunk | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped in ("condition:", "body:"):
            target = last_while.body if stripped == "body:" and last_while else None
            stack.append((None, target))
            continue
        match = _ENTRY.match(line)
        if not match:
            continue
        indent, thunk_id, kind = len(match.group(1)), int(match.group(2)), match.group(3)
        while True:
            level, seq = stack[-1]
            if level is None:
                stack[-1] = (indent, seq)
                break
            if indent < level:
                stack.pop()
                continue
            break
        level, seq = stack[-1]
        if indent != level or seq is None:
            continue  # a command inside a command buffer, or a condition's entry
        thunk = Thunk(kind, thunk_id)
        seq.append(thunk)
        if kind == "kWhile":
            last_while = thunk
    return top


def annotations(text: str) -> dict[int, str]:
    """``{thunk id: the HLO instruction it runs}`` from a ``thunk_metadata.txt`` dump."""
    found = {}
    for block in text.split("thunk_metadata {")[1:]:
        name = re.search(r'profile_annotation: "([^"]*)"', block)
        tid = re.search(r"thunk_id: (\d+)", block)
        if name and tid:
            found[int(tid.group(1))] = name.group(1)
    return found


def trip_counts(hlo: str) -> dict[str, int]:
    """``{while instruction: its known trip count}`` of an optimized HLO module's text."""
    return {m.group(1): int(m.group(2)) for m in map(_WHILE_HLO.match, hlo.splitlines()) if m}


def launches(body: list[Thunk], trips: dict[int, int]) -> Counter:
    """Launches of one pass over ``body`` by kind (``kWhile`` bodies times their trips)."""
    total: Counter = Counter()
    for thunk in body:
        if thunk.kind == "kWhile":
            for kind, n in launches(thunk.body, trips).items():
                total[kind] += n * trips.get(thunk.thunk_id, 1)
        else:
            total[thunk.kind] += 1
    return total


def loops(top: list[Thunk], names: dict[int, str], trips: dict[int, int], depth: int = 0):
    """One row per ``while``, outermost first: its name, depth, trip count, the launches of
    one iteration (its body's own entries, and all of them with the nested loops')."""
    rows = []
    for thunk in top:
        if thunk.kind != "kWhile":
            continue
        own = Counter(t.kind for t in thunk.body if t.kind != "kWhile")
        rows.append({"while": names.get(thunk.thunk_id, str(thunk.thunk_id)), "depth": depth,
                     "trip": trips.get(thunk.thunk_id), "own": dict(own),
                     "per_iteration": dict(launches(thunk.body, trips))})
        rows += loops(thunk.body, names, trips, depth + 1)
    return rows


def read(prefix: Path) -> dict:
    """The loops of the module dumped at ``prefix`` (see the module docstring)."""
    folder, stem = prefix.parent, prefix.name
    sequence = (folder / f"{stem}.thunk_sequence_after_thunk_passes.txt").read_text()
    names = annotations((folder / f"{stem}.thunk_metadata.txt").read_text())
    hlo_files = sorted(folder.glob(f"{stem}.sm_*_gpu_after_optimizations.txt"))
    if not hlo_files:
        raise SystemExit(f"gpu_thunks: no {stem}.sm_*_gpu_after_optimizations.txt in {folder}")
    by_name = trip_counts(hlo_files[0].read_text())
    trips = {tid: by_name[name] for tid, name in names.items() if name in by_name}
    top = parse_sequence(sequence)
    return {"module": stem, "loops": loops(top, names, trips),
            "program": dict(launches(top, trips))}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("prefixes", nargs="+", type=Path, help="DUMP/module_NNNN.jit_NAME")
    p.add_argument("--json", type=Path, default=None)
    p.add_argument("--labels", nargs="*", default=None, help="a name for each module, in order")
    args = p.parse_args(argv)
    labels = args.labels or [prefix.name for prefix in args.prefixes]
    if len(labels) != len(args.prefixes):
        p.error(f"{len(labels)} labels for {len(args.prefixes)} modules")
    found = [{"label": label, **read(prefix)} for label, prefix in zip(labels, args.prefixes)]
    for module in found:
        print(f"{module['label']}: {sum(module['program'].values())} launches in all")
        for row in module["loops"]:
            total = sum(row["per_iteration"].values())
            print(f"{'  ' * (row['depth'] + 1)}{row['while']} x{row['trip']}: {total} launches "
                  f"an iteration {row['per_iteration']}; its own {row['own']}")
    if args.json:
        args.json.write_text(json.dumps(found, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

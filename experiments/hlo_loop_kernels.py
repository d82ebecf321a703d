"""How many kernels one iteration of a compiled loop runs: an optimized HLO module, read as text.

    python experiments/hlo_loop_kernels.py MODULE.txt [MODULE.txt ...] [--trip 128] [--json OUT]
        [--labels LABEL ...]

MODULE.txt is XLA's dump of a program after optimization (run it with
``XLA_FLAGS="--xla_dump_to=DIR --xla_dump_hlo_as_text"``; the file is
``DIR/module_*.<name>.cpu_after_optimizations.txt``). The loop is the first ``while`` whose
known trip count is ``--trip`` (an off-policy learner's gradient steps of one env-step round,
say). Each instruction of its body that makes work at run time counts once per iteration;
a loop nested in the body counts its body times its trip count (its condition once more),
and a conditional counts every branch (an upper bound). Free instructions (parameters,
tuples and their elements, constants, bitcasts) do not count. A ``fusion`` is one kernel
whatever it fuses; the dots are listed apart, each with its output shape, whether it stands
alone or inside a fusion.

The counts are exact for the program compiled; what a kernel costs is not in them.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

FREE = frozenset({"parameter", "get-tuple-element", "tuple", "constant", "bitcast",
                  "after-all", "opt-barrier", "partition-id", "replica-id"})
_INSTRUCTION = re.compile(r"^\s*(?:ROOT )?%?([\w.\-]+) = (.+?) ([\w\-]+)\((.*)$")
_HEADER = re.compile(r"^(?:ENTRY )?%?([\w.\-]+) .*\{\s*$")
_SHAPE = re.compile(r"[a-z]\w*\[([\d,]*)\]")


@dataclass(frozen=True)
class Instruction:
    name: str
    shape: str
    op: str
    rest: str

    def attr(self, key: str) -> str | None:
        found = re.search(key + r"=%?([\w.\-]+)", self.rest)
        return found.group(1) if found else None

    @property
    def trip_count(self) -> int | None:
        found = re.search(r'"known_trip_count":\{"n":"(\d+)"', self.rest)
        return int(found.group(1)) if found else None

    @property
    def branches(self) -> list[str]:
        found = re.search(r"branch_computations=\{([^}]*)\}", self.rest)
        if found:
            return [b.strip().lstrip("%") for b in found.group(1).split(",")]
        return [c for c in (self.attr("true_computation"), self.attr("false_computation")) if c]

    @property
    def elements(self) -> int:
        """Elements of the output (summed over a tuple's parts)."""
        total = 0
        for dims in _SHAPE.findall(self.shape):
            count = 1
            for d in filter(None, dims.split(",")):
                count *= int(d)
            total += count
        return total


def parse(text: str) -> dict[str, list[Instruction]]:
    """``{computation name: its instructions}`` of an HLO module's text."""
    computations: dict[str, list[Instruction]] = {}
    current = None
    for line in text.splitlines():
        if current is None:
            header = _HEADER.match(line)
            if header and not line[:1].isspace():
                current = computations.setdefault(header.group(1), [])
        elif line.startswith("}"):
            current = None
        elif found := _INSTRUCTION.match(line):
            current.append(Instruction(*found.groups()))
    return computations


def loop_body(computations, trip: int) -> str:
    """The body of the first ``while`` with known trip count ``trip``."""
    for instructions in computations.values():
        for ins in instructions:
            if ins.op == "while" and ins.trip_count == trip:
                return ins.attr("body")
    raise SystemExit(f"no while loop with a known trip count of {trip} in this module")


def kernels(computations, name: str, times: int = 1) -> list[tuple[Instruction, int]]:
    """``(instruction, runs per run of computation name)`` for every kernel it runs."""
    out = []
    for ins in computations[name]:
        if ins.op in FREE:
            continue
        if ins.op == "while":
            n = ins.trip_count or 1
            out += kernels(computations, ins.attr("body"), times * n)
            out += kernels(computations, ins.attr("condition"), times * (n + 1))
        elif ins.op == "conditional":
            for branch in ins.branches:
                out += kernels(computations, branch, times)
            out.append((ins, times))
        elif ins.op == "call":
            out += kernels(computations, ins.attr("to_apply"), times)
        else:
            out.append((ins, times))
    return out


def dots(computations, runs: list[tuple[Instruction, int]]) -> list[dict]:
    """The dots among ``runs``: alone or inside a fusion, with output shapes."""
    def inside(name):
        found = []
        for ins in computations[name]:
            if ins.op == "dot":
                found.append(ins)
            elif ins.op == "fusion":
                found += inside(ins.attr("calls"))
        return found

    out = []
    for ins, times in runs:
        found = [ins] if ins.op == "dot" else inside(ins.attr("calls")) if ins.op == "fusion" \
            else []
        out += [{"shape": d.shape.split("{")[0], "in_fusion": ins.op == "fusion",
                 "runs": times} for d in found]
    return out


SCOPES = ("diagnostics", "optimizer", "replay", "gradient")
"""The named scopes `by_scope` sorts kernels into, the first found in an op's name (jaxrl's
``jax.named_scope`` and JAX's own ``gradient``); a kernel under none is ``other``."""


def kind_of(ins: Instruction) -> str:
    """An instruction's name, its numeric suffix dropped, and for a fusion its kind:
    ``"input_reduce_fusion (kInput)"``, ``"gemm_fusion_dot (kCustom)"``."""
    kind = re.search(r"kind=(\w+)", ins.rest)
    return re.sub(r"[.\d]+$", "", ins.name) + (f" ({kind.group(1)})" if kind else "")


def scope_of(ins: Instruction) -> str:
    """The first of `SCOPES` in the instruction's op name, else ``other``."""
    name = re.search(r'op_name="([^"]*)"', ins.rest)
    parts = name.group(1).split("/") if name else []
    return next((p for p in parts if p in SCOPES), "other")


def by_kind(runs: list[tuple[Instruction, int]]) -> Counter:
    """Kernels an iteration by `kind_of`."""
    return Counter({k: n for k, n in _tally((kind_of(i), t) for i, t in runs).items()})


def by_scope(runs: list[tuple[Instruction, int]]) -> Counter:
    """Kernels an iteration by `scope_of`, and by scope and kind (``"optimizer: ..."``)."""
    return _tally(pair for ins, times in runs
                  for pair in ((scope_of(ins), times),
                               (f"{scope_of(ins)}: {kind_of(ins)}", times)))


def _tally(pairs) -> Counter:
    out = Counter()
    for key, times in pairs:
        out[key] += times
    return out


def conditionals(computations, name: str) -> list[dict]:
    """Each ``conditional`` that computation ``name`` runs (through calls and loops), with the
    kernels of one run of each branch: a branch that skips work shows as a small count."""
    out = []
    for ins in computations[name]:
        if ins.op == "conditional":
            out.append({"name": ins.name, "branch_kernels": [
                sum(times for _, times in kernels(computations, b)) for b in ins.branches]})
        elif ins.op == "while":
            out += conditionals(computations, ins.attr("body"))
        elif ins.op == "call":
            out += conditionals(computations, ins.attr("to_apply"))
    return out


def count(path: Path, trip: int, rounds: int | None = None) -> dict:
    """The kernels of one iteration of the loop of known trip count ``trip``; with ``rounds``,
    also the conditionals inside the loop of that trip count (the rounds around it)."""
    computations = parse(path.read_text())
    runs = kernels(computations, loop_body(computations, trip))
    by_op, elements = Counter(), Counter()
    for ins, times in runs:
        by_op[ins.op] += times
        elements[ins.op] += ins.elements * times
    found = dots(computations, runs)
    return {"module": path.name, "trip": trip, "kernels": sum(by_op.values()),
            "by_op": dict(by_op.most_common()), "by_kind": dict(by_kind(runs).most_common()),
            "by_scope": dict(by_scope(runs).most_common()), "output_elements": dict(elements),
            "dots": len(found), "dots_alone": sum(not d["in_fusion"] for d in found),
            "dot_shapes": sorted(d["shape"] for d in found),
            **({} if rounds is None else {"rounds_trip": rounds, "round_conditionals":
                                          conditionals(computations,
                                                       loop_body(computations, rounds))})}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("modules", nargs="+", type=Path)
    p.add_argument("--trip", type=int, default=128)
    p.add_argument("--json", type=Path, default=None)
    p.add_argument("--labels", nargs="*", default=None, help="a name for each module, in order")
    p.add_argument("--rounds", nargs="*", type=int, default=None,
                   help="per module, the trip count of the loop around --trip's, whose "
                        "conditionals are listed with each branch's kernels")
    args = p.parse_args(argv)
    labels = args.labels or [m.name for m in args.modules]
    if len(labels) != len(args.modules):
        p.error(f"{len(labels)} labels for {len(args.modules)} modules")
    rounds = args.rounds or [None] * len(args.modules)
    if len(rounds) != len(args.modules):
        p.error(f"{len(rounds)} --rounds for {len(args.modules)} modules")
    rows = [{"label": label, **count(m, args.trip, r)}
            for label, m, r in zip(labels, args.modules, rounds)]
    for row in rows:
        ops = ", ".join(f"{op} {n}" for op, n in row["by_op"].items())
        print(f"{row['label']}: {row['kernels']} kernels an iteration ({ops}); "
              f"{row['dots']} dots, {row['dots_alone']} alone")
        for cond in row.get("round_conditionals", []):
            print(f"  a round's {cond['name']}: branches of {cond['branch_kernels']} kernels")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

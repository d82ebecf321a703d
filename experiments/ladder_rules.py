"""Issue 57's rules for the equal-device ladder, read off committed ``results.json`` files.

    python experiments/ladder_rules.py benchmarks/throughput-cpu-ab/pass1/results.json \
        benchmarks/throughput-cpu-ab/pass2/results.json [--json OUT]

Each file is one pass of ``jaxrl ladder ... --peer rejax`` (jaxrl's rung, then rejax's, at
each count); several passes make A B A B. A rung's ratio is jaxrl's whole-run env-steps/s over
rejax's, pair by pair, and the rung's figure the median of its pairs. The rules:

1. every rung at or above 1.0x;
2. the median rung at least 1.3x;
3. PPO Breakout-MinAtar and PPO brax hopper at least 1.2x at 1 member.

Prints a table (one row per workload, one column per member count, each cell the pairs'
ratios and their median) and each rule's verdict with the numbers it read.

``--longest``: each rung keeps only its pairs at the largest budget any file gives it (env
steps per member), so passes at the ladder's budgets and longer passes of some rungs
(``--budget-scale``) read as one ladder, each rung from its longest, least noisy runs.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from pathlib import Path

from jaxrl.studies.throughput.report import whole_run_rate

AT_ONE_MEMBER = ("ppo-breakout-minatar", "ppo-brax-hopper")


def pair_ratios(files: list[Path], longest: bool = False) -> dict[tuple[str, int], list[float]]:
    """``{(workload, members): [jaxrl / rejax per pass]}`` over the passes' ok points; with
    ``longest``, each rung's pairs at its largest ``steps_per_member`` only."""
    by_budget: dict[tuple[str, int], dict[int, list[float]]] = defaultdict(
        lambda: defaultdict(list))
    for path in files:
        points = json.loads(path.read_text())["points"]
        ok = {(p["workload"], p["members"], p["lib"]): p for p in points
              if p.get("status") == "ok"}
        for (workload, members, lib), point in ok.items():
            peer = ok.get((workload, members, "rejax"))
            if lib == "jaxrl" and peer is not None:
                by_budget[workload, members][point["steps_per_member"]].append(
                    whole_run_rate(point) / whole_run_rate(peer))
    return {rung: (budgets[max(budgets)] if longest
                   else [r for b in sorted(budgets) for r in budgets[b]])
            for rung, budgets in by_budget.items()}


def verdicts(ratios: dict[tuple[str, int], list[float]]) -> dict:
    rung = {key: statistics.median(values) for key, values in ratios.items()}
    median = statistics.median(rung.values()) if rung else float("nan")
    ones = {w: rung.get((w, 1)) for w in AT_ONE_MEMBER}
    return {
        "rungs": {f"{w}@{m}": r for (w, m), r in sorted(rung.items())},
        "every rung >= 1.0": {"holds": all(r >= 1.0 for r in rung.values()),
                              "lowest": min(rung.values(), default=None)},
        "median rung >= 1.3": {"holds": median >= 1.3, "median": median},
        "MinAtar and hopper >= 1.2 at 1 member": {
            "holds": all(r is not None and r >= 1.2 for r in ones.values()), "at 1": ones},
    }


def table(ratios: dict[tuple[str, int], list[float]]) -> str:
    counts = sorted({m for _, m in ratios})
    lines = ["| workload | " + " | ".join(f"{m} member{'s' * (m > 1)}" for m in counts) + " |",
             "|---|" + "---|" * len(counts)]
    for workload in sorted({w for w, _ in ratios}):
        cells = []
        for m in counts:
            values = ratios.get((workload, m))
            cells.append("" if not values else
                         f"{statistics.median(values):.2f}x ("
                         + ", ".join(f"{v:.2f}" for v in values) + ")")
        lines.append(f"| {workload} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("results", nargs="+", type=Path)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--longest", action="store_true",
                        help="each rung from its pairs at the largest budget only")
    args = parser.parse_args()
    ratios = pair_ratios(args.results, args.longest)
    print(table(ratios))
    found = verdicts(ratios)
    for rule, verdict in found.items():
        if rule != "rungs":
            print(f"- {rule}: {'holds' if verdict['holds'] else 'does not hold'} "
                  f"({', '.join(f'{k} {v}' for k, v in verdict.items() if k != 'holds')})")
    if args.json:
        args.json.write_text(json.dumps({"passes": [str(p) for p in args.results],
                                         "longest": args.longest,
                                         "ratios": {f"{w}@{m}": v for (w, m), v in
                                                    sorted(ratios.items())},
                                         **found}, indent=1) + "\n")


if __name__ == "__main__":
    main()

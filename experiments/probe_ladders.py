"""Every built-in algorithm up the probe ladder, into committed files, and the table of them.

    python experiments/probe_ladders.py run [--out benchmarks/probes-cpu] [--algos ppo,sac]
    python experiments/probe_ladders.py table [--out benchmarks/probes-cpu]

``run`` calls ``jaxrl probe ALGO --json OUT/ALGO.json`` for each algorithm (its default seeds
and steps per rung; the log beside each file is what it printed); ``table`` prints the markdown
table of the files found: per algorithm the rungs it runs, how many passed, the first failing
rung with its diagnosis, and the seconds the ladder took.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from jaxrl.algo_names import BUILT_IN

OUT = Path(__file__).resolve().parents[1] / "benchmarks" / "probes-cpu"


def run(out: Path, algos: list[str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for algo in algos:
        with open(out / f"{algo}.log", "w") as log:
            subprocess.run([sys.executable, "-m", "jaxrl.cli", "probe", algo, "--json",
                            str(out / f"{algo}.json")], stdout=log, stderr=subprocess.STDOUT,
                           check=False)


def row(ladder: dict) -> str:
    """One algorithm's ladder as a table row."""
    rungs = ladder["rungs"]
    passed = sum(r["passed"] for r in rungs)
    failed = [r for r in rungs if not r["passed"]]
    first = f"{failed[0]['name']}: {failed[0]['diagnosis']}" if failed else "–"
    names = ", ".join(str(r["rung"]) for r in rungs)
    seconds = sum(r["seconds"] for r in rungs)
    return (f"| {ladder['algo']} | {names} | {passed} of {len(rungs)} | {first} | "
            f"{ladder['seeds']} | {seconds:.0f} |")


def table(out: Path) -> str:
    """The markdown table of every ``ALGO.json`` ladder in ``out``, in `BUILT_IN` order."""
    lines = ["| algorithm | rungs run | passed | first failing rung | seeds | seconds |",
             "|---|---|---|---|---|---|"]
    for algo in BUILT_IN:
        path = out / f"{algo}.json"
        if path.exists():
            lines.append(row(json.loads(path.read_text())))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("what", choices=("run", "table"))
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--algos", default=",".join(BUILT_IN))
    args = parser.parse_args()
    if args.what == "run":
        run(args.out, args.algos.split(","))
    else:
        print(table(args.out))


if __name__ == "__main__":
    main()

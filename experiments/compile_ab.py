"""Compile seconds of the throughput ladder's rungs under two code trees, in turn (A B A B).

    python experiments/compile_ab.py --before /tmp/wt-before \\
        --out benchmarks/compile-ab-cpu --members 1 4 --pairs 2 [--ladder suite_tasks]

Each rung is the ladder's own (`jaxrl.studies.throughput.ladder.measure_rung`: a fresh process,
the persistent compilation cache off, so every program compiles), run once with the package
of ``--before`` on ``PYTHONPATH`` and once with this repository's, pair after pair, so both
trees share the same minutes of a shared machine. Writes ``results.json`` (one record per
rung and tree: ``compile_seconds``, the run's wait for its programs; ``compile_parts`` and
``compile_phases`` per program) after every rung, and skips the rungs it already holds, so a
stopped call goes on where it stopped. ``--notes`` re-renders the table of ``OUT/NOTES.md``
from it (`table`; tests/experiments/test_compile_ab_notes.py holds the committed one to it).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from jaxrl.studies.throughput.ladder import POINT_MAIN, _parse  # noqa: E402
from jaxrl.studies.throughput.point import RESULT_PREFIX  # noqa: E402
from jaxrl.studies.throughput.workloads import load_ladder  # noqa: E402


def measure(workload: dict, members: int, root: Path, timeout: float) -> dict:
    """One rung as the ladder measures it (a fresh process, the persistent cache off), with the
    package at ``root`` (run from there: ``PYTHONPATH`` alone would lose to the working folder,
    which ``python -c`` puts first); ``workload`` may carry ``eval_episodes`` (the evaluation program)."""
    env = {**os.environ, "PYTHONPATH": str(root), "JAXRL_COMPILE_CACHE": "0"}
    cmd = [sys.executable, "-c", POINT_MAIN, json.dumps({"workload": workload, "members": members})]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                              cwd=root)  # `python -c` puts the working folder first on the path
    except subprocess.TimeoutExpired:
        return {"status": "failed", "reason": f"timed out after {timeout:.0f} s"}
    return _parse(proc.stdout, RESULT_PREFIX) or {
        "status": "failed", "reason": (proc.stderr.strip().splitlines() or ["no result"])[-1]}


def commit_of(tree: Path) -> str:
    out = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"],
                         capture_output=True, text=True, check=False)
    return out.stdout.strip() or "unknown"


PEER_RESULTS = REPO / "benchmarks" / "throughput-cpu" / "results.json"
TABLE_START, TABLE_END = "<!-- compile-ab table -->", "<!-- /compile-ab table -->"


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def first_step_wait(record: dict) -> float:
    """A run's wait before its first chunk: its wait for its programs less what it waited at
    its first evaluation (since 691ced1 the evaluation program compiles behind the first
    chunks; before, every program was built before the first step)."""
    waited = (record.get("compile_phases") or {}).get("eval", {}).get("waited", 0.0)
    return record["compile_seconds"] - waited


def table(data: dict, peers: list[dict]) -> str:
    """The notes' table: per workload, member count and evaluation setting, the wait for the
    programs before and after (mean over pairs), their ratio, each tree's wait before its
    first step (`first_step_wait`), the after tree's seconds per program, and rejax's lowering + compile at the same count from the throughput ladder's
    results (measured on another day: a level, not a pair)."""
    rows: dict[tuple, dict[str, list[dict]]] = {}
    for r in data["records"]:
        if r.get("status") == "ok":
            key = (r["workload"], r["members"], r.get("eval_episodes", 0))
            rows.setdefault(key, {}).setdefault(r["tree"], []).append(r)
    peer = {(p["workload"], p["members"]): p for p in peers
            if p.get("lib") == "rejax" and p.get("status") == "ok"}
    lines = ["| workload | members | eval episodes | before: wait s | after: wait s | after / "
             "before | before / after: wait before the first step s | after: init / chunk / "
             "eval s | rejax: lower + compile s |",
             "|---|---|---|---|---|---|---|---|---|"]
    for (name, members, episodes), trees in rows.items():
        if "before" not in trees or "after" not in trees:
            continue
        before = _mean([r["compile_seconds"] for r in trees["before"]])
        after = _mean([r["compile_seconds"] for r in trees["after"]])
        parts = {k: _mean([r["compile_parts"].get(k, 0.0) for r in trees["after"]])
                 for k in ("init", "chunk", "eval") if k in trees["after"][0]["compile_parts"]}
        first = [_mean([first_step_wait(r) for r in trees[t]]) for t in ("before", "after")]
        p = peer.get((name, members)) if not episodes else None
        rejax = f"{p['lower_seconds'] + p['compile_seconds']:.2f}" if p else "–"
        lines.append(f"| {name} | {members} | {episodes} | {before:.2f} | {after:.2f} | "
                     f"{after / before:.2f}x | {first[0]:.2f} / {first[1]:.2f} | "
                     f"{' / '.join(f'{v:.2f}' for v in parts.values())} | {rejax} |")
    return "\n".join(lines)


def render_notes(out: Path) -> None:
    """Write the table into ``out/NOTES.md`` between its markers."""
    data = json.loads((out / "results.json").read_text())
    peers = json.loads(PEER_RESULTS.read_text())["points"]
    notes = out / "NOTES.md"
    text = notes.read_text()
    head, rest = text.split(TABLE_START, 1)
    _, tail = rest.split(TABLE_END, 1)
    notes.write_text(f"{head}{TABLE_START}\n{table(data, peers)}\n{TABLE_END}{tail}")


def package_at(root: Path) -> Path:
    """Where a child run as `measure` runs it imports jaxrl from (it must be ``root``'s)."""
    out = subprocess.run([sys.executable, "-c", "import jaxrl; print(jaxrl.__file__)"],
                         capture_output=True, text=True, check=True, cwd=root,
                         env={**os.environ, "PYTHONPATH": str(root)})
    return Path(out.stdout.strip()).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--before", help="a checkout of the earlier tree")
    p.add_argument("--notes", action="store_true",
                   help="only re-render the table of OUT/NOTES.md from OUT/results.json")
    p.add_argument("--out", required=True)
    p.add_argument("--members", type=int, nargs="+", default=[1, 4])
    p.add_argument("--pairs", type=int, default=2)
    p.add_argument("--only", nargs="*", default=None, help="workload names (default: all)")
    p.add_argument("--ladder", default="throughput",
                   help="the ladder whose workloads to measure (experiments/ladders/NAME.yaml; "
                        "suite_tasks: one task of each suite the throughput ladder leaves out)")
    p.add_argument("--timeout", type=float, default=900)
    p.add_argument("--eval-episodes", type=int, default=0,
                   help="evaluation episodes (0: none, as the ladder; else the run also "
                        "compiles its evaluation program, as `jaxrl train` does)")
    args = p.parse_args(argv)
    out = Path(args.out)
    if args.notes:
        render_notes(out)
        return 0
    if not args.before:
        p.error("--before is required to measure")
    out.mkdir(parents=True, exist_ok=True)
    path = out / "results.json"
    data = json.loads(path.read_text()) if path.is_file() else {"records": []}
    trees = {"before": (Path(args.before).resolve(), commit_of(Path(args.before))),
             "after": (REPO, commit_of(REPO))}
    data["trees"] = {k: v[1] for k, v in trees.items()}
    for name, (root, _) in trees.items():
        if package_at(root) != root:
            raise SystemExit(f"the {name} tree's child imports jaxrl from {package_at(root)}")
    done = {(r["workload"], r["members"], r["tree"], r["pair"], r.get("eval_episodes", 0))
            for r in data["records"]}
    workloads = [w for w in load_ladder(args.ladder).workloads
                 if not args.only or w.name in args.only]
    for w in workloads:
        for members in args.members:
            for pair in range(args.pairs):
                for tree, (root, commit) in trees.items():
                    if (w.name, members, tree, pair, args.eval_episodes) in done:
                        continue
                    workload = {**w.to_dict(), "eval_episodes": args.eval_episodes}
                    rec = measure(workload, members, root, args.timeout)
                    keep = {k: rec.get(k) for k in (
                        "status", "reason", "compile_seconds", "compile_parts", "compile_phases",
                        "compile_source", "env_steps_per_second", "devices", "measured_at")}
                    data["records"].append({"workload": w.name, "members": members, "tree": tree,
                                            "commit": commit, "pair": pair,
                                            "eval_episodes": args.eval_episodes, **keep})
                    path.write_text(json.dumps(data, indent=1) + "\n")
                    print(f"{w.name} x{members} eval {args.eval_episodes} {tree} pair {pair}: "
                          f"{rec.get('status')} compile {rec.get('compile_seconds')}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

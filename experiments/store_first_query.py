"""How long a new run store takes to give its first answers (issue 77 item 11).

Builds a synthetic store of N finished runs in the store's real format (`make_big_store`'s
run folders, each ``run.json`` carrying its ``metric_names`` and the writer's check of its
files as `jaxrl.runs.store.Run` records them), and a copy of it (``shutil.copytree``, as
``cp -a``: every file new to the disk, so no check its writer kept holds), then times ``jaxrl`` commands, each in a fresh process
(Python start and imports included, nothing cached in-process):

a. the first ``runs ls`` (no catalog yet),
b. the first aggregate (``runs sql``) on a store whose catalog was never built,
   b2. the first aggregate after a first ``runs ls`` (rows catalogued, metrics not compacted),
   b3. the first aggregate on the copy (every file's footer read and checked),
c. the same aggregate again (catalog warm: once the background compactor that the first
   aggregate may start, `jaxrl.runs.compactor`, is done; ``c0``: at once, while it works),
d. the aggregate after one run was touched (its ``run.json`` rewritten in place).

Each is repeated and the median kept (the catalog is removed before each repeat of a and b);
``compaction_wait_after_c0_s``: how long the background compactor went on after c0. Several
versions of the code (``--code LABEL=DIR``: a folder holding its ``jaxrl`` and ``envs``, e.g.
``git archive HEAD jaxrl envs | tar -x -C /tmp/old``) are measured in turns on the same store,
so that a machine whose load drifts weighs on each alike. Results go to
``benchmarks/store-first-query/timings.json``, one entry per label::

    python experiments/store_first_query.py --code before=/tmp/old --code after=. --repeats 5
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # experiments/ is not a package
from make_big_store import write_run

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "benchmarks" / "store-first-query" / "timings.json"
AGGREGATE = ("SELECT algo, avg(episode_return_mean) AS ret FROM metrics JOIN runs USING (run_id) "
             "GROUP BY algo ORDER BY algo")


def build_store(root: Path, runs: int, seeds: int = 4, chunks: int = 5,
                updates_per_chunk: int = 50) -> list[str]:
    """A store of ``runs`` finished runs under ``root``; returns their run ids."""
    return [write_run(root, i, seeds, chunks, updates_per_chunk) for i in range(runs)]


def jaxrl(code: Path, root: Path, *argv: str) -> tuple[float, float, str]:
    """``jaxrl runs --runs-dir root ARGV`` of the code in ``code`` in a fresh process: wall
    seconds, CPU seconds (user + system, this child alone) and its last output line."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "jaxrl.cli", "runs", "--runs-dir", str(root),
                           *argv], capture_output=True, text=True, check=True, cwd=code,
                          env={**os.environ, "PYTHONPATH": str(code)})
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu, (proc.stdout.strip().splitlines() or [""])[-1]


def touch_run(root: Path, run_id: str) -> None:
    """Rewrite a run's ``run.json`` as the store does (a temp file renamed into place)."""
    path = root / run_id / "run.json"
    tmp = path.with_name(".run.json.touch.tmp")
    tmp.write_text(path.read_text())
    os.replace(tmp, path)


def fresh(root: Path) -> None:
    """Forget the store's catalog (a store no query has read)."""
    shutil.rmtree(root / ".catalog", ignore_errors=True)


def summary(samples: list[tuple[float, float, str]]) -> dict:
    walls = [s[0] for s in samples]
    return {"median_s": round(statistics.median(walls), 3),
            "wall_s": [round(w, 3) for w in walls],
            "cpu_s_median": round(statistics.median(s[1] for s in samples), 3),
            "last_line": samples[-1][2].strip()}


def compacted(root: Path, timeout: float = 300.0, grace: float = 3.0) -> float:
    """Wait for a background compactor of the store to finish; the seconds waited after it
    began (0 where none began). The detached process takes a moment to start and take its
    lock, so a query's compactor is awaited for ``grace`` seconds before it counts as none:
    a compactor still at work would share the CPU with the next timing."""
    try:
        from jaxrl.runs.compactor import running
    except ImportError:  # code from before the background compactor
        return 0.0
    start = time.perf_counter()
    while not running(root) and time.perf_counter() - start < grace:
        time.sleep(0.02)
    began = time.perf_counter()
    if not running(root):
        return 0.0
    while running(root) and time.perf_counter() - began < timeout:
        time.sleep(0.05)
    return time.perf_counter() - began


CASES = ("a_first_ls", "b_first_aggregate", "b2_aggregate_after_first_ls",
         "b3_first_aggregate_copied_store",
         "c0_aggregate_while_compacting", "c_aggregate_warm", "d_aggregate_after_touch")


def one_round(code: Path, root: Path, copy: Path, touched: str, cases: dict) -> float:
    """Cases a-d once, with the code in ``code``; returns how long the background compactor
    (if any) went on after c0."""
    fresh(root)
    cases["a_first_ls"].append(jaxrl(code, root, "ls"))
    cases["b2_aggregate_after_first_ls"].append(jaxrl(code, root, "sql", AGGREGATE))
    compacted(root)
    fresh(copy)
    cases["b3_first_aggregate_copied_store"].append(jaxrl(code, copy, "sql", AGGREGATE))
    compacted(copy)
    fresh(root)
    cases["b_first_aggregate"].append(jaxrl(code, root, "sql", AGGREGATE))
    cases["c0_aggregate_while_compacting"].append(jaxrl(code, root, "sql", AGGREGATE))
    wait = compacted(root)
    cases["c_aggregate_warm"].append(jaxrl(code, root, "sql", AGGREGATE))
    touch_run(root, touched)
    cases["d_aggregate_after_touch"].append(jaxrl(code, root, "sql", AGGREGATE))
    return wait


def measure(root: Path, copy: Path, run_ids: list[str], repeats: int,
            codes: dict[str, Path]) -> dict:
    """The timings a-d (see the module docstring) of each version of the code in ``codes``,
    ``repeats`` times, the versions taking turns (in reverse order every other round)."""
    cases = {label: {k: [] for k in CASES} for label in codes}
    waits: dict[str, list] = {label: [] for label in codes}
    loads = []
    for i in range(repeats):
        for label in list(codes)[:: 1 if i % 2 == 0 else -1]:
            loads.append(os.getloadavg()[0])
            waits[label].append(one_round(codes[label], root, copy, run_ids[(7 * i) % len(run_ids)],
                                          cases[label]))
            print(f"repeat {i + 1} {label}: " + ", ".join(
                f"{k} {v[-1][0]:.2f} s" for k, v in cases[label].items()), flush=True)
    return {label: {**{k: summary(v) for k, v in cases[label].items()},
                    "compaction_wait_after_c0_s": [round(w, 2) for w in waits[label]],
                    "load_average_1m_during": [round(x, 2) for x in loads]}
            for label in codes}


def machine(note: str) -> dict:
    return {"cpus": os.cpu_count(), "platform": platform.platform(),
            "python": platform.python_version(), "load_average_1m": round(os.getloadavg()[0], 2),
            "note": note}


def record(label: str, result: dict, out: Path = OUT) -> None:
    """Add ``result`` under ``label`` to the JSON at ``out``."""
    out.parent.mkdir(parents=True, exist_ok=True)
    data = json.loads(out.read_text()) if out.is_file() else {}
    data.setdefault("query", AGGREGATE)
    data[label] = result
    out.write_text(json.dumps(data, indent=2) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--code", action="append", default=[], metavar="LABEL=DIR",
                        help="a version of the code to time (default: after=this checkout)")
    parser.add_argument("--root", type=Path, default=None,
                        help="store folder, reused if it exists (default: a temp one)")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--note", default="2 cores shared with a long-running background "
                        "benchmark: timings are noisy; medians of the repeats",
                        help="what else the machine did meanwhile, recorded with the timings")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.root or Path(tmp) / "runs"
        start = time.perf_counter()
        if root.is_dir():  # a store built before (--root): reused as it is
            run_ids = sorted(p.name for p in root.iterdir() if not p.name.startswith("."))
        else:
            run_ids = build_store(root, args.runs)
        print(f"store of {len(run_ids)} runs at {root} ({time.perf_counter() - start:.0f} s)")
        copy = Path(tmp) / "copied"
        shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".catalog"))
        codes = dict(c.split("=", 1) for c in args.code) or {"after": str(REPO)}
        timings = measure(root, copy, run_ids, args.repeats,
                          {label: Path(d).resolve() for label, d in codes.items()})
        common = {"runs": len(run_ids), "repeats": args.repeats, "seeds": 4,
                  "chunks_per_run": 5, "updates_per_chunk": 50, "machine": machine(args.note),
                  "date": time.strftime("%Y-%m-%d %H:%M:%S")}
    for label, result in timings.items():
        record(label, {**common, "code": codes[label], "timings": result}, args.out)
        print(label, json.dumps({k: v["median_s"] for k, v in result.items()
                                 if isinstance(v, dict)}))


if __name__ == "__main__":
    main()

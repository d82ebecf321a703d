"""Does the head of a Ray sweep hold more memory as the sweep has more groups?

    python experiments/ray_head_rss.py [--groups 50 200] [--cpus 2] [--out benchmarks/ray-head-rss]

For each group count N, a fresh process runs what ``jaxrl sweep ... --backend ray
--configs-per-group 1`` runs (`jaxrl.studies.sweep.runner.sweep` with ``keep_results=False``) on a local Ray
instance of ``--cpus`` CPUs: PPO CartPole, N learning rates, one config per group, one seed,
one update of 4 envs x 16 steps per group, one evaluation episode; every group recorded in a
fresh run store as its task ends. A thread samples the head's resident set (VmRSS) every
0.2 s, with the number of groups recorded so far. The head's peak (VmHWM) is read at the end.
The Ray processes (GCS, raylet, workers) are not the head and are not counted.

Writes ``results.json`` (per N: peak RSS, RSS after the first and the last tenth of the
groups, wall time, samples) and ``report.md`` to ``--out``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path


def rss_kib(field: str = "VmRSS") -> int:
    """This process's resident set (``VmRSS``) or its peak (``VmHWM``), KiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def recorded(root: Path) -> int:
    return sum(1 for p in root.iterdir() if (p / "run.json").is_file()) if root.is_dir() else 0


def one(groups: int, cpus: int) -> dict:
    """Run one sweep of ``groups`` groups in this process; its memory figures."""
    import ray

    from jaxrl.studies.sweep.runner import sweep

    store = Path(tempfile.mkdtemp(prefix="ray-head-rss-"))
    samples, stop = [], threading.Event()

    def sample() -> None:
        while not stop.is_set():
            samples.append((round(time.time() - start, 2), recorded(store), rss_kib()))
            time.sleep(0.2)

    ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False)
    start = time.time()
    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    lrs = [f"{1e-4 * (1 + i):.6g}" for i in range(groups)]
    try:
        result = sweep("ppo", seeds=1, total_steps=64, grid={"learning_rate": lrs},
                       configs_per_group=1, num_envs=4, num_steps=16, hidden=(16, 16),
                       update_epochs=1, num_minibatches=1, eval_episodes=1, runs_dir=str(store),
                       backend="ray", progress=False, keep_results=False)
    finally:
        stop.set()
        thread.join()
        ray.shutdown()
    wall = time.time() - start
    assert len(result.groups) == groups and recorded(store) == groups, "not every group recorded"
    shutil.rmtree(store)
    after = lambda frac: next(r for _, n, r in samples if n >= max(1, int(groups * frac)))
    return {"groups": groups, "peak_rss_mib": round(rss_kib("VmHWM") / 1024, 1),
            "rss_mib_after_10pct": round(after(0.1) / 1024, 1),
            "rss_mib_after_90pct": round(after(0.9) / 1024, 1),
            "wall_seconds": round(wall, 1), "failed": len(result.failures),
            "samples": [(t, n, round(r / 1024, 1)) for t, n, r in samples[::5]]}


def report(rows: list[dict], meta: dict) -> str:
    lines = ["# Head memory of a Ray sweep against its number of groups", "",
             f"{meta['date']}, commit {meta['commit']}, {meta['machine']}; local Ray of "
             f"{meta['cpus']} CPUs; PPO CartPole, one config per group, one seed, one update "
             "per group (a tiny budget: the head's recording work per group, not training, is "
             "what is measured). Head = the process that runs the sweep and records every "
             "group; Ray's own processes are not counted.", "",
             "| groups | head peak RSS (MiB) | RSS after 10% of groups | after 90% | wall (s) |",
             "|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['groups']} | {r['peak_rss_mib']} | {r['rss_mib_after_10pct']} | "
                     f"{r['rss_mib_after_90pct']} | {r['wall_seconds']} |")
    a, b = rows[0], rows[-1]
    lines += ["", f"Peak at {b['groups']} groups over peak at {a['groups']}: "
                  f"{b['peak_rss_mib'] - a['peak_rss_mib']:+.1f} MiB "
                  f"({b['groups'] / a['groups']:.0f}x the groups). The RSS rises over the first "
                  "~30 groups (imports, Ray's client, the first recordings) and is flat after; "
                  "`samples` in results.json has it against the groups recorded. Wall times "
                  "include Ray's start and are no throughput figure (a shared machine). "
                  "Rebuild: `python experiments/ray_head_rss.py`."]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", type=int, nargs="+", default=[50, 200])
    parser.add_argument("--cpus", type=int, default=2)
    parser.add_argument("--out", default="benchmarks/ray-head-rss")
    parser.add_argument("--one", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one is not None:
        print(json.dumps(one(args.one, args.cpus)))
        return
    rows = []
    for n in args.groups:  # a fresh process each: its peak is its own
        done = subprocess.run([sys.executable, __file__, "--one", str(n), "--cpus",
                               str(args.cpus)], capture_output=True, text=True, check=True)
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(json.dumps({k: v for k, v in rows[-1].items() if k != "samples"}), flush=True)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    meta = {"date": datetime.date.today().isoformat(), "commit": commit, "cpus": args.cpus,
            "machine": f"{platform.machine()} {os.cpu_count()} cores"}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "results.json").write_text(json.dumps({**meta, "rows": rows}, indent=1) + "\n")
    (out / "report.md").write_text(report(rows, meta))


if __name__ == "__main__":
    main()

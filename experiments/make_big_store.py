"""Write a synthetic run store of N finished runs in the real on-disk format, to measure the
store's queries at scale (issue 18: 10,000 runs, `jaxrl runs ls` < 1 s, an aggregate over all
metrics < 5 s).

Each run folder holds what `jaxrl.runs.store.Run` writes for a finished run: ``run.json`` (the
same keys), an empty ``code.diff``, ``metrics/chunk-NNNNN.parquet`` (one file per chunk of
``--updates-per-chunk`` updates x ``--seeds`` seeds, the metric columns of a real algorithm),
``evaluations.parquet``, a short ``report.md``, and in ``run.json`` the metric names and the
writer's check of the files (``checked``). Values are random; shapes are real.

    python experiments/make_big_store.py /tmp/big-store --runs 10000
    python experiments/make_big_store.py /tmp/big-store --runs 10000 --measure

``--measure`` times, in fresh processes, ``jaxrl runs ls`` and a ``runs sql`` aggregate over
all metrics (wall seconds: the first call builds the store's catalog, later calls read it), and
the same queries in-process.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import resource
import subprocess
import sys
import time
from multiprocessing import Pool
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from jaxrl.runs import catalog, query
from jaxrl.runs.kept_checks import CHECKED_FIELD, writer_record
from jaxrl.runs.store import RunStore

COMMON = ["env_steps", "env_steps_per_second", "episode_count", "episode_length_max",
          "episode_length_mean", "episode_length_min", "episode_length_std",
          "episode_return_max", "episode_return_mean", "episode_return_min",
          "episode_return_std"]
ON_POLICY = [*COMMON, "approx_kl", "clip_fraction", "entropy", "entropy_relative", "grad_norm", "learning_rate", "policy_loss", "residual_variance", "value_loss"]
OFF_POLICY = [*COMMON, "buffer_fill", "epsilon", "grad_norm", "gradient_updates", "learning_fraction", "learning_rate", "loss", "q_max", "q_mean", "q_min", "q_std", "sample_staleness", "target_max", "target_mean", "target_min", "target_std", "td_error_abs_max", "td_error_abs_mean"]
ALGOS = {"ppo": ON_POLICY, "a2c": ON_POLICY, "dqn": OFF_POLICY}
ENVS = ["CartPole-v1", "Acrobot-v1", "MountainCar-v0", "gymnax:Breakout-MinAtar"]
CONFIG = {"num_envs": 4, "num_steps": 128, "hidden": [64, 64], "activation": "tanh",
          "gamma": 0.99, "gae_lambda": 0.95, "learning_rate": 2.5e-4, "clip_eps": 0.2}


def run_meta(index: int, algo: str, env: str, seeds: int, steps: int) -> dict:
    """The ``run.json`` of a finished run (the keys `RunStore.new_run` and `Run.finish` write)."""
    started = dt.datetime(2026, 1, 1, tzinfo=dt.UTC) + dt.timedelta(minutes=index)
    safe_env = "".join(c if c.isalnum() or c in "-_" else "-" for c in env)
    run_id = f"{started:%Y%m%d-%H%M%S}-{algo}-{safe_env}-{index:06x}"
    returns = np.random.default_rng(index).normal(100, 20, seeds).round(2).tolist()
    return {
        "run_id": run_id, "algo": algo, "env": env, "seeds": seeds,
        "total_steps_per_seed": steps, "status": "finished", "config": CONFIG,
        "command": ["jaxrl", "train", algo, "--env", env],
        "command_line": f"jaxrl train {algo} --env {env}", "git_commit": "0" * 40,
        "git_dirty": False, "versions": {"jax": "0.10.2", "jaxrl": "0.1.0"},
        "platform": "cpu", "device_kind": "cpu", "device_count": 2,
        "started_at": started.isoformat(), "ended_at": (started + dt.timedelta(seconds=90))
        .isoformat(), "sweep_id": None, "final_eval_return": returns,
        "final_eval_return_mean": float(np.mean(returns)),
        "final_eval_return_iqm": float(np.median(returns)), "compile_seconds": 30.0,
        "run_seconds": 60.0, "env_steps_per_second": 50_000.0, "message": None,
        "pid": 1, "host": "generator", "train_return_last100": returns, "devices": "2 x cpu",
    }


def chunk_table(run_id: str, columns: list[str], seeds: int, first: int, updates: int,
                rng: np.random.Generator) -> pa.Table:
    """One metrics chunk: a row per seed x update, ``run_id, seed, update, <metrics>``."""
    rows = seeds * updates
    data = {"run_id": pa.array([run_id] * rows),
            "seed": pa.array(np.repeat(np.arange(seeds), updates)),
            "update": pa.array(np.tile(np.arange(first, first + updates), seeds))}
    for name in sorted(columns):
        data[name] = pa.array(rng.normal(size=rows))
    return pa.table(data)


def eval_table(run_id: str, seeds: int, updates: int, every: int,
               rng: np.random.Generator) -> pa.Table:
    """Periodic evaluations: a row per seed x evaluation."""
    points = np.arange(every - 1, updates, every)
    return pa.table({"run_id": pa.array([run_id] * seeds * len(points)),
                     "seed": pa.array(np.repeat(np.arange(seeds), len(points))),
                     "update": pa.array(np.tile(points, seeds)),
                     "env_steps": pa.array(np.tile((points + 1) * 512, seeds)),
                     "eval_return": pa.array(rng.normal(100, 20, seeds * len(points))),
                     "eval_return_std": pa.array(rng.uniform(0, 5, seeds * len(points)))})


def write_run(root: Path, index: int, seeds: int, chunks: int, updates_per_chunk: int) -> str:
    """One finished run folder, as the store writes it (``run.json`` last, with the metric
    names and the writer's check of its files, `jaxrl.runs.kept_checks.writer_record`, as
    `jaxrl.runs.store.Run.finish` leaves it). Returns its run id."""
    algo = list(ALGOS)[index % len(ALGOS)]
    env = ENVS[(index // len(ALGOS)) % len(ENVS)]
    updates = chunks * updates_per_chunk
    meta = run_meta(index, algo, env, seeds, updates * 512)
    meta["metric_names"] = sorted(ALGOS[algo])
    folder = root / meta["run_id"]
    (folder / "metrics").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(index)
    (folder / "code.diff").write_text("")
    for c in range(chunks):
        table = chunk_table(meta["run_id"], ALGOS[algo], seeds, c * updates_per_chunk,
                            updates_per_chunk, rng)
        pq.write_table(table, folder / "metrics" / f"chunk-{c:05d}.parquet")
    pq.write_table(eval_table(meta["run_id"], seeds, updates, updates_per_chunk, rng),
                   folder / "evaluations.parquet")
    (folder / "report.md").write_text(f"# {meta['run_id']}\n\nsynthetic run\n")
    meta[CHECKED_FIELD] = writer_record(folder, meta)
    (folder / "run.json").write_text(json.dumps(meta, indent=2))
    return meta["run_id"]


def _write_one(args: tuple) -> None:
    write_run(*args)


def generate(root: Path, runs: int, seeds: int, chunks: int, updates_per_chunk: int,
             workers: int) -> None:
    root.mkdir(parents=True, exist_ok=True)
    jobs = [(root, i, seeds, chunks, updates_per_chunk) for i in range(runs)]
    with Pool(workers) as pool:
        for done, _ in enumerate(pool.imap_unordered(_write_one, jobs, chunksize=64), 1):
            if done % 1000 == 0:
                print(f"  {done} runs written", flush=True)


AGGREGATE = ("SELECT algo, count(*) AS n, avg(episode_return_mean) AS ret, "
             "max(update) AS last_update FROM metrics JOIN runs USING (run_id) GROUP BY algo "
             "ORDER BY algo")


def timed_cli(argv: list[str]) -> tuple[float, float, str]:
    """One ``jaxrl`` command in a fresh process: its wall seconds, its CPU seconds (user +
    system: close to the wall time it would take on an idle machine, when it runs on one
    core) and its last output line."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "jaxrl.cli", *argv], capture_output=True,
                          text=True, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return wall, cpu, proc.stdout.strip().splitlines()[-1]


def timed(fn, *args) -> float:
    """Wall seconds of one call."""
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def measure(root: Path, repeats: int = 3) -> None:
    """Time the CLI in fresh processes (Python start and imports included; the first call
    builds the catalog if the store has none), then the same work in this process."""
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for i in range(repeats):
        ls_wall, ls_cpu, _ = timed_cli(["runs", "--runs-dir", str(root), "ls"])
        sql_wall, sql_cpu, line = timed_cli(["runs", "--runs-dir", str(root), "sql", AGGREGATE])
        print(f"CLI call {i + 1}: runs ls {ls_wall:.2f} s wall ({ls_cpu:.2f} s CPU) | runs sql "
              f"aggregate {sql_wall:.2f} s wall ({sql_cpu:.2f} s CPU) | last row: {line.strip()}",
              flush=True)
    wall, cpu, _ = timed_cli(["--help"])
    print(f"jaxrl --help (python start, the CLI parser; no JAX, pandas or Arrow): {wall:.2f} s wall "
          f"({cpu:.2f} s CPU)")
    store = RunStore(root)
    for _ in range(repeats):
        print(f"in-process: catalog refresh {timed(catalog.load, root):.2f} s | "
              f"query.ls {timed(query.ls, store):.2f} s | "
              f"query.sql aggregate {timed(query.sql, AGGREGATE, store):.2f} s", flush=True)
    print(f"load average {os.getloadavg()[0]:.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path)
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--chunks", type=int, default=5)
    parser.add_argument("--updates-per-chunk", type=int, default=50)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--measure", action="store_true", help="time the queries afterwards")
    parser.add_argument("--measure-only", action="store_true", help="do not write runs")
    args = parser.parse_args()
    if not args.measure_only:
        start = time.perf_counter()
        generate(args.root, args.runs, args.seeds, args.chunks, args.updates_per_chunk,
                 args.workers)
        print(f"wrote {args.runs} runs under {args.root} in {time.perf_counter() - start:.0f} s")
    if args.measure or args.measure_only:
        measure(args.root)


if __name__ == "__main__":
    main()

"""How long the host works between two chunks of a stored run, against the chunk's own time.

A run's loop, per chunk: run the jitted chunk and bring its metrics to the host (the chunk's
time, which `run_seconds` counts), then write them to the run store, check them (NaN guard) and
update the progress bar. That host work is the same on any device; on a GPU the chunk shrinks
by its speed-up, so if the next chunk waited for the host, the share of the wall the device
idles would grow by as much. Until commit dee602f it did wait; since, the loop starts the next
chunk before the host's work (benchmarks/chunk-host-cpu/NOTES.md).

This trains through `jaxrl.api.train` (the store on, as a user's run has it, no evaluation) and
reports, per chunk after the first, the wall between two consecutive chunks' ends, the chunk's
own time and the rest (the host's; about 0 by construction since chunks start ahead, as a
chunk's own time then counts from the previous chunk's end: the wall is the measure). The
host's work alone (`host_work`) is timed apart for 16 to 2,048 seeds:

    JAXRL_CPU_DEVICES=1 python experiments/chunk_host_time.py OUT_JSON [ALGO ENV SEEDS STEPS]
"""

import json
import sys
import tempfile
import time

import numpy as np

from jaxrl import api
from jaxrl.parts.diagnostics import first_non_finite
from jaxrl.runs.store import RunStore


def measure(algo: str, env: str, seeds: int, steps: int, runs_dir: str) -> dict:
    ends: list[float] = []
    own: list[float] = []
    last_steps = [0.0]

    def on_chunk(record: dict) -> None:
        ends.append(time.perf_counter())
        metrics = record["metrics"]
        steps_now = float(np.asarray(metrics["env_steps"])[0, -1])
        per_seed, last_steps[0] = steps_now - last_steps[0], steps_now
        own.append(seeds * per_seed / float(np.asarray(metrics["env_steps_per_second"]).flat[0]))

    result = api.train(algo, env, seeds=seeds, total_steps=steps, runs_dir=runs_dir,
                       progress=False, on_chunk=on_chunk, eval_episodes=0)
    walls = np.diff(ends)[1:]  # chunk c's end to chunk c+1's end, from the second chunk on
    owns = np.asarray(own[2:])
    host = walls - owns
    return {"algo": algo, "env": env, "seeds": seeds, "steps_per_seed": steps,
            "chunks": len(ends), "run_id": getattr(result, "run_id", None),
            "median_wall_ms": round(1e3 * float(np.median(walls)), 2),
            "median_chunk_ms": round(1e3 * float(np.median(owns)), 2),
            "median_host_ms": round(1e3 * float(np.median(host)), 2),
            "host_share": round(float(np.sum(host) / np.sum(walls)), 4)}


def host_work(seeds: int, updates: int, runs_dir: str, names: int = 24, rounds: int = 5
              ) -> dict:
    """The host's work for one chunk of ``seeds`` x ``updates`` alone, on synthetic metrics
    (``names`` of them, as PPO's basic level logs): the run store's write and the NaN guard's
    scan, best of ``rounds``. For member counts whose chunks take minutes on a CPU."""
    rng = np.random.default_rng(0)
    metrics = {f"metric_{i}": rng.standard_normal((seeds, updates)).astype(np.float32)
               for i in range(names)}
    metrics["env_steps"] = np.tile(np.arange(1, updates + 1, dtype=np.float32), (seeds, 1))
    run = RunStore(runs_dir).new_run("ppo", "CartPole-v1", {}, seeds, updates)
    best = float("inf")
    for r in range(rounds):
        start = time.perf_counter()
        run.write_chunk(r, metrics, r * updates)
        first_non_finite(metrics)
        best = min(best, time.perf_counter() - start)
    return {"seeds": seeds, "updates_per_chunk": updates, "metrics": len(metrics),
            "host_ms": round(1e3 * best, 2)}


def main() -> None:
    out = sys.argv[1]
    cases = [tuple(sys.argv[2:6])] if len(sys.argv) > 5 else [
        ("ppo", "CartPole-v1", "16", "400000"), ("ppo", "CartPole-v1", "64", "200000")]
    rows = []
    with tempfile.TemporaryDirectory() as runs_dir:
        for algo, env, seeds, steps in cases:
            row = measure(algo, env, int(seeds), int(steps), runs_dir)
            print(json.dumps(row), flush=True)
            rows.append(row)
        for seeds in (16, 64, 256, 2048):
            row = host_work(seeds, 50, runs_dir)
            print(json.dumps(row), flush=True)
            rows.append(row)
    with open(out, "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()

"""What the diagnostics levels and the periodic evaluation cost inside a timed run, measured
apart on this CPU: each workload trained with ``verbosity`` basic, debug and full, and with
evaluation off (``eval_episodes=0``), the variants in turn (A B C D, A B C D, ...) for
``ROUNDS`` rounds on one JAX device, each run's env-steps/s over its run seconds (compile
excluded; the evaluation program's time is inside run seconds when it runs).

    JAXRL_CPU_DEVICES=1 python experiments/overhead_costs.py benchmarks/overhead-cpu
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import jax
import numpy as np

import jaxrl

WORKLOADS = {  # name: (algo, env, seeds, total steps per seed, config overrides)
    "ppo-cartpole": ("ppo", "CartPole-v1", 16, 200_000, {}),
    "ppo-breakout-minatar": ("ppo", "gymnax:Breakout-MinAtar", 8, 50_000, {}),
    "dqn-cartpole": ("dqn", "CartPole-v1", 4, 20_000, {}),
}
VARIANTS = {  # name: (verbosity, evaluation episodes); eval default: the engine's (~10 evals)
    "basic": ("basic", None), "debug": ("debug", None), "full": ("full", None),
    "basic, no evaluation": ("basic", 0),
}
ROUNDS = 3


def one(workload: tuple, verbosity: str, eval_episodes: int | None, runs: str) -> dict:
    algo, env, seeds, steps, config = workload
    extra = {} if eval_episodes is None else {"eval_episodes": eval_episodes}
    result = jaxrl.train(algo, env, seeds=seeds, total_steps=steps, progress=False,
                         runs_dir=runs, verbosity=verbosity, **extra, **config)
    return {"run_seconds": result.run_seconds, "compile_seconds": result.compile_seconds,
            "env_steps_per_second": result.env_steps_per_second,
            "metrics": len(result.metrics.columns)}


def main(out: str) -> None:
    runs = tempfile.mkdtemp(prefix="overhead-")
    rows = []
    for name, workload in WORKLOADS.items():
        got = {v: [] for v in VARIANTS}
        for _ in range(ROUNDS):
            for variant, (verbosity, episodes) in VARIANTS.items():
                got[variant].append(one(workload, verbosity, episodes, runs))
        base = float(np.median([g["env_steps_per_second"] for g in got["basic"]]))
        for variant, results in got.items():
            rate = float(np.median([g["env_steps_per_second"] for g in results]))
            rows.append({"workload": name, "variant": variant, "rounds": results,
                         "median_env_steps_per_second": rate,
                         "cost_vs_basic": base / rate - 1.0,
                         "metrics_columns": results[0]["metrics"]})
            print(f"{name:22s} {variant:22s} {rate:10,.0f} env-steps/s "
                  f"({base / rate - 1.0:+.1%} time vs basic)", flush=True)
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    (target / "results.json").write_text(json.dumps({
        "command": "JAXRL_CPU_DEVICES=1 python experiments/overhead_costs.py " + out,
        "devices": str(jax.devices()), "jax": jax.__version__, "rounds": ROUNDS,
        "workloads": {k: list(map(str, v)) for k, v in WORKLOADS.items()},
        "load_average_at_end": os.getloadavg(), "rows": rows}, indent=1))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "benchmarks/overhead-cpu")

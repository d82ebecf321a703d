"""A search against the usual ways: TPE trials trained a batch per program, the same trials as
separate `jaxrl train` processes (a few timed, the rest extrapolated, and said so), and a grid
of the same size as one sweep; then the search's winner re-run on fresh seeds.

    .venv/bin/python experiments/search_study.py --env CartPole-v1 --total-steps 100000
    .venv/bin/python experiments/search_study.py --env gymnax:Breakout-MinAtar --total-steps 1000000

Writes ``benchmarks/search-<device>/<env>.json``: the wall time, the best objective and the
compile count of each way, the per-trial table, and the winner's per-seed returns in the search
and on fresh seeds. The objective is the IQM over seeds of the final evaluation return.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SPACE = {"learning_rate": "loguniform(1e-4, 3e-3)", "ent_coef": "uniform(0, 0.05)"}
GRID_LR = np.geomspace(1e-4, 3e-3, 8)
GRID_ENT = np.linspace(0.0, 0.05, 8)


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def separate_processes(args, configs: list[dict], runs_dir: str) -> list[dict]:
    """Each config as its own `jaxrl train` process (as a user would run a trial), timed."""
    out = []
    for config in configs:
        sets = [x for k, v in config.items() for x in ("--set", f"{k}={v}")]
        cmd = [sys.executable, "-m", "jaxrl.cli", "train", args.algo, "--env", args.env,
               "--seeds", str(args.seeds), "--total-steps", str(args.total_steps),
               "--runs-dir", runs_dir, "--no-progress", *sets]
        _, seconds = timed(lambda cmd=cmd: subprocess.run(cmd, check=True,
                                                          capture_output=True))
        out.append({"config": config, "wall_seconds": round(seconds, 2)})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--algo", default="ppo")
    ap.add_argument("--env", default="CartPole-v1")
    ap.add_argument("--total-steps", type=int, default=100_000)
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--trials", type=int, default=64)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--separate", type=int, default=4, help="trials timed as separate processes")
    ap.add_argument("--fresh-seeds", type=int, default=16)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)

    import jax

    import jaxrl
    from jaxrl.engine import programs

    device = jax.devices()[0].platform
    out = args.out or Path(f"benchmarks/search-{device}/{args.env.replace(':', '-')}.json")
    runs = tempfile.mkdtemp(prefix="search-study-")
    common = dict(seeds=args.seeds, total_steps=args.total_steps, progress=False, runs_dir=runs)
    compiled = programs.COMPILED["chunk"]
    found, search_s = timed(lambda: jaxrl.search(args.algo, args.env, space=SPACE,
                                                 trials=args.trials, batch=args.batch,
                                                 **common))
    search_compiles = programs.COMPILED["chunk"] - compiled
    grid = [{"learning_rate": float(lr), "ent_coef": float(e)} for lr in GRID_LR
            for e in GRID_ENT][:args.trials]
    compiled = programs.COMPILED["chunk"]
    swept, grid_s = timed(lambda: jaxrl.sweep(args.algo, args.env, configs=grid,
                                              keep_results=False, **common))
    grid_compiles = programs.COMPILED["chunk"] - compiled
    sample = [dict(r) for r in found.table[list(SPACE)].head(args.separate).to_dict("records")]
    separate = separate_processes(args, sample, runs)
    per_trial = float(np.median([s["wall_seconds"] for s in separate]))
    fresh = jaxrl.train(args.algo, args.env, seeds=args.fresh_seeds,
                        total_steps=args.total_steps, seed=1000, progress=False, store=False,
                        **found.best)
    record = {
        "what": __doc__.split("\n\n")[0], "date": time.strftime("%Y-%m-%d"), "device": device,
        "algo": args.algo, "env": args.env, "total_steps": args.total_steps,
        "seeds": args.seeds, "trials": args.trials, "batch": args.batch, "space": SPACE,
        "search": {"wall_seconds": round(search_s, 1), "best": found.best,
                   "best_value": found.best_value, "chunk_compiles": search_compiles,
                   "table": found.table.to_dict("records")},
        "grid": {"wall_seconds": round(grid_s, 1), "configs": len(grid),
                 "best_value": float(swept.table["iqm"].max()),
                 "best": grid[int(swept.table["config"].iloc[0])],
                 "chunk_compiles": grid_compiles},
        "separate_processes": {"timed": separate, "median_seconds_per_trial": per_trial,
                               "extrapolated_seconds_for_all_trials": round(
                                   per_trial * args.trials, 1),
                               "note": f"{len(separate)} of the {args.trials} trials run as "
                                       f"separate `jaxrl train` processes; the whole is their "
                                       f"median times {args.trials}, not measured"},
        "winner_on_fresh_seeds": {"seed": 1000, "seeds": args.fresh_seeds,
                                  "final_eval_return": np.asarray(
                                      fresh.final_eval_return).tolist()},
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=1, default=str) + "\n")
    print(f"search {search_s:.0f} s (best {found.best_value:.1f}); grid {grid_s:.0f} s; "
          f"separate ~{per_trial * args.trials:.0f} s; wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

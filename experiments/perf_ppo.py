"""PPO speed on CartPole-v1 at 1, 8 and 32 seeds (issue 3's reference configuration).

5 envs x 100 steps per update, 5 epochs x 5 minibatches, 64x64 tanh networks, 500k env steps
per seed. Prints compile seconds, run seconds and env-steps/s (all seeds together).
Compare with rejax as it ships (`experiments/peers/rejax_point.py ppo SEEDS 500000 --workloads
experiments/peers/rejax_cartpole.yaml`, rejax on its own pinned gymnax; see
experiments/peers/README.md) in the same minutes; docs/performance.md has the measured ratios.

Single runs on a shared VM swing by +-20%, so ``--repeats R`` runs every seed count R times
(compiled once, different root seeds) and reports the best and the median run; compare those
with ``rejax_point.py ... --repeat R`` taken in the same minutes (the two in turn).

    python experiments/perf_ppo.py [--seeds 1 8 32] [--total-steps 500000] [--repeats 3]
"""

import argparse
import json
import statistics

from jaxrl import train

CONFIG = dict(num_envs=5, num_steps=100, update_epochs=5, num_minibatches=5, hidden=(64, 64),
              activation="tanh")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--total-steps", type=int, default=500_000)
    parser.add_argument("--repeats", type=int, default=1,
                        help="runs per seed count (one compile); reports the best and the median")
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error(f"--repeats must be >= 1, got {args.repeats}")
    rows = []
    print(f"{'seeds':>5} {'compile s':>10} {'best run s':>11} {'best steps/s':>13} "
          f"{'median steps/s':>15} {'IQM return':>11} {'devices':>8}")
    for seeds in args.seeds:
        runs = [train("ppo", env="CartPole-v1", seeds=seeds, total_steps=args.total_steps,
                      progress=False, seed=r, **CONFIG) for r in range(args.repeats)]
        speeds = [r.env_steps_per_second for r in runs]
        best = max(runs, key=lambda r: r.env_steps_per_second)
        row = {"seeds": seeds, "compile_seconds": runs[0].compile_seconds,
               "run_seconds": [r.run_seconds for r in runs], "env_steps_per_second": speeds,
               "best_env_steps_per_second": max(speeds),
               "median_env_steps_per_second": statistics.median(speeds),
               "final_eval_return_iqm": [r.summary()["final_eval_return_iqm"] for r in runs],
               "devices": best.devices}
        rows.append(row)
        print(f"{seeds:>5} {row['compile_seconds']:>10.1f} {best.run_seconds:>11.1f} "
              f"{row['best_env_steps_per_second']:>13,.0f} "
              f"{row['median_env_steps_per_second']:>15,.0f} "
              f"{best.summary()['final_eval_return_iqm']:>11.1f} {best.devices:>8}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()

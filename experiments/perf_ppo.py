"""PPO speed on CartPole-v1 at 1, 8 and 32 seeds (issue 3's reference configuration).

5 envs x 100 steps per update, 5 epochs x 5 minibatches, 64x64 tanh networks, 500k env steps
per seed. Prints compile seconds, run seconds and env-steps/s (all seeds together).
For reference, rejax 0.1.3's PPO at exactly this configuration ran at about 215k (1 seed),
206k (8 seeds) and 306k (32 seeds) env-steps/s on the project's 2-core CPU machine.

    python experiments/perf_ppo.py [--seeds 1 8 32] [--total-steps 500000]
"""

import argparse
import json

from jaxrl.driver import train

CONFIG = dict(num_envs=5, num_steps=100, update_epochs=5, num_minibatches=5, hidden=(64, 64),
              activation="tanh")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--total-steps", type=int, default=500_000)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    rows = []
    print(f"{'seeds':>5} {'compile s':>10} {'run s':>8} {'env-steps/s':>12} {'IQM return':>11} "
          f"{'devices':>8}")
    for seeds in args.seeds:
        r = train("ppo", env="CartPole-v1", seeds=seeds, total_steps=args.total_steps,
                  progress=False, **CONFIG)
        s = r.summary()
        rows.append(s)
        print(f"{seeds:>5} {r.compile_seconds:>10.1f} {r.run_seconds:>8.1f} "
              f"{r.env_steps_per_second:>12,.0f} {s['final_eval_return_iqm']:>11.1f} "
              f"{r.devices:>8}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()

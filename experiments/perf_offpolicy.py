"""Off-policy speed on this machine, at 1 and 16 seeds, in the cost of rejax's shipped configs.

* DQN on CartPole-v1: 10 envs, batch 100, 5 gradient updates per env-step round, buffer 50k,
  a dueling double-Q network of 64x64 SiLU (rejax's ``configs/gymnax/cartpole.yaml``).
* SAC on Pendulum-v1: 1 env, batch 256, 1 update per env step, buffer 10k, 64x64 SiLU actor
  and critics (rejax's ``configs/gymnax/pendulum.yaml``).

Prints compile seconds, run seconds and env-steps/s (all seeds together). Time rejax as it
ships beside it in the same minutes (DQN: ``experiments/peers/rejax_point.py dqn-cartpole``,
see experiments/peers/README.md; docs/performance.md's figures were taken with the old harness's
``bench_rejax.py dqn|sac`` on those config sections); docs/performance.md has the measured ratios.

    python experiments/perf_offpolicy.py [--seeds 1 16] [--dqn-steps 100000] [--sac-steps 20000]
"""

import argparse
import json

from jaxrl import train

NET = dict(hidden=(64, 64), activation="silu")
DQN = dict(num_envs=10, batch_size=100, gradient_steps=5, buffer_size=50_000, dueling=True,
           double_q=True, log_interval=50, **NET)
SAC = dict(num_envs=1, batch_size=256, gradient_steps=1, buffer_size=10_000, log_interval=200,
           **NET)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 16])
    parser.add_argument("--dqn-steps", type=int, default=100_000)
    parser.add_argument("--sac-steps", type=int, default=20_000)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    rows = []
    print(f"{'algo':>5} {'seeds':>5} {'compile s':>10} {'run s':>8} {'env-steps/s':>12}")
    for algo, env, steps, config in (("dqn", "CartPole-v1", args.dqn_steps, DQN),
                                     ("sac", "Pendulum-v1", args.sac_steps, SAC)):
        for seeds in args.seeds:
            r = train(algo, env=env, seeds=seeds, total_steps=steps, progress=False, **config)
            rows.append({**r.summary(), "config": config})
            print(f"{algo:>5} {seeds:>5} {r.compile_seconds:>10.1f} {r.run_seconds:>8.1f} "
                  f"{r.env_steps_per_second:>12,.0f}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()

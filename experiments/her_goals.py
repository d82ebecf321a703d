"""Hindsight Experience Replay on the goal envs: the HER paper's contrast on bit flipping, and a
continuous reaching task.

    python experiments/her_goals.py [--arms bitflip,reach] [--seeds 4] [--bits 25] [--json P]

* ``bitflip``: DQN on ``goal:BitFlip`` with ``n_bits`` bits, with HER ("future", k = 4) and
  without (the paper's Figure 1 contrast: without HER the reward is almost never seen).
* ``reach``: SAC on ``goal:PointReach`` with HER and without.

Success rate: after training, each seed's deterministic policy plays 128 fresh episodes
(`jaxrl.trained.demonstrations.play`); an episode succeeded when it reached its goal before the step
limit (return above ``-max_steps``, `envs.goals.succeeded`). Prints the success rate per seed
and its mean, with training time; every run is recorded in the run store.
"""

import argparse

import jax
import numpy as np

import jaxrl
from envs.goals import succeeded
from jaxrl.runs.provenance import measured_here, run_facts, write_results
from jaxrl.trained.demonstrations import play

EPISODES = 128

ARMS = {
    # DQN on bit flipping: one hidden layer of 256 (the paper's), gamma 0.98, epsilon 0.2 -> 0.05
    "bitflip": ("dqn", "goal:BitFlip", 400_000, dict(
        buffer_size=400_000, learning_starts=1_000, hidden=(256,), gamma=0.98,
        eps_decay_fraction=0.1, eps_end=0.05, learning_rate=1e-3, target_update_period=100,
        num_envs=8)),
    # SAC on the reaching task: sparse reward, 50-step episodes
    "reach": ("sac", "goal:PointReach", 100_000, dict(
        buffer_size=100_000, learning_starts=1_000, gamma=0.98, num_envs=4)),
}


def success_rate(run_id: str, seeds: int, max_steps: int) -> list[float]:
    stored = jaxrl.load_policy(run_id)
    rates = []
    for seed in range(seeds):
        played = play(stored, seed, EPISODES, jax.random.key(1000 + seed))
        rates.append(float(np.mean(succeeded(played["returns"], max_steps))))
    return rates


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--arms", default="bitflip,reach")
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--bits", type=int, default=25)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    about = measured_here()  # the code this process loaded, as it starts
    report = {}
    for arm in args.arms.split(","):
        algo, env, steps, config = ARMS[arm]
        env_kwargs = {"n_bits": args.bits} if arm == "bitflip" else None
        max_steps = args.bits if arm == "bitflip" else 50
        for her in ("future", "none"):
            r = jaxrl.train(algo, env=env, seeds=args.seeds, total_steps=steps, progress=False,
                            env_kwargs=env_kwargs, her=her, meta={"experiment": "her_goals"},
                            **config)
            rates = success_rate(r.run_id, args.seeds, max_steps)
            label = f"{arm} {algo} her={her}"
            print(f"{label:>28}: success {np.mean(rates):.3f} (per seed "
                  f"{' '.join(f'{x:.2f}' for x in rates)}); {steps:,} steps per seed, run "
                  f"{r.run_seconds:.0f} s, compile {r.compile_seconds:.1f} s, run {r.run_id}",
                  flush=True)
            report[label] = {"success_per_seed": rates, "success_mean": float(np.mean(rates)),
                             "final_eval_return": [float(x) for x in r.final_eval_return],
                             **run_facts(r)}
    write_results(args.json, about, results=report)


if __name__ == "__main__":
    main()

"""The return of a uniform random policy on envs, the floor a learning curve starts from, and the
env's own stepping rate under that policy (no agent): a bench's notes set both beside its runs.

    python experiments/random_floor.py playground:CartpoleBalance playground:FingerSpin \
        --episodes 16 --json benchmarks/playground-cpu/random_floor.json

Each env plays ``--episodes`` whole episodes at once (vmapped, one per env, to its time limit
or its end); the return is each episode's sum of rewards, as the episode statistics count it.
"""

from __future__ import annotations

import argparse
import json
import time

import jax
import jax.numpy as jnp
import numpy as np

import envs
from envs.wrappers import EpisodeStatistics


def random_returns(name: str, episodes: int, seed: int = 0) -> dict:
    """``{"env", "episodes", "returns", "mean", "std", "env_steps_per_second"}`` of uniform
    random actions over ``episodes`` episodes (the rate from a second, compiled run)."""
    base, params = envs.make(name)
    env = EpisodeStatistics(base)
    space = env.action_space(params)
    limit = int(params.episode_length)

    def play(key):
        keys = jax.random.split(key, episodes)
        _, state = jax.vmap(env.reset, in_axes=(0, None))(keys, params)

        def body(carry, k):
            state, total, done = carry
            action = jax.vmap(space.sample)(jax.random.split(k, episodes))
            _, state, _, _, _, info = jax.vmap(env.step, in_axes=(0, 0, 0, None))(
                jax.random.split(jax.random.fold_in(k, 1), episodes), state, action, params)
            ended = info["episode_done"] & ~done
            total = jnp.where(ended, info["episode_return"], total)
            return (state, total, done | info["episode_done"]), None

        init = (state, jnp.zeros(episodes), jnp.zeros(episodes, bool))
        (_, total, done), _ = jax.lax.scan(body, init, jax.random.split(key, limit))
        return total, done

    run = jax.jit(play)
    total, done = run(jax.random.key(seed))
    jax.block_until_ready(total)
    start = time.perf_counter()
    jax.block_until_ready(run(jax.random.key(seed + 1)))
    rate = episodes * limit / (time.perf_counter() - start)
    returns = np.asarray(total)[np.asarray(done)]
    return {"env": name, "episodes": int(returns.size), "returns": returns.round(2).tolist(),
            "mean": float(returns.mean()), "std": float(returns.std()),
            "env_steps_per_second": round(rate)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("envs", nargs="+")
    parser.add_argument("--episodes", type=int, default=16)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    rows = []
    for name in args.envs:
        row = random_returns(name, args.episodes)
        rows.append(row)
        print(f"{name}: random policy {row['mean']:.1f} +- {row['std']:.1f} over "
              f"{row['episodes']} episodes; {row['env_steps_per_second']:,} env-steps/s "
              f"({args.episodes} envs)", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": jax.devices()[0].device_kind, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()

"""How long brax's ant survives under zero-mean Gaussian actions of a given spread.

A fresh policy in jaxrl's brax defaults is a Gaussian with log std 0 (std 1) around a mean near
zero, its actions clipped to [-1, 1]; Spinning Up starts at log std -0.5. brax's ant ends an
episode when its torso leaves the healthy height range (0.2, 1.0). This plays, for each log std,
``--envs`` episodes of actions drawn from N(0, std^2) and clipped, and records each episode's
length (capped at the time limit), whether it ended above or below the range, and its return
with the control cost inside it. brax's ant pays a healthy reward of 1.0 a step and charges
0.5 * sum(action^2) for control, so noise wide enough to cost more than 1.0 a step makes every
step of a still episode lose reward: the per-step figures say at which spreads that holds.

    python experiments/ant_noise_lengths.py --out benchmarks/mujoco-cpu/ant-noise-lengths.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from envs.brax_adapter import brax_envs

LOG_STDS = (0.0, -0.5, -0.7, -1.0)
TIME_LIMIT = 1000


def first_episodes(log_std: float, envs: int, seed: int) -> dict:
    """Each env's first episode under clipped N(0, exp(log_std)^2) actions: its length (at most
    the time limit), the torso height at its end, its return and its summed control cost;
    shapes ``(envs,)``."""
    env = brax_envs().get_environment("ant", backend="mjx")
    low, high = 0.2, 1.0  # brax's ant default healthy_z_range

    def one(key):
        reset_key, act_key = jax.random.split(key)
        state = env.reset(reset_key)

        def step(carry, k):
            state, length, ended, z_end, ret, ctrl = carry
            action = jnp.clip(jnp.exp(log_std) * jax.random.normal(k, (env.action_size,)), -1, 1)
            nxt = env.step(state, action)
            z = nxt.pipeline_state.x.pos[0, 2]
            done = nxt.done > 0
            length = jnp.where(ended, length, length + 1)
            z_end = jnp.where(ended, z_end, z)
            ret = jnp.where(ended, ret, ret + nxt.reward)
            ctrl = jnp.where(ended, ctrl, ctrl - nxt.metrics["reward_ctrl"])
            return (nxt, length, ended | done, z_end, ret, ctrl), None

        init = (state, jnp.int32(0), jnp.bool_(False), jnp.float32(0.75), jnp.float32(0.0),
                jnp.float32(0.0))
        (_, length, ended, z_end, ret, ctrl), _ = jax.lax.scan(
            step, init, jax.random.split(act_key, TIME_LIMIT))
        return length, ended, z_end, ret, ctrl

    keys = jax.random.split(jax.random.PRNGKey(seed), envs)
    length, ended, z_end, ret, ctrl = map(np.asarray, jax.jit(jax.vmap(one))(keys))
    steps = float(np.sum(length))
    return {"log_std": log_std, "std": float(np.exp(log_std)),
            "lengths": length.tolist(),
            "returns": [round(float(r), 4) for r in ret],
            "median_length": float(np.median(length)),
            "reward_per_step": float(np.sum(ret) / steps),
            "ctrl_cost_per_step": float(np.sum(ctrl) / steps),
            "ended_above": int(np.sum(ended & (z_end > high))),
            "ended_below": int(np.sum(ended & (z_end < low))),
            "reached_time_limit": int(np.sum(~ended))}


def reward_weights() -> dict:
    """The two weights of brax's ant reward that the per-step figures turn on, read off the env."""
    env = brax_envs().get_environment("ant", backend="mjx")
    return {"healthy_reward": float(env._healthy_reward),
            "ctrl_cost_weight": float(env._ctrl_cost_weight)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, default=64)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    rows = [first_episodes(s, args.envs, args.seed) for s in LOG_STDS]
    for r in rows:
        print(f"log std {r['log_std']:+.1f}: median length {r['median_length']:.1f}, "
              f"reward {r['reward_per_step']:+.2f} a step (control cost "
              f"{r['ctrl_cost_per_step']:.2f}), "
              f"ended above {r['ended_above']}, below {r['ended_below']}, "
              f"at the time limit {r['reached_time_limit']} of {args.envs}")
    args.out.write_text(json.dumps({"env": "brax:ant", "backend": "mjx", "envs": args.envs,
                                    "seed": args.seed, "time_limit": TIME_LIMIT,
                                    "healthy_z_range": [0.2, 1.0], **reward_weights(),
                                    "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()

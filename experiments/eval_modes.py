"""Why a policy's deterministic evaluation and its training return disagree: train ``--seeds``
seeds of ``--algo`` on ``--env`` (not stored), then evaluate every seed both ways through the
engine's own evaluation (`jaxrl.parts.evaluate.evaluate`: the most probable action, and a sampled
one), and follow the deterministic policy from a few start states, printing at each step the
action it takes, whether the observation changed, and the probability the policy gives that
action (from 1,000 samples). A policy that stays on one state with its argmax at about one
half is stuck on an action that does nothing, a fault of argmax evaluation, not of the env.

    python experiments/eval_modes.py --env navix:Navix-DoorKey-5x5-v0 --steps 1048576 \
        --json benchmarks/jaxenvs-cpu/navix_eval_modes.json
"""

from __future__ import annotations

import argparse
import dataclasses
import json

import jax
import jax.numpy as jnp
import numpy as np

import jaxrl
from jaxrl.algos.acting import Policy
from jaxrl.parts.evaluate import evaluate


def with_mode(policy: Policy, deterministic: bool) -> Policy:
    """``policy`` with its mode fixed to ``deterministic``."""
    return dataclasses.replace(
        policy, step=lambda s, m, o, k, _: policy.step(s, m, o, k, deterministic))


def action_probability(policy: Policy, state, memory, obs, samples: int = 1000) -> np.ndarray:
    """The policy's action frequencies at ``obs`` (``[actions]``, from ``samples`` draws)."""
    keys = jax.random.split(jax.random.key(0), samples)
    drawn = jax.vmap(lambda k: policy.step(state, memory, obs[None], k, False)[1][0])(keys)
    return np.bincount(np.asarray(drawn).ravel(), minlength=2) / samples


def follow(stored, seed: int, start: int, steps: int) -> list[dict]:
    """The deterministic policy's first ``steps`` steps from start state ``start``."""
    env, params, policy = stored.env, stored.env_params, stored.policy
    state = stored.seed_state(seed)
    obs, env_state = env.reset(jax.random.key(start), params)
    memory, trace = policy.initial(1), []
    for t in range(steps):
        freq = action_probability(policy, state, memory, obs)
        memory, action = policy.step(state, memory, obs[None], jax.random.key(t), True)
        nxt, env_state, reward, term, trunc, _ = env.step(jax.random.key(10_000 + t), env_state,
                                                           action[0], params)
        trace.append({"action": int(action[0]), "obs_changed": bool(jnp.any(nxt != obs)),
                      "p_action": round(float(freq[int(action[0])]), 3),
                      "reward": float(reward), "done": bool(term | trunc)})
        obs = nxt
        if term | trunc:
            break
    return trace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--algo", default="ppo")
    parser.add_argument("--env", required=True)
    parser.add_argument("--steps", type=int, default=1_048_576)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--episodes", type=int, default=256)
    parser.add_argument("--starts", type=int, default=3)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    result = jaxrl.train(args.algo, args.env, seeds=args.seeds, total_steps=args.steps,
                         store=False, progress=False)
    stored = result.policy()
    rows = []
    for seed in range(args.seeds):
        state = stored.seed_state(seed)
        row = {"seed": seed}
        for name, det in (("deterministic", True), ("sampled", False)):
            policy = with_mode(stored.policy, det)
            ret = jax.jit(lambda k, p=policy: evaluate(state, k, p, stored.env, stored.env_params,
                                                       args.episodes, 100))(jax.random.key(1))
            row[name] = float(jnp.nanmean(ret))
        row["traces"] = [follow(stored, seed, s, 12) for s in range(args.starts)]
        rows.append(row)
        print(f"seed {seed}: deterministic {row['deterministic']:.3f}, sampled "
              f"{row['sampled']:.3f} over {args.episodes} episodes")
        for s, trace in enumerate(row["traces"]):
            print(f"  start {s}: (action, obs changed, p) " + " ".join(
                f"({x['action']},{'y' if x['obs_changed'] else 'n'},{x['p_action']:.2f})"
                for x in trace))
    out = {"algo": args.algo, "env": args.env, "steps": args.steps, "episodes": args.episodes,
           "final_eval_return": np.asarray(result.final_eval_return).tolist(), "rows": rows}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()

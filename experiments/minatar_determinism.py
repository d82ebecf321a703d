"""Does a deterministic policy score the same on every episode of gymnax's MinAtar games?

The MinAtar paper's environments repeat the agent's previous action with probability 0.1
(sticky actions, ``minatar.Environment(sticky_action_prob=0.1)``); gymnax's ports have no such
option in their ``EnvParams``; jaxrl's env option ``sticky_action_prob`` adds them. This script measures how much randomness is left in the games jaxrl trains on
(``envs.make("gymnax:GAME-MinAtar")``, gymnax's default params) by playing fixed
deterministic policies for ``--episodes`` episodes, each with its own reset and step keys, and
counting the distinct returns and action sequences:

* ``const:a``: always action ``a`` (one policy per action of the game's action set);
* ``cycle:i``: an open-loop sequence of actions repeated every 8 steps (``cycle:0`` is
  ``0, 1, ..., n-1``; the others are drawn once from a fixed seed);
* ``linear:i``: ``argmax(W_i @ obs)`` with ``W_i`` drawn once from a fixed seed, a stand-in for
  a trained greedy Q-network or the mode of a policy network (a deterministic function of the
  observation).

Every policy is ``argmax(W @ obs + b + c[t % 8])`` for its own ``W, b, c``.

With ``--sticky 0.1`` (repeatable) the same policies are also played with jaxrl's
``sticky_action_prob`` at that probability, the MinAtar paper's setting.

An episode ends at its first ``terminated`` or ``truncated`` step (gymnax's time limits:
1,000 steps, Freeway's 2,500), or after ``--max-steps`` steps where that is given and shorter.
Policies and episodes are ``vmap``-ed, so each (game, sticky probability) pair compiles one
program.

    XLA_FLAGS=--xla_force_host_platform_device_count=1 taskset -c 1 \\
        python experiments/minatar_determinism.py --out benchmarks/minatar-cpu/determinism.json
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from importlib import metadata
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import envs

GAMES = ("SpaceInvaders-MinAtar", "Breakout-MinAtar", "Asterix-MinAtar", "Freeway-MinAtar")
PERIOD = 8  # length of the open-loop action cycles


def make_env(game: str, sticky: float):
    """jaxrl's env for ``game``; with ``sticky > 0``, through jaxrl's sticky-action option
    (`envs.wrappers.StickyActions`) at that probability."""
    return envs.make(f"gymnax:{game}", sticky_action_prob=sticky if sticky > 0 else None)


def policies(n_actions: int, obs_dim: int, n_cycle: int, n_linear: int, seed: int):
    """``(names, weights [P, A, D], biases [P, A], cycles [P, PERIOD, A])``: constant-action
    policies, open-loop cycles, then fixed linear ones; policy ``p`` acts
    ``argmax(weights[p] @ obs + biases[p] + cycles[p, t % PERIOD])``."""
    eye = np.eye(n_actions, dtype=np.float32)
    zero_w = np.zeros((n_actions, obs_dim), np.float32)
    zero_b = np.zeros(n_actions, np.float32)
    zero_c = np.zeros((PERIOD, n_actions), np.float32)
    rows = [(f"const:{a}", zero_w, eye[a], zero_c) for a in range(n_actions)]
    rng = np.random.default_rng(seed)
    for i in range(n_cycle):
        seq = np.arange(PERIOD) % n_actions if i == 0 else rng.integers(0, n_actions, PERIOD)
        rows.append((f"cycle:{i}", zero_w, zero_b, eye[seq]))
    for i in range(n_linear):
        w = rng.standard_normal((n_actions, obs_dim)).astype(np.float32)
        rows.append((f"linear:{i}", w, zero_b, zero_c))
    names = [r[0] for r in rows]
    return names, *(jnp.asarray(np.stack([r[k] for r in rows])) for k in (1, 2, 3))


def play(env, params, weights, biases, cycles, keys, max_steps: int):
    """One episode per (policy, key): returns, lengths, ended-by-env flags, action hashes."""

    def episode(w, bias, cycle, key):
        key_reset, key_steps = jax.random.split(key)
        obs, state = env.reset(key_reset, params)

        def body(carry, xs):
            t, step_key = xs
            obs, state, alive, ret, length, h = carry
            action = jnp.argmax(w @ obs.reshape(-1) + bias + cycle[t % PERIOD]).astype(jnp.int32)
            obs, state, reward, terminated, truncated, _ = env.step(step_key, state, action,
                                                                     params)
            ret = ret + jnp.where(alive, reward, 0.0)
            length = length + alive.astype(jnp.int32)
            # A running hash of the action sequence (uint32 arithmetic wraps).
            h = jnp.where(alive, h * jnp.uint32(1_000_003) + action.astype(jnp.uint32)
                          + jnp.uint32(1), h)
            alive = alive & ~(terminated | truncated)
            return (obs, state, alive, ret, length, h), None

        init = (obs, state, jnp.bool_(True), jnp.float32(0), jnp.int32(0), jnp.uint32(0))
        xs = (jnp.arange(max_steps), jax.random.split(key_steps, max_steps))
        (_, _, alive, ret, length, h), _ = jax.lax.scan(body, init, xs)
        return ret, length, ~alive, h

    over_keys = jax.vmap(episode, in_axes=(None, None, None, 0))
    return jax.jit(jax.vmap(over_keys, in_axes=(0, 0, 0, None)))(weights, biases, cycles, keys)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", nargs="+", default=list(GAMES))
    ap.add_argument("--episodes", type=int, default=16, help="episodes per policy (own keys)")
    ap.add_argument("--max-steps", type=int, default=None,
                    help="cap on an episode's steps (default: the game's own time limit)")
    ap.add_argument("--cycles", type=int, default=3, help="open-loop action cycles")
    ap.add_argument("--linear", type=int, default=3, help="fixed linear greedy policies")
    ap.add_argument("--sticky", type=float, action="append", default=None,
                    help="sticky-action probabilities to play (0 = jaxrl's env as it is); "
                         "repeatable; default: 0 and 0.1")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    stickies = args.sticky if args.sticky is not None else [0.0, 0.1]

    out = {
        "question": "do returns of a deterministic policy differ across episodes (keys) on "
                    "gymnax MinAtar, with and without sticky actions?",
        "command": " ".join(["python", "experiments/minatar_determinism.py", *sys.argv[1:]]),
        "versions": {"jax": jax.__version__, "gymnax": metadata.version("gymnax"),
                     "python": platform.python_version()},
        "episodes_per_policy": args.episodes,
        "max_steps": args.max_steps,
        "policy_kinds": {
            "const:a": "always action a",
            "cycle:i": f"an open-loop action sequence repeated every {PERIOD} steps",
            "linear:i": "argmax(W_i @ obs), W_i fixed (seeded): a deterministic function of the "
                        "observation, like a greedy Q-network",
        },
        "results": [],
    }
    base_key = jax.random.key(args.seed)
    for game in args.games:
        for sticky in stickies:
            env, params = make_env(game, sticky)
            n_actions = int(env.action_space(params).n)
            obs_dim = int(np.prod(env.observation_space(params).shape))
            names, weights, biases, cycles = policies(n_actions, obs_dim, args.cycles, args.linear, args.seed)
            limit = int(params.max_steps_in_episode)
            steps = limit if args.max_steps is None else min(limit, args.max_steps)
            keys = jax.random.split(jax.random.fold_in(base_key, len(out["results"])),
                                    args.episodes)
            t0 = time.perf_counter()
            ret, length, ended, h = jax.device_get(play(env, params, weights, biases, cycles, keys,
                                                          steps))
            secs = time.perf_counter() - t0
            rows = []
            for p, name in enumerate(names):
                rows.append({
                    "policy": name,
                    "returns": [float(x) for x in ret[p]],
                    "lengths": [int(x) for x in length[p]],
                    "ended_by_env": int(ended[p].sum()),
                    "distinct_returns": len(set(ret[p].tolist())),
                    "distinct_action_sequences": len(set(h[p].tolist())),
                    "return_mean": float(ret[p].mean()),
                    "return_std": float(ret[p].std()),
                })
            summary = {
                "game": game,
                "sticky_action_prob": sticky,
                "n_actions": n_actions,
                "max_steps_in_episode": limit,
                "steps_played_at_most": steps,
                "policies_with_one_return": sum(r["distinct_returns"] == 1 for r in rows),
                "policies": len(rows),
                "seconds": round(secs, 1),
                "per_policy": rows,
            }
            out["results"].append(summary)
            print(f"{game:24s} sticky={sticky:<4} policies with identical returns on all "
                  f"{args.episodes} episodes: {summary['policies_with_one_return']}/{len(rows)}"
                  "   distinct returns per policy: "
                  + " ".join(f"{r['policy']}={r['distinct_returns']}" for r in rows), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

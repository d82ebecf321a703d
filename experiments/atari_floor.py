"""Atari throughput against the raw ale-py XLA floor, same game, same env count, same machine.

    python experiments/atari_floor.py [--envs 16] [--steps 128] [--game Breakout] [--threads N]

Three jitted loops of ``steps`` steps over ``envs`` emulators, each timed (best of 3, after a
warm-up call): ale-py's own XLA step with random actions (the floor), jaxrl's adapter with
random actions (same-step resets, life loss, frame layout), and PPO's rollout with the atari
preset's policy (Nature CNN forward pass and sampling per step). Prints env-steps/s and the
ratios to the floor as one JSON line.
"""

from __future__ import annotations

import argparse
import json
import time

import jax
import jax.numpy as jnp


def best_rate(fn, args, frames: int, rounds: int = 3) -> float:
    jax.block_until_ready(fn(*args, jax.random.key(0)))
    best = float("inf")
    for i in range(rounds):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args, jax.random.key(i + 1)))
        best = min(best, time.perf_counter() - start)
    return frames / best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, default=16)
    parser.add_argument("--steps", type=int, default=128)
    parser.add_argument("--game", default="Breakout")
    parser.add_argument("--threads", type=int, default=None,
                        help="emulator threads per pool (default: one per usable core, as "
                             "jaxrl's adapter; 0: ale-py's own default, one per online processor)")
    args = parser.parse_args()
    n, t = args.envs, args.steps

    from ale_py.vector_env import AtariVectorEnv

    import envs
    from envs.atari import rom_name, usable_cores
    from jaxrl.algos import onpolicy, ppo

    threads = min(n, usable_cores()) if args.threads is None else args.threads
    raw = AtariVectorEnv(rom_name(args.game), num_envs=n, num_threads=threads)
    handle, reset, step = raw.xla()
    handle, _ = reset(handle, seed=0)
    actions = raw.single_action_space.n

    @jax.jit
    def floor(handle, key):
        def body(h, k):
            a = jax.random.randint(k, (n,), 0, actions).astype(jnp.int32)
            h, (_, reward, *_) = step(h, a)
            return h, reward.sum()
        return jax.lax.scan(body, handle, jax.random.split(key, t))

    env, params = envs.make(f"atari:{args.game}", num_threads=threads)
    state0 = jax.jit(lambda k: jax.vmap(env.reset)(jax.random.split(k, n))[1])(jax.random.key(9))

    @jax.jit
    def adapter(state, key):
        def body(s, k):
            a = jax.random.randint(k, (n,), 0, actions)
            _, s, reward, *_ = jax.vmap(env.step)(jax.random.split(k, n), s, a)
            return s, reward.sum()
        return jax.lax.scan(body, state, jax.random.split(key, t))

    config = ppo.default_config(f"atari:{args.game}").replace(num_envs=n, num_steps=t)
    static = config.static()
    agent = ppo.ALGORITHM.init(jax.random.key(1), env, params, config)
    network = onpolicy.make_network(static, env, params)

    @jax.jit
    def ppo_rollout(state, key):
        return onpolicy.rollout(state, key, static, env, params, network)

    rates = {"floor": best_rate(floor, (handle,), n * t),
             "adapter": best_rate(adapter, (state0,), n * t),
             "ppo_rollout": best_rate(ppo_rollout, (agent,), n * t)}
    print(json.dumps({"game": args.game, "envs": n, "steps": t, "threads": threads,
                      "devices": str(jax.devices()[0]),
                      **{f"{k}_env_steps_per_s": round(v) for k, v in rates.items()},
                      "floor_over_adapter": round(rates["floor"] / rates["adapter"], 2),
                      "floor_over_ppo_rollout": round(rates["floor"] / rates["ppo_rollout"], 2)}))


if __name__ == "__main__":
    main()

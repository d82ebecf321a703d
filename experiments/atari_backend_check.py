"""Does the Atari adapter give the same games with JAX on a GPU as with JAX on the CPU?

    python experiments/atari_backend_check.py [--game Pong] [--members 6] [--envs 8] [--steps 1000]

ale-py has separate GPU FFI targets (they copy actions to the host and frames back over a CUDA
stream), and the CPU tests never run them. This script rolls ``members x envs`` emulators for
``steps`` steps with random actions drawn from fixed keys (threefry: the same actions on every
backend), vmapped over members as the engine does, once on JAX's default backend and once in a
subprocess with ``JAX_PLATFORMS=cpu``, and compares every output exactly: rewards, terminated,
truncated, lives, game over, and an integer hash of every observation and final observation
(frames mapped back to their uint8 values). With random play a Pong game lasts about 800
steps, so 1,000 steps take every env through a game end and the same-step reset. Prints one
JSON line: the number of differing entries per output (all 0 when the backends agree) and the
steps, games and backend.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np


def rollout(game: str, members: int, envs_per_member: int, steps: int) -> dict[str, np.ndarray]:
    """``{name: [members, steps, envs]}`` int32 arrays of one jitted, member-vmapped rollout."""
    import jax
    import jax.numpy as jnp

    import envs

    env, _ = envs.make(f"atari:{game}")
    n = envs_per_member
    weights = jnp.arange(84 * 84 * 4, dtype=jnp.int32) % 65_521 + 1

    def frame_hash(obs):  # [n, 84, 84, 4] in [0, 1] -> [n] int32 (wrapping integer sums)
        pixels = jnp.round(obs * 255.0).astype(jnp.int32).reshape(n, -1)
        return (pixels * weights).sum(-1)

    def member(key):
        _, state = jax.vmap(env.reset)(jax.random.split(key, n))

        def body(state, k):
            action = jax.random.randint(k, (n,), 0, env.num_actions)
            obs, state, _, term, trunc, info = jax.vmap(env.step)(
                jax.random.split(k, n), state, action)
            out = dict(obs=frame_hash(obs), final_obs=frame_hash(info["final_observation"]),
                       reward=info["true_reward"].astype(jnp.int32), terminated=term,
                       truncated=trunc, game_over=info["game_over"], lives=state.lives)
            return state, {k: v.astype(jnp.int32) for k, v in out.items()}

        return jax.lax.scan(body, state, jax.random.split(key, steps))[1]

    keys = jax.random.split(jax.random.key(2026), members)
    out = jax.jit(jax.vmap(member))(keys)
    return {k: np.asarray(v) for k, v in out.items()} | {"backend": np.asarray(jax.default_backend())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="Pong")
    parser.add_argument("--members", type=int, default=6)
    parser.add_argument("--envs", type=int, default=8)
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--save", help=argparse.SUPPRESS)  # the CPU subprocess's output file
    args = parser.parse_args()
    shape = (args.game, args.members, args.envs, args.steps)
    if args.save:
        np.savez(args.save, **rollout(*shape))
        return
    here = rollout(*shape)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "cpu.npz")
        subprocess.run([sys.executable, __file__, "--game", args.game, "--members",
                        str(args.members), "--envs", str(args.envs), "--steps", str(args.steps),
                        "--save", path], check=True, env={**os.environ, "JAX_PLATFORMS": "cpu"})
        cpu = dict(np.load(path))
    names = [k for k in here if k != "backend"]
    print(json.dumps({
        "game": args.game, "members": args.members, "envs": args.envs, "steps": args.steps,
        "backends": [str(here["backend"]), str(cpu["backend"])],
        "games_ended": int(here["game_over"].sum()),
        "differing": {k: int((here[k] != cpu[k]).sum()) for k in names},
    }))


if __name__ == "__main__":
    main()

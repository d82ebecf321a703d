"""brax hopper's env path alone, jaxrl's against rejax's: 4 members x 32 envs (rejax's PPO
config) stepped 256 times with uniform random actions in one jitted program, no learner.
Run each side with its own venv, in turn, on one JAX device:

    JAXRL_CPU_DEVICES=1 python experiments/peers/env_step_hopper.py jaxrl [PREPARED_STARTS]
    /tmp/rejax-venv/bin/python experiments/peers/env_step_hopper.py rejax

jaxrl: ``envs.make("brax:hopper", backend="positional")`` in its episode-statistics wrapper,
stepped by ``jaxrl.parts.rollout.env_step`` (prepared starts at the family's period, or the given
one; 0: a reset at every step). rejax: its ``create_brax`` (brax's own episode and auto-reset
wrappers under gymnax's auto-reset), stepped by ``vmap(env.step)``. Prints the best of 3 runs'
env-steps/s over all members.
"""

import sys
import time

import jax

MEMBERS, ENVS, STEPS = 4, 32, 256


def jaxrl_episode(prepared_starts: int | None):
    import envs
    from envs.wrappers import EpisodeStatistics
    from jaxrl.parts.rollout import env_step, reset_envs

    kwargs = {} if prepared_starts is None else {"prepared_starts": prepared_starts}
    env, params = envs.make("brax:hopper", backend="positional", **kwargs)
    env = EpisodeStatistics(env)

    def episode(key):
        carry = reset_envs(key, env, params, ENVS)

        def body(carry, k):
            action = jax.random.uniform(k, (ENVS, 3), minval=-1, maxval=1)
            carry, step, _ = env_step(k, env, params, carry, action)
            return carry, step.reward.sum()

        return jax.lax.scan(body, carry, jax.random.split(key, STEPS))[1].sum()

    return episode


def rejax_episode():
    from rejax.compat.brax2gymnax import create_brax

    env, params = create_brax("hopper", backend="positional")

    def episode(key):
        _, state = jax.vmap(env.reset, in_axes=(0, None))(jax.random.split(key, ENVS), params)

        def body(state, k):
            action = jax.random.uniform(k, (ENVS, 3), minval=-1, maxval=1)
            _, state, reward, _, _ = jax.vmap(env.step, in_axes=(0, 0, 0, None))(
                jax.random.split(k, ENVS), state, action, params)
            return state, reward.sum()

        return jax.lax.scan(body, state, jax.random.split(key, STEPS))[1].sum()

    return episode


def main() -> None:
    lib = sys.argv[1]
    episode = (rejax_episode() if lib == "rejax" else
               jaxrl_episode(int(sys.argv[2]) if len(sys.argv) > 2 else None))
    program = jax.jit(jax.vmap(episode))
    keys = jax.random.split(jax.random.key(0), MEMBERS)
    program(keys).block_until_ready()
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        program(keys).block_until_ready()
        best = min(best, time.perf_counter() - start)
    print(f"{lib} {' '.join(sys.argv[2:])}: {MEMBERS * ENVS * STEPS / best:,.0f} env-steps/s")


if __name__ == "__main__":
    main()

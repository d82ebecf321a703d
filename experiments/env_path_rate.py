"""One env's path alone on the CPU: MEMBERS x ENVS envs (default 4 x 32) stepped ``STEPS``
times with uniform random actions through jaxrl's ``env_step`` (auto-reset, episode
statistics, prepared starts where the family has them), one jitted program, no learner.
Prints the compile time and the best of 3 runs' env-steps/s over all members, with
``XLA_FLAGS`` (which is how the LLVM level was chosen for benchmarks/throughput-cpu-ab/opt-level):

    XLA_FLAGS=--xla_backend_optimization_level=3 JAXRL_CPU_DEVICES=1 \\
        python experiments/env_path_rate.py brax:hopper '{"backend": "positional"}' 256 [4 32]
"""

import json
import os
import sys
import time

import jax

import envs
from envs.spaces import Discrete
from envs.wrappers import EpisodeStatistics
from jaxrl.parts.rollout import env_step, reset_envs


def main() -> None:
    name = sys.argv[1]
    kwargs = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {}
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 256
    members, envs_ = (int(a) for a in sys.argv[4:6]) if len(sys.argv) > 5 else (4, 32)
    env, params = envs.make(name, **kwargs)
    env = EpisodeStatistics(env)
    space = env.action_space(params)

    def sample(k):
        if isinstance(space, Discrete):
            return jax.random.randint(k, (envs_,), 0, space.n)
        return jax.random.uniform(k, (envs_, *space.shape), minval=-1, maxval=1)

    def episode(key):
        carry = reset_envs(key, env, params, envs_)

        def body(carry, k):
            carry, step, _ = env_step(k, env, params, carry, sample(k))
            return carry, step.reward.sum()

        return jax.lax.scan(body, carry, jax.random.split(key, steps))[1].sum()

    program = jax.jit(jax.vmap(episode))
    keys = jax.random.split(jax.random.key(0), members)
    start = time.perf_counter()
    program(keys).block_until_ready()
    compile_seconds = time.perf_counter() - start
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        program(keys).block_until_ready()
        best = min(best, time.perf_counter() - start)
    print(f"{name} {kwargs} {os.environ.get('XLA_FLAGS')}: compile {compile_seconds:.1f}s "
          f"{members * envs_ * steps / best:,.0f} env-steps/s", flush=True)


if __name__ == "__main__":
    main()

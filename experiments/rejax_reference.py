"""Time rejax 0.1.3 itself on this machine, at the reference settings the issues quote.

rejax is not a jaxrl dependency: run this in a separate venv, e.g.

    python3.11 -m venv /tmp/rejax && /tmp/rejax/bin/pip install rejax==0.1.3 jax==0.10.2 six
    /tmp/rejax/bin/python experiments/rejax_reference.py ppo dqn sac

gymnax >= 1.0 returns ``(obs, state, reward, terminated, truncated, info)`` while rejax 0.1.3
unpacks five values, so the env is wrapped to merge the two flags (rejax's own behaviour).
Evaluation is disabled; each program is compiled by a first call and timed on the next
``--repeats`` calls (different keys), printing each and the best and median.
"""

import argparse
import statistics
import time

import gymnax
import jax
import jax.numpy as jnp
from rejax import DQN, PPO, SAC


class FiveTuple:
    """gymnax 1.0 env -> the 5-tuple step rejax 0.1.3 expects."""

    def __init__(self, env):
        self.env = env

    def __getattr__(self, name):
        if name == "env":
            raise AttributeError(name)
        return getattr(self.env, name)

    def reset(self, key, params):
        return self.env.reset(key, params)

    def step(self, key, state, action, params):
        obs, state, reward, terminated, truncated, info = self.env.step(key, state, action,
                                                                         params)
        return obs, state, reward, jnp.logical_or(terminated, truncated), info


SETTINGS = {  # algo: (class, env, total steps, config)
    "ppo": (PPO, "CartPole-v1", 500_000, dict(
        num_envs=5, num_steps=100, num_epochs=5, num_minibatches=5, learning_rate=2.5e-4,
        max_grad_norm=0.5, agent_kwargs={"activation": "tanh", "hidden_layer_sizes": (64, 64)})),
    "dqn": (DQN, "CartPole-v1", 100_000, dict(
        num_envs=10, batch_size=100, num_epochs=5, buffer_size=50_000, fill_buffer=1_000)),
    "sac": (SAC, "Pendulum-v1", 10_000, dict(num_envs=1, batch_size=256, fill_buffer=1_000)),
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("algos", nargs="+", choices=list(SETTINGS))
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 16])
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error(f"--repeats must be >= 1, got {args.repeats}")
    print(f"jax {jax.__version__}")
    for name in args.algos:
        cls, env_name, total, config = SETTINGS[name]
        env, params = gymnax.make(env_name)
        algo = cls.create(env=FiveTuple(env), env_params=params, total_timesteps=total,
                          eval_freq=total, skip_initial_evaluation=True, **config)
        algo = algo.replace(eval_callback=lambda alg, ts, rng: jnp.zeros(()))
        train = jax.jit(jax.vmap(algo.train))
        for seeds in args.seeds:
            jax.block_until_ready(train(jax.random.split(jax.random.key(0), seeds)))
            speeds = []
            for r in range(args.repeats):
                start = time.perf_counter()
                jax.block_until_ready(train(jax.random.split(jax.random.key(r + 1), seeds)))
                speeds.append(seeds * total / (time.perf_counter() - start))
            print(f"{name} {env_name} seeds {seeds:3d}: best {max(speeds):10,.0f} median "
                  f"{statistics.median(speeds):10,.0f} env-steps/s "
                  f"(runs: {', '.join(f'{v:,.0f}' for v in speeds)})", flush=True)


if __name__ == "__main__":
    main()

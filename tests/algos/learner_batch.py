"""A fresh off-policy train state and a random replay batch, for tests that call one learning step
directly (test_offpolicy.py, test_td3.py)."""

import jax
import jax.numpy as jnp

import envs
from envs.spaces import Discrete
from jaxrl import algos
from jaxrl.parts.buffers import nstep
from jaxrl.parts.rollout import obs_dim


def state_and_batch(algo: str, env_name: str, **overrides):
    algorithm = algos.get(algo)
    env, params = envs.make(env_name)
    env = envs.EpisodeStatistics(env)
    config = algorithm.default_config(env_name).replace(hidden=(8,), num_envs=2, batch_size=16,
                                                        buffer_size=64, **overrides)
    # jitted: run op by op, an off-policy init (networks, optimizers, replay) took seconds
    state = jax.jit(lambda key: algorithm.init(key, env, params, config))(jax.random.key(0))
    d = obs_dim(env.observation_space(params))
    space = env.action_space(params)
    if isinstance(space, Discrete):  # the Q-learners: dqn, c51, qrdqn
        action = jax.random.randint(jax.random.key(1), (16,), 0, space.n)
    else:
        action = jax.random.uniform(jax.random.key(1), (16, *space.shape), minval=-1, maxval=1)
    batch = nstep.NStepTransition(
        obs=jax.random.normal(jax.random.key(2), (16, d)), action=action,
        reward=jax.random.normal(jax.random.key(3), (16,)), discount=jnp.full((16,), 0.99),
        terminated=jnp.zeros((16,), bool), next_obs=jax.random.normal(jax.random.key(4), (16, d)),
        steps=jnp.ones((16,), jnp.int32), ended=jnp.zeros((16,), bool))
    return state, batch, config, space


def jitted_learn(learn, config, space):
    """``learn`` (one learning step: ``ddpg.learn``, ``q_learner.make_learn(dqn.td_loss)``) with
    the config and action space fixed, jitted: run op by op it took several seconds."""
    return jax.jit(lambda state, batch, weights, key: learn(state, batch, weights, key, config,
                                                           space))

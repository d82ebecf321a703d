"""Behaviour cloning: it fits the expert's actions, its statistics are the expert's, and bad
demonstrations are one line before anything compiles."""

import jax
import numpy as np
import pytest

import jaxrl
from jaxrl.algos import bc, imitation
from jaxrl.config import ConfigError
from jaxrl.engine.spec import resolve


def test_bc_copies_a_deterministic_expert(cartpole_expert):
    _, _, demos = cartpole_expert
    r = jaxrl.train("bc", env="CartPole-v1", seeds=2, total_steps=256 * 300, store=False,
                    progress=False, demos=demos, eval_episodes=8)
    last = r.metrics.groupby("seed").tail(20)
    assert (last.expert_accuracy > 0.9).all(), last.expert_accuracy.describe()
    assert r.metrics.env_steps.max() == 256 * 300  # samples drawn, not env steps
    data = jaxrl.load_demos(demos)
    agree = np.mean([np.mean(r.act(data.obs, seed=s) == data.action) for s in (0, 1)])
    assert agree > 0.9
    # the clone plays about as well as the expert it copied (a weak one: 4k steps of PPO)
    assert np.mean(r.final_eval_return) > 0.5 * np.mean(data.returns)


def test_bc_statistics_are_the_experts(cartpole_expert):
    _, _, demos = cartpole_expert
    _, env, env_params, config, _ = resolve("bc", "CartPole-v1", 1000, 1, demos=demos)
    state = bc.init(jax.random.key(0), env, env_params, config)
    data = jaxrl.load_demos(demos)
    np.testing.assert_allclose(state.obs_stats.mean, data.obs.mean(0), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(state.obs_stats.var, data.obs.var(0), rtol=1e-3, atol=1e-5)


def test_missing_or_mismatched_demonstrations_are_one_line(cartpole_expert):
    _, _, demos = cartpole_expert
    for algo in ("bc", "gail"):
        with pytest.raises(ConfigError, match="demos=DEMO_ID"):
            jaxrl.train(algo, env="CartPole-v1", total_steps=2048, store=False)
        with pytest.raises(ConfigError, match="no demonstrations 'nope'"):
            jaxrl.train(algo, env="CartPole-v1", total_steps=2048, store=False, demos="nope")
        with pytest.raises(ConfigError, match=r"observations of shape \[4\]; this env's are \[3\]"):
            jaxrl.train(algo, env="Pendulum-v1", total_steps=4096, store=False, demos=demos)


def test_expert_actions_are_agent_actions():
    """Box actions are recorded in the env's bounds and learned in [-1, 1]."""
    from envs.spaces import Box
    from jaxrl.parts.actions import from_env_action, to_env_action

    space = Box(low=-2.0, high=2.0, shape=(1,))
    a = np.array([[-2.0], [0.0], [1.0], [2.0]], np.float32)
    agent = from_env_action(space, a)
    np.testing.assert_allclose(agent, [[-1.0], [0.0], [0.5], [1.0]])
    np.testing.assert_allclose(to_env_action(space, agent), a)
    assert imitation.sample(imitation.Expert(agent[:, 0], agent), jax.random.key(0),
                            16).action.shape == (16, 1)

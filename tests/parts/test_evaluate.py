"""Evaluation traces its steps without the env's auto-reset (`envs.core.first_episode_only`):
the first episode's returns are the same to the bit, and the program holds no second reset."""

import contextlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import envs
from envs.core import first_episode_only, resets_on_step
from envs.wrappers import EpisodeStatistics
from jaxrl.parts import evaluate as evaluate_module
from jaxrl.parts.evaluate import evaluate

EPISODES = 6


class RandomActs:
    """A policy of uniform random actions (`evaluate`'s `Acting`), no memory."""

    def __init__(self, env, params):
        self.space = env.action_space(params)

    def initial(self, n):
        return ()

    def step(self, state, memory, obs, key, deterministic):
        keys = jax.random.split(key, obs.shape[0])
        return memory, jax.vmap(self.space.sample)(keys)


@contextlib.contextmanager
def evaluation(env, params, max_steps, *, reset_in_step: bool, monkeypatch):
    """`evaluate` of random actions over ``EPISODES`` envs, jitted (``key -> [EPISODES]``),
    traced with the auto-reset (``reset_in_step``: as before `first_episode_only`) or without
    while the context lasts."""
    with monkeypatch.context() as patch:
        if reset_in_step:
            patch.setattr(evaluate_module, "first_episode_only", contextlib.nullcontext)
        policy = RandomActs(env, params)
        yield jax.jit(lambda key: evaluate(None, key, policy, env, params, EPISODES, max_steps))


def returns(env, params, max_steps, *, reset_in_step: bool, monkeypatch) -> np.ndarray:
    """The first episodes' returns ``[EPISODES]`` (`evaluation`)."""
    with evaluation(env, params, max_steps, reset_in_step=reset_in_step,
                    monkeypatch=monkeypatch) as run:
        return np.asarray(run(jax.random.key(3)))


@pytest.mark.parametrize("name, options, max_steps", [
    ("navix:Navix-DoorKey-5x5-v0", {}, 100),
    ("craftax:Craftax-Classic-Symbolic-v1", {"episode_length": 40, "reset_ratio": 1}, 60),
])
def test_first_episode_returns_are_the_same_to_the_bit(name, options, max_steps, monkeypatch):
    env, params = envs.make(name, **options)
    env = EpisodeStatistics(env)
    before = returns(env, params, max_steps, reset_in_step=True, monkeypatch=monkeypatch)
    after = returns(env, params, max_steps, reset_in_step=False, monkeypatch=monkeypatch)
    assert np.isfinite(after).all()  # every first episode ended within max_steps
    np.testing.assert_array_equal(after, before)


def test_a_step_under_it_keeps_the_ended_episode():
    env, params = envs.make("probe:truncation", time_limit=2)
    _, state = env.reset(jax.random.key(0), params)
    _, state, *_ = env.step(jax.random.key(1), state, jnp.int32(0), params)
    assert resets_on_step()
    _, reset_state, _, _, truncated, info = env.step(jax.random.key(2), state, jnp.int32(0),
                                                     params)
    with first_episode_only():
        assert not resets_on_step()
        obs_kept, kept, _, _, truncated_kept, info_kept = env.step(
            jax.random.key(2), state, jnp.int32(0), params)
    assert resets_on_step()
    assert bool(truncated) and bool(truncated_kept)
    assert int(reset_state.time) == 0 and int(kept.time) == 2  # reset; the ended episode kept
    np.testing.assert_array_equal(obs_kept, info_kept["final_observation"])
    np.testing.assert_array_equal(info["final_observation"], info_kept["final_observation"])


def reset_ops(env, params, *, reset_in_step: bool, monkeypatch) -> int:
    """How many of the evaluation program's lowered ops are under the ``env_reset`` scope (an
    auto-reset in `envs.core.Environment.step`, a start drawn by `envs.starts.PreparedStarts`)."""
    with evaluation(env, params, 100, reset_in_step=reset_in_step,
                    monkeypatch=monkeypatch) as run:
        text = run.lower(jax.random.key(0)).as_text(debug_info=True)
    return sum(line.startswith("#loc") and "env_reset" in line for line in text.splitlines())


@pytest.mark.parametrize("name, reset_ops_left", [
    ("probe:truncation", lambda before: 0),  # its auto-reset gone from the step
    ("navix:Navix-DoorKey-5x5-v0", lambda before: before // 2 + 16),  # one start drawn, not two
])
def test_the_evaluation_program_computes_the_reset_once(name, reset_ops_left, monkeypatch):
    env, params = envs.make(name)
    env = EpisodeStatistics(env)
    before = reset_ops(env, params, reset_in_step=True, monkeypatch=monkeypatch)
    after = reset_ops(env, params, reset_in_step=False, monkeypatch=monkeypatch)
    assert before > 0
    assert after <= reset_ops_left(before), (before, after)

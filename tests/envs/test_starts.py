"""Prepared starts (`envs.starts`): episodes begin from states drawn ahead, each fresh."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import struct

import envs
from envs.core import Environment
from envs.spaces import Box, Discrete
from envs.starts import PreparedStarts, prepared_starts
from envs.wrappers import EpisodeStatistics, completed_episode_summary
from jaxrl.parts.rollout import env_step, reset_envs


@struct.dataclass
class _Params:
    length: int = 5


@struct.dataclass
class _State:
    mark: jax.Array  # [2] drawn at reset: which start the episode began from
    t: jax.Array


class _Marked(Environment):
    """Each episode begins at a random mark, observed unchanged until the time limit."""

    name = "marked"

    @property
    def default_params(self):
        return _Params()

    def reset_env(self, key, params):
        mark = jax.random.uniform(key, (2,))
        return mark, _State(mark, jnp.zeros((), jnp.int32))

    def step_env(self, key, state, action, params):
        t = state.t + 1
        return state.mark, _State(state.mark, t), jnp.float32(1.0), jnp.bool_(False), \
            t >= params.length, {}

    def observation_space(self, params=None):
        return Box(0.0, 1.0, (2,))

    def action_space(self, params=None):
        return Discrete(2)


def _roll(env, params, key, num_envs: int = 8, steps: int = 60):
    """Starts (observations after each episode end) and the per-step infos of a rollout."""
    carry = reset_envs(jax.random.fold_in(key, 0), env, params, num_envs)

    def body(carry, k):
        carry, _, info = env_step(k, env, params, carry, jnp.zeros(num_envs, jnp.int32))
        return carry, (carry.obs, info)

    first = carry.obs
    _, (obs, info) = jax.jit(lambda c, ks: jax.lax.scan(body, c, ks))(
        carry, jax.random.split(jax.random.fold_in(key, 1), steps))
    starts = np.concatenate([np.asarray(first), np.asarray(obs)[np.asarray(info["episode_done"])]])
    return starts, info


def test_every_episode_starts_fresh_and_a_seed_reproduces():
    env = EpisodeStatistics(PreparedStarts(_Marked(), period=4))
    starts, info = _roll(env, _Params(), jax.random.key(3))
    assert len(starts) == 8 + 8 * 12  # every env: a first episode and 12 more in 60 steps
    assert len({tuple(s) for s in starts}) == len(starts)  # no two episodes share a start
    assert int(info["env_reused_start"].sum()) == 0
    again, _ = _roll(env, _Params(), jax.random.key(3))
    np.testing.assert_array_equal(again, starts)  # bit for bit
    other, _ = _roll(env, _Params(), jax.random.key(4))
    assert not np.array_equal(other, starts)


def test_a_start_is_reused_only_when_episodes_outrun_the_draws_and_is_counted():
    """Episodes of 1 step on 8 envs, one new start per step (period 8): most episodes reuse."""
    env = EpisodeStatistics(PreparedStarts(_Marked(), period=8))
    starts, info = _roll(env, _Params(length=1), jax.random.key(0), steps=10)
    reused = int(info["env_reused_start"].sum())
    assert reused > 0
    assert len({tuple(s) for s in starts}) == len(starts) - reused
    summary = completed_episode_summary(jax.tree.map(lambda x: x[:4], info))
    assert float(summary["env_reused_starts"]) == float(info["env_reused_start"][:4].sum())


def test_period_one_never_reuses_even_one_step_episodes():
    env = EpisodeStatistics(PreparedStarts(_Marked(), period=1))
    starts, info = _roll(env, _Params(length=1), jax.random.key(0), steps=10)
    assert int(info["env_reused_start"].sum()) == 0
    assert len({tuple(s) for s in starts}) == len(starts)


def test_the_protocol_holds_final_observation_and_flags():
    env = PreparedStarts(_Marked(), period=2)
    params = _Params(length=2)
    obs, state = env.reset(jax.random.key(0), params)
    for t in range(2):
        nxt, state, _, term, trunc, info = env.step(jax.random.key(t), state, 0, params)
    assert bool(trunc) and not bool(term)
    np.testing.assert_array_equal(info["final_observation"], obs)  # the ended episode's last
    assert not np.array_equal(nxt, obs)  # the next episode's first, from the prepared start
    np.testing.assert_array_equal(nxt, state.state.mark)


def test_bad_period_is_one_line():
    with pytest.raises(ValueError, match="prepared_starts must be a whole number"):
        PreparedStarts(_Marked(), period=0)


def test_suites_whose_resets_cost_get_prepared_starts_and_the_option_turns_them_off():
    pytest.importorskip("navix")
    env, _ = envs.make("navix:Navix-Empty-5x5-v0")
    assert prepared_starts(env) is not None and prepared_starts(env).period == 8
    off, _ = envs.make("navix:Navix-Empty-5x5-v0", prepared_starts=0)
    assert prepared_starts(off) is None
    assert prepared_starts(envs.make("CartPole-v1")[0]) is None

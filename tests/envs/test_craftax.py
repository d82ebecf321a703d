"""The Craftax adapter (envs/craftax.py) speaks the env protocol (envs/core.py): Craftax's own
time limit out of the way and jaxrl's as truncation, death as termination, the first
observation after a reset a fresh world's, and optimistic resets handing out worlds in order.
One compiled rollout of Craftax-Classic-Symbolic (the cheaper world) serves the protocol tests.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

pytest.importorskip("craftax")

import envs
from envs import craftax, registry

N, T = 4, 7


@pytest.fixture(scope="module")
def classic():
    env, params = envs.make("craftax:Craftax-Classic-Symbolic-v1", episode_length=3,
                            reset_ratio=1)

    def rollout(key):
        keys = jax.random.split(key, N)
        obs0, state = jax.vmap(env.reset, in_axes=(0, None))(keys, params)

        def body(state, k):
            step = jax.vmap(env.step, in_axes=(0, 0, 0, None))
            obs, state, reward, term, trunc, info = step(jax.random.split(k, N), state,
                                                         jnp.zeros(N, jnp.int32), params)
            return state, {"obs": obs, "terminated": term, "truncated": trunc,
                           "final": info["final_observation"], "t": state.t,
                           "timestep": state.inner.timestep, "reward": reward}

        return obs0, jax.lax.scan(body, state, jax.random.split(key, T))

    obs0, (last, out) = jax.jit(rollout)(jax.random.key(0))
    return env, params, np.asarray(obs0), last, jax.tree.map(np.asarray, out)


def test_spaces_and_defaults():
    env, params = envs.make("craftax:Craftax-Symbolic-v1")
    assert params.episode_length == 100_000  # Craftax's own time limit, now truncation
    assert int(params.inner.max_timesteps) > 10**9  # Craftax's limit moved out of reach
    assert env.observation_space(params).shape == (8268,)
    assert env.action_space(params).n == 43
    classic_env, classic_params = envs.make("craftax:Craftax-Classic-Symbolic-v1")
    assert classic_params.episode_length == 10_000
    assert classic_env.observation_space(classic_params).shape == (1345,)
    assert envs.env_family("craftax:Craftax-Symbolic-v1") == "craftax"


def test_truncation_at_the_limit_with_the_final_observation(classic):
    _, _, _, _, out = classic
    trunc = out["truncated"]
    assert trunc[:, 0].tolist() == [False, False, True, False, False, True, False]
    assert not out["terminated"].any()
    assert out["t"][:, 0].tolist() == [1, 2, 0, 1, 2, 0, 1]
    assert out["timestep"][:, 0].tolist() == [1, 2, 0, 1, 2, 0, 1]  # a fresh world's clock
    # final_observation: the ended episode's last observation; obs: the new world's first
    step = 2
    assert not np.array_equal(out["final"][step, 0], out["obs"][step, 0])
    np.testing.assert_array_equal(out["final"][step - 1, 0], out["obs"][step - 1, 0])


def test_first_observation_after_a_reset_is_a_fresh_worlds(classic):
    env, _, _, last, out = classic
    inner_obs = env._env.get_obs(jax.tree.map(lambda x: x[0], last.inner))
    np.testing.assert_array_equal(np.asarray(inner_obs), out["obs"][-1, 0])
    # reset_ratio=1: each env got its own world (different worlds, different first views)
    assert not np.array_equal(out["obs"][2, 0], out["obs"][2, 1])


def test_death_terminates():
    env, params = envs.make("craftax:Craftax-Classic-Symbolic-v1")
    _, state = env.reset(jax.random.key(1), params)
    dying = state.replace(inner=state.inner.replace(player_health=state.inner.player_health * 0))
    _, after, _, term, trunc, _ = jax.jit(env.step)(jax.random.key(2), dying, jnp.int32(0),
                                                     params)
    assert bool(term) and not bool(trunc)
    assert int(after.t) == 0 and float(after.inner.player_health) > 0


def test_optimistic_resets_hand_out_worlds_in_order():
    """8 envs, ratio 4: two worlds a step; the i-th env that ended gets world i (mod 2)."""

    def reset_env(key, params):
        return jax.random.key_data(key)[-1].astype(jnp.float32) + params, jnp.zeros(())

    fresh = craftax._optimistic_reset(reset_env, 4)
    keys = jax.random.split(jax.random.key(0), 8)
    ended = jnp.asarray([0, 1, 0, 1, 1, 0, 0, 1], bool)
    obs, _ = jax.vmap(fresh, in_axes=(0, 0, None))(keys, ended, 0.0)
    made = jax.vmap(lambda k: reset_env(k, 0.0)[0])(keys[:2])
    got = np.asarray(obs)[np.asarray(ended)]
    np.testing.assert_array_equal(got, np.asarray(made)[[0, 1, 0, 1]])
    # nested vmap (seeds x envs): each seed shares out its own worlds
    nested = jax.vmap(jax.vmap(fresh, in_axes=(0, 0, None)), in_axes=(0, 0, None))(
        jnp.stack([keys, keys[::-1]]), jnp.stack([ended, ended]), 0.0)[0]
    np.testing.assert_array_equal(np.asarray(nested[0]), np.asarray(obs))


def test_unknown_task_is_one_line():
    with pytest.raises(registry.UnknownEnvironmentError) as err:
        envs.make("craftax:Craftax-Symbolic-v2")
    assert "craftax:Craftax-Symbolic-v1" in str(err.value) and "\n" not in str(err.value)

"""The Navix adapter (envs/navix.py) speaks the env protocol (envs/core.py): Navix's time limit
out of the way and jaxrl's as truncation, the goal as termination, the first observation after
a reset a fresh episode's, spaces."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

pytest.importorskip("navix")

import envs
from envs import registry

# Empty-5x5: the agent starts at (1, 1) facing east, the goal is at (3, 3); Navix's actions:
# 0 rotate counter-clockwise, 1 rotate clockwise, 2 forward
TO_THE_GOAL = [2, 2, 1, 2, 2]


def rollout(env, params, actions):
    _, state = env.reset(jax.random.key(0), params)
    step = jax.jit(env.step)
    out = []
    for i, a in enumerate(actions):
        obs, state, reward, term, trunc, info = step(jax.random.key(i + 1), state,
                                                      jnp.int32(a), params)
        out.append(dict(obs=np.asarray(obs), reward=float(reward), terminated=bool(term),
                        truncated=bool(trunc), final=np.asarray(info["final_observation"]),
                        t=int(env.inner_state(state).timestep.t)))
    return out


def test_spaces_and_defaults():
    env, params = envs.make("navix:Navix-DoorKey-5x5-v0")
    assert params.episode_length == 100  # Navix's own default limit, now truncation
    assert env.observation_space(params).shape == (5, 5, 3)
    assert env.action_space(params).n == 7
    assert envs.env_family("navix:Navix-DoorKey-5x5-v0") == "navix"


def test_reaching_the_goal_terminates_with_its_reward():
    env, params = envs.make("navix:Navix-Empty-5x5-v0")
    out = rollout(env, params, TO_THE_GOAL)
    assert [o["terminated"] for o in out] == [False] * 4 + [True]
    assert not any(o["truncated"] for o in out)
    assert out[-1]["reward"] > 0 and out[-1]["t"] == 0  # reset: a fresh episode's clock
    # final_observation: the agent on the goal; obs: back at the start
    assert not np.array_equal(out[-1]["final"], out[-1]["obs"])
    np.testing.assert_array_equal(out[-2]["final"], out[-2]["obs"])


def test_truncation_at_the_limit_is_not_termination():
    env, params = envs.make("navix:Navix-Empty-5x5-v0", episode_length=3)
    out = rollout(env, params, [0, 0, 0, 0, 0, 0])  # turning in place: never at the goal
    assert [o["truncated"] for o in out] == [False, False, True, False, False, True]
    assert not any(o["terminated"] for o in out)
    assert [o["t"] for o in out] == [1, 2, 0, 1, 2, 0]
    assert out[2]["reward"] == 0.0


def test_time_limit_is_a_traced_param():
    env, params = envs.make("navix:Navix-Empty-5x5-v0")
    limits = jnp.asarray([2, 3], jnp.int32)

    def first_truncation(limit):
        p = params.replace(episode_length=limit)
        _, state = env.reset(jax.random.key(0), p)

        def body(state, k):
            _, state, _, _, trunc, _ = env.step(k, state, jnp.int32(0), p)
            return state, trunc

        return jnp.argmax(jax.lax.scan(body, state, jax.random.split(jax.random.key(1), 5))[1])

    assert jax.jit(jax.vmap(first_truncation))(limits).tolist() == [1, 2]


def test_unknown_task_is_one_line():
    with pytest.raises(registry.UnknownEnvironmentError) as err:
        envs.make("navix:Navix-DoorKey-5x5-v1")
    assert "navix:Navix-DoorKey-5x5-v0" in str(err.value) and "\n" not in str(err.value)

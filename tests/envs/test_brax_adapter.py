"""The brax adapter speaks the env protocol (envs/core.py).

brax + mjx compile slowly on CPU, so the real-physics checks share ONE compiled function: a
jitted rollout vmapped over keys and params for ``inverted_pendulum`` on the ``mjx`` backend
(~17 s to compile on 2 cores; ``hopper`` takes ~27 s and does not terminate within a short
horizon under a fixed action, so it is not used). Because ``episode_length`` is a traced param,
re-running with other time limits reuses the compiled code. brax's trivial ``fast`` env (compiles
in well under a second, deterministic zero reset, never terminates) covers the rest.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from envs.brax_adapter import BRAX_BACKENDS, BraxEnv, BraxParams, make_brax
from envs.core import Environment
from envs.spaces import Box

T = 30  # steps per rollout

# brax 0.14.2 + mujoco-mjx warn about their own deprecations on every trace
pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore:Brax System:UserWarning"),
]


def make_rollout(env, action_value, steps=T):
    """jit(vmap(rollout)) over (key, params) with a constant action."""

    def rollout(key, params):
        k0, k1 = jax.random.split(key)
        obs0, state = env.reset(k0, params)
        action = jnp.full((env.action_size,), action_value, jnp.float32)

        def body(state, k):
            obs, state, reward, term, trunc, info = env.step(k, state, action, params)
            out = {
                "obs": obs,
                "reward": reward,
                "terminated": term,
                "truncated": trunc,
                "final_obs": info["final_observation"],
                "t": state.t,
            }
            return state, out

        _, out = jax.lax.scan(body, state, jax.random.split(k1, steps))
        return obs0, out

    return jax.jit(jax.vmap(rollout))


def params_with(limits):
    return BraxParams(episode_length=jnp.asarray(limits, jnp.int32))


def to_np(tree):
    return jax.tree.map(np.asarray, tree)


def first_true(x):
    return int(np.argmax(x)) if x.any() else -1


# -- inverted_pendulum on mjx: one compile, reused ---------------------------------------------
@pytest.fixture(scope="module")
def pendulum():
    env, params = make_brax("inverted_pendulum", backend="mjx", episode_length=1000)
    rollout = make_rollout(env, 0.0)
    keys = jax.random.split(jax.random.PRNGKey(0), 4)
    # env 0/1: short limits, no termination before them; env 2/3: long limit, falls over
    limits = [5, 7, 1000, 1000]
    obs0, out = to_np(rollout(keys, params_with(limits)))
    return env, params, rollout, keys, limits, obs0, out


def test_pendulum_truncation_exactly_at_limit(pendulum):
    _, _, _, _, limits, _, out = pendulum
    for b in (0, 1):
        assert not out["terminated"][b].any()
        expected = (np.arange(1, T + 1) % limits[b]) == 0
        np.testing.assert_array_equal(out["truncated"][b], expected)
        np.testing.assert_array_equal(out["t"][b], np.arange(1, T + 1) % limits[b])


def test_pendulum_termination_reaches_caller(pendulum):
    _, _, _, _, _, _, out = pendulum
    for b in (2, 3):
        k = first_true(out["terminated"][b])
        assert 0 <= k < T, "zero action should let the pole fall within T steps"
        assert not out["truncated"][b].any()
        assert out["t"][b][k] == 0  # auto-reset restarted the step counter
        # the pole angle in the final observation is past brax's 0.2 rad threshold
        assert abs(out["final_obs"][b][k][1]) > 0.2


def test_pendulum_terminated_and_truncated_on_same_step(pendulum):
    """Set the time limit to exactly the termination step: both flags true, not merged."""
    _, _, rollout, keys, limits, _, out = pendulum
    k = first_true(out["terminated"][2])
    new_limits = list(limits)
    new_limits[2] = k + 1
    _, out2 = to_np(rollout(keys, params_with(new_limits)))  # same keys -> same trajectory
    assert out2["terminated"][2][k] and out2["truncated"][2][k]
    assert not out2["truncated"][2][:k].any() and not out2["terminated"][2][:k].any()
    np.testing.assert_allclose(out2["final_obs"][2][: k + 1], out["final_obs"][2][: k + 1])


def test_pendulum_final_observation(pendulum):
    _, _, _, _, _, _, out = pendulum
    done = out["terminated"] | out["truncated"]
    assert done.any() and (~done).any()
    np.testing.assert_array_equal(out["final_obs"][~done], out["obs"][~done])
    for fo, o in zip(out["final_obs"][done], out["obs"][done]):
        assert not np.array_equal(fo, o)


def test_pendulum_fresh_key_on_every_reset(pendulum):
    """Consecutive auto-resets start from different initial states (not a cached one)."""
    _, _, _, _, _, obs0, out = pendulum
    done = out["terminated"] | out["truncated"]
    for b in range(len(obs0)):
        firsts = [obs0[b], *out["obs"][b][done[b]]]
        assert len(firsts) >= 2
        assert len({f.tobytes() for f in firsts}) == len(firsts)
    # and different keys give different initial states
    assert len({o.tobytes() for o in obs0}) == len(obs0)


def test_pendulum_shapes_dtypes_space(pendulum):
    env, params, _, keys, _, obs0, out = pendulum
    space = env.observation_space(params)
    assert space == Box(-np.inf, np.inf, (4,))
    assert env.action_space(params) == Box(-1.0, 1.0, (1,))
    n = len(keys)
    assert obs0.shape == (n, 4) and obs0.dtype == np.float32
    assert out["obs"].shape == out["final_obs"].shape == (n, T, 4)
    assert out["obs"].dtype == out["final_obs"].dtype == np.float32
    assert out["reward"].shape == (n, T) and out["reward"].dtype == np.float32
    for flag in ("terminated", "truncated"):
        assert out[flag].shape == (n, T) and out[flag].dtype == np.bool_
    assert all(space.contains(o) for o in out["obs"].reshape(-1, 4))


def test_pendulum_state_type_is_stable(pendulum):
    """reset and step return identically typed states (brax's raw env does not: weak types)."""
    env, params, _, _, _, _, _ = pendulum
    key = jax.random.PRNGKey(0)
    types = lambda tree: [(x.shape, x.dtype, x.weak_type) for x in jax.tree.leaves(tree)]
    _obs, state = jax.eval_shape(env.reset, key, params)
    res = jax.eval_shape(env.step, key, state, jnp.zeros((1,)), params)
    assert jax.tree.structure(res[1]) == jax.tree.structure(state)
    assert types(res[1]) == types(state)
    assert res[2].shape == () and res[2].dtype == jnp.float32
    assert res[3].dtype == res[4].dtype == jnp.bool_
    assert set(res[5]) >= {"final_observation", "metrics"}


@pytest.mark.parametrize("name", ["hopper", "ant"])
def test_locomotion_state_type_is_stable(name):
    """Traced only (no compile): contact-rich mjx envs keep one state type across reset/step."""
    env, params = make_brax(name, backend="mjx", episode_length=20)
    key = jax.random.PRNGKey(0)
    types = lambda tree: [(x.shape, x.dtype, x.weak_type) for x in jax.tree.leaves(tree)]
    obs, state = jax.eval_shape(env.reset, key, params)
    assert obs.shape == env.observation_space(params).shape and obs.dtype == jnp.float32
    action = jax.ShapeDtypeStruct(env.action_space(params).shape, jnp.float32)
    res = jax.eval_shape(env.step, key, state, action, params)
    assert types(res[1]) == types(state)
    assert res[0].shape == obs.shape and res[2].dtype == jnp.float32
    assert res[3].dtype == res[4].dtype == jnp.bool_


# -- the cheap `fast` env ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def fast():
    return make_brax("fast", episode_length=6)


def test_fast_truncation_vmapped_params(fast):
    env, params = fast
    assert isinstance(env, Environment) and int(params.episode_length) == 6
    limits = [3, 6, 1000]
    keys = jax.random.split(jax.random.PRNGKey(0), 3)
    _obs0, out = to_np(make_rollout(env, 1.0)(keys, params_with(limits)))
    assert not out["terminated"].any()
    for b, limit in enumerate(limits):
        np.testing.assert_array_equal(out["truncated"][b], (np.arange(1, T + 1) % limit) == 0)
    done = out["truncated"]
    np.testing.assert_array_equal(out["final_obs"][~done], out["obs"][~done])
    # fast's reset is all zeros; its position grows while the episode runs
    np.testing.assert_array_equal(out["obs"][done], 0.0)
    assert (out["final_obs"][done][:, 1] > 0).all()


def test_fast_unbatched_jit(fast):
    env, params = fast
    key = jax.random.PRNGKey(0)
    obs, state = jax.jit(env.reset)(key, params)
    step = jax.jit(env.step)
    for i in range(8):
        obs, state, reward, term, trunc, _info = step(key, state, jnp.ones((1,)), params)
        assert obs.shape == (2,) and obs.dtype == jnp.float32
        assert reward.shape == () and reward.dtype == jnp.float32
        assert term.dtype == trunc.dtype == jnp.bool_ and term.shape == trunc.shape == ()
        assert bool(trunc) == (i + 1 == 6)
    assert step._cache_size() == 1  # no retrace: reset and step states have the same type
    # default params are used when params is omitted
    obs, state = env.reset(key)
    assert int(env.step(key, state, jnp.ones((1,)))[1].t) == 1


def test_fast_action_repeat(fast):
    env1, params = fast
    env3, _ = make_brax("fast", episode_length=6, action_repeat=3)
    key = jax.random.PRNGKey(0)
    a = jnp.ones((1,))
    _, s1 = env1.reset(key, params)
    rewards = []
    for _ in range(3):
        o1, s1, r, *_ = env1.step(key, s1, a, params)
        rewards.append(float(r))
    _, s3 = env3.reset(key, params)
    o3, s3, r3, *_ = env3.step(key, s3, a, params)
    np.testing.assert_allclose(o3, o1, rtol=1e-6)
    np.testing.assert_allclose(float(r3), sum(rewards), rtol=1e-6)
    assert int(s3.t) == 1  # the time limit counts agent steps, not physics steps
    with pytest.raises(ValueError, match="action_repeat"):
        make_brax("fast", action_repeat=0)


# -- construction ---------------------------------------------------------------------------------
def test_names_and_backends():
    from brax import envs as brax_envs

    from envs import brax_adapter

    assert tuple(brax_envs._envs) == brax_adapter.BRAX_NAMES
    assert {"ant", "hopper", "halfcheetah", "fast"} <= set(brax_adapter.BRAX_NAMES)
    # every backend we accept is one brax's PipelineEnv accepts (built without compiling)
    for backend in BRAX_BACKENDS:
        env, params = make_brax("inverted_pendulum", backend=backend, episode_length=9)
        assert isinstance(env, BraxEnv) and env.brax_env.backend == backend
        assert env.observation_space(params).shape == (4,) and int(params.episode_length) == 9
    with pytest.raises(ValueError, match="valid backends: mjx, generalized, positional, spring"):
        make_brax("hopper", backend="warp")
    with pytest.raises(ValueError, match="unknown brax env"):
        make_brax("no_such_env")

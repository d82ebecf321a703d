"""The gymnax adapter speaks the env protocol (envs/core.py).

Each rollout is one jitted, vmapped (over keys *and* params) scan, compiled once per env and
reused by every check on that env (module-scoped fixtures).
"""

from __future__ import annotations

import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from envs.core import Environment
from envs.gymnax_adapter import GymnaxEnv, make_gymnax
from envs.spaces import Box, Discrete

T = 24  # steps per rollout
N = 4  # parallel envs per rollout


def make_rollout(env, policy, steps=T):
    """jit(vmap(rollout)) over (key, params); policy(key, step_index) -> action."""

    def rollout(key, params):
        k0, k1 = jax.random.split(key)
        obs0, state = env.reset(k0, params)

        def body(carry, k):
            state, i = carry
            ka, ks = jax.random.split(k)
            obs, state, reward, term, trunc, info = env.step(ks, state, policy(ka, i), params)
            out = {
                "obs": obs,
                "reward": reward,
                "terminated": term,
                "truncated": trunc,
                "final_obs": info["final_observation"],
            }
            return (state, i + 1), out

        _, out = jax.lax.scan(body, (state, jnp.int32(0)), jax.random.split(k1, steps))
        return obs0, out

    return jax.jit(jax.vmap(rollout))


def batched_params(params, limits):
    """Stack ``params`` N times with per-env ``max_steps_in_episode`` (vmap over params)."""
    limits = np.resize(np.asarray(limits), N)
    p = jax.tree.map(lambda x: jnp.broadcast_to(jnp.asarray(x), (N,)), params)
    return p.replace(max_steps_in_episode=jnp.asarray(limits, jnp.int32)), limits


def to_np(tree):
    return jax.tree.map(np.asarray, tree)


# name -> (policy that does not terminate within the limits, time limits vmapped over params)
TRUNCATION_CASES = {
    # alternating push keeps the pole up for >= 30 steps
    "CartPole-v1": (lambda k, i: i % 2, (5, 7)),
    # no termination at all
    "Pendulum-v1": (lambda k, i: jnp.zeros((1,)), (5, 7)),
    # the ball needs >= 6 steps to drop out, so limits <= 5 never see a termination
    "Breakout-MinAtar": (lambda k, i: jax.random.randint(k, (), 0, 3), (3, 5)),
    # the ball reaches the bottom row after 9 steps
    "Catch-bsuite": (lambda k, i: jnp.int32(1), (4, 7)),
}


@pytest.fixture(scope="module", params=list(TRUNCATION_CASES))
def truncation_rollout(request):
    name = request.param
    policy, limits = TRUNCATION_CASES[name]
    env, params = make_gymnax(name)
    bparams, limits = batched_params(params, limits)
    keys = jax.random.split(jax.random.PRNGKey(0), N)
    obs0, out = make_rollout(env, policy)(keys, bparams)
    return name, env, params, limits, to_np(obs0), to_np(out)


def test_truncation_exactly_at_time_limit(truncation_rollout):
    name, _, _, limits, _, out = truncation_rollout
    assert not out["terminated"].any(), f"{name}: policy was meant not to terminate"
    for b, limit in enumerate(limits):
        expected = (np.arange(1, T + 1) % limit) == 0  # steps limit, 2*limit, ...
        np.testing.assert_array_equal(out["truncated"][b], expected, err_msg=f"{name} env {b}")


def test_final_observation(truncation_rollout):
    _name, _, _, _, _, out = truncation_rollout
    done = out["terminated"] | out["truncated"]
    assert done.any() and (~done).any()
    np.testing.assert_array_equal(out["final_obs"][~done], out["obs"][~done])
    # on done steps obs is the next episode's first obs, final_obs the last of the old one
    assert any(not np.array_equal(a, b) for a, b in zip(out["final_obs"][done], out["obs"][done]))


def test_shapes_dtypes_and_space(truncation_rollout):
    name, env, params, _, obs0, out = truncation_rollout
    space = env.observation_space(params)
    assert isinstance(space, Box)
    assert obs0.shape == (N, *space.shape) and obs0.dtype == np.float32
    assert out["obs"].shape == (N, T, *space.shape) and out["obs"].dtype == np.float32
    assert out["final_obs"].shape == out["obs"].shape and out["final_obs"].dtype == np.float32
    assert out["reward"].shape == (N, T) and out["reward"].dtype == np.float32
    for flag in ("terminated", "truncated"):
        assert out[flag].shape == (N, T) and out[flag].dtype == np.bool_
    for o in [
        *obs0,
        *out["obs"].reshape(-1, *space.shape),
        *out["final_obs"].reshape(-1, *space.shape),
    ]:
        assert space.contains(o), name


def test_unbatched_jit_matches_protocol(truncation_rollout):
    """Un-vmapped, jitted step: scalar flags/reward, state structure and dtypes stable."""
    name, env, params, _, _, _ = truncation_rollout
    key = jax.random.PRNGKey(1)
    obs, state = jax.jit(env.reset)(key, params)
    action = env.action_space(params).sample(key)
    res = jax.eval_shape(env.step, key, state, action, params)
    obs2, state2, reward, term, trunc, info = res
    assert obs2.shape == obs.shape and obs2.dtype == jnp.float32
    assert reward.shape == () and reward.dtype == jnp.float32
    assert term.shape == () and term.dtype == jnp.bool_
    assert trunc.shape == () and trunc.dtype == jnp.bool_
    assert info["final_observation"].shape == obs.shape
    # same state type after reset and after step (weak types included), so jit(step) and
    # scan carries do not retrace / mismatch
    state_aval = jax.eval_shape(env.reset, key, params)[1]
    assert jax.tree.structure(state2) == jax.tree.structure(state_aval)
    for a, b in zip(jax.tree.leaves(state2), jax.tree.leaves(state_aval)):
        assert (a.shape, a.dtype, a.weak_type) == (b.shape, b.dtype, b.weak_type), name
    step = jax.jit(env.step)
    for _ in range(2):
        obs, state, *_ = step(key, state, action, params)
    assert step._cache_size() == 1, name


def test_resets_differ(truncation_rollout):
    """Initial observations of consecutive auto-reset episodes are not all the same."""
    name, _, _, _, obs0, out = truncation_rollout
    for b in range(N):
        firsts = [obs0[b], *out["obs"][b][out["truncated"][b]]]
        assert len(firsts) >= 3
        distinct = {f.tobytes() for f in firsts}
        if name in ("CartPole-v1", "Pendulum-v1"):  # continuous random initial states
            assert len(distinct) == len(firsts), name
        else:  # a handful of discrete initial states
            assert len(distinct) >= 2, name


def test_termination_reaches_caller():
    """CartPole with always-left terminates quickly; terminated is not reported as truncated."""
    env, params = make_gymnax("CartPole-v1")
    bparams, _ = batched_params(params, (500,))
    keys = jax.random.split(jax.random.PRNGKey(3), N)
    _, out = to_np(make_rollout(env, lambda k, i: jnp.int32(0))(keys, bparams))
    assert out["terminated"].any(axis=1).all()
    assert not out["truncated"].any()
    term = out["terminated"]
    np.testing.assert_array_equal(out["final_obs"][~term], out["obs"][~term])
    # the final observation of a terminated episode is out of bounds (|theta| > 12 deg or |x| > 2.4)
    fo = out["final_obs"][term]
    assert ((np.abs(fo[:, 2]) > 0.2094) | (np.abs(fo[:, 0]) > 2.4)).all()


def test_terminated_and_truncated_on_the_same_step():
    """DeepSea's episode length equals its time limit: both flags true at step 8, unmerged."""
    env, params = make_gymnax("DeepSea-bsuite")
    assert int(params.max_steps_in_episode) == 8
    keys = jax.random.split(jax.random.PRNGKey(0), N)
    bparams = jax.tree.map(lambda x: jnp.broadcast_to(jnp.asarray(x), (N,)), params)
    _, out = to_np(make_rollout(env, lambda k, i: jnp.int32(1))(keys, bparams))
    expected = (np.arange(1, T + 1) % 8) == 0
    for b in range(N):
        np.testing.assert_array_equal(out["terminated"][b], expected)
        np.testing.assert_array_equal(out["truncated"][b], expected)


def test_spaces_of_all_registered_envs():
    """Every registered env (bar MNIST, which downloads data) converts, and its obs (traced
    with eval_shape, nothing compiled) match the declared space's shape as float32."""
    import gymnax

    from envs import gymnax_adapter

    assert tuple(gymnax.registered_envs) == gymnax_adapter.GYMNAX_NAMES
    key = jax.random.PRNGKey(0)
    for name in gymnax_adapter.GYMNAX_NAMES:
        if name == "MNISTBandit-bsuite":
            continue
        env, params = make_gymnax(name)
        assert isinstance(env, Environment)
        obs_space, act_space = env.observation_space(params), env.action_space(params)
        assert isinstance(obs_space, Box) and isinstance(act_space, (Box, Discrete))
        obs, state = jax.eval_shape(env.reset, key, params)
        assert obs.shape == obs_space.shape and obs.dtype == jnp.float32, name
        action = jax.ShapeDtypeStruct(act_space.shape, act_space.dtype)
        res = jax.eval_shape(env.step, key, state, action, params)
        assert res[0].shape == obs_space.shape and res[0].dtype == jnp.float32, name
        assert res[2].dtype == jnp.float32 and res[3].dtype == res[4].dtype == jnp.bool_, name
        types = lambda tree: [(x.shape, x.dtype, x.weak_type) for x in jax.tree.leaves(tree)]
        assert types(res[1]) == types(state), name
        hash(env)


def test_space_conversion_details():
    env, params = make_gymnax("CartPole-v1")
    obs_space = env.observation_space(params)
    # gymnax's +-finfo.max becomes +-inf for the velocities
    assert np.isinf(obs_space.high[1]) and np.isinf(obs_space.low[3]) and not obs_space.bounded
    assert env.action_space(params) == Discrete(2)
    env, params = make_gymnax("Pendulum-v1")
    assert env.action_space(params) == Box(-2.0, 2.0, (1,))
    env, params = make_gymnax("Breakout-MinAtar")
    assert env.observation_space(params) == Box(0.0, 1.0, (10, 10, 4))


def test_discrete_observations_are_one_hot():
    env, params = make_gymnax("FrozenLake-misc")
    assert env.observation_space(params) == Box(0.0, 1.0, (16,))
    obs, _state = env.reset(jax.random.PRNGKey(0), params)
    assert obs.dtype == jnp.float32 and obs.shape == (16,) and float(obs.sum()) == 1.0


def test_actions_are_cast():
    """A float action for a discrete env / an int-typed action for a box env is accepted."""
    env, params = make_gymnax("Pendulum-v1")
    key = jax.random.PRNGKey(0)
    _, state = env.reset(key, params)
    out_f = env.step(key, state, jnp.zeros((1,), jnp.float32), params)
    out_i = env.step(key, state, jnp.zeros((1,), jnp.int32), params)
    np.testing.assert_array_equal(out_f[0], out_i[0])


class _FakeGymnaxEnv:
    """Just enough of a gymnax env to exercise space conversion."""

    name = "Fake"

    def __init__(self, obs_space):
        self._obs_space = obs_space

    @property
    def default_params(self):
        return None

    def observation_space(self, params):
        return self._obs_space

    def action_space(self, params):
        from gymnax.environments import spaces

        return spaces.Discrete(2)


def test_unsupported_space_raises_naming_the_env():
    from gymnax.environments import spaces

    dict_space = spaces.Dict({"a": spaces.Discrete(2)})
    with pytest.raises(NotImplementedError, match="MyDictEnv"):
        GymnaxEnv(_FakeGymnaxEnv(dict_space), name="MyDictEnv")


def test_unknown_name():
    with pytest.raises(ValueError, match="unknown gymnax env"):
        make_gymnax("NoSuchEnv-v0")


def test_importing_adapters_does_not_import_gymnax_or_brax():
    code = (
        "import sys, envs.gymnax_adapter, envs.brax_adapter; "
        "bad = [m for m in ('gymnax', 'brax') if m in sys.modules]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=str(_repo_root()))


def _repo_root():
    import pathlib

    return pathlib.Path(__file__).resolve().parents[2]

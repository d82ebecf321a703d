"""Probe envs: the exact answers they publish are what their own dynamics give (brute force)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import envs
from envs.probes import PROBES

GAMMA = 0.9


def _act_for(env, answer, obs, state):
    """The published best action for ``obs`` (or action 0 / zeros when there is one action);
    a probe whose optimal policy needs memory names it from the state (``optimal_action``)."""
    space = env.action_space()
    if hasattr(env, "optimal_action"):
        return env.optimal_action(state)
    if answer.best_actions is None:
        return jnp.zeros(space.shape, space.dtype)
    idx = int(np.argmin(np.abs(answer.observations - np.asarray(obs)).sum(axis=-1)))
    return jnp.asarray(answer.best_actions[idx], space.dtype)


def _rollout(env, params, key, answer, horizon, stop_at_done):
    """Run the best policy; returns lists of (obs_t, r_t, done_t, terminated_t)."""
    step = jax.jit(env.step)
    obs, state = env.reset(key, params)
    traj = []
    for _ in range(horizon):
        key, k = jax.random.split(key)
        action = _act_for(env, answer, obs, state)
        next_obs, state, r, term, trunc, _ = step(k, state, action, params)
        traj.append((np.asarray(obs), float(r), bool(term or trunc), bool(term)))
        obs = next_obs
        if stop_at_done and (term or trunc):
            break
    return traj


def _returns_to_go(traj, gamma):
    out, g = [], 0.0
    for obs, r, _done, _ in reversed(traj):
        g = r + gamma * g
        out.append((obs, g))
    return out[::-1]


@pytest.mark.parametrize("probe_cls", [p for p in PROBES if p.episode_steps > 0])
def test_published_values_match_brute_force(probe_cls):
    env, params = envs.make(probe_cls.name)
    answer = env.answer(GAMMA, params)
    seen = {}
    for seed in range(16):
        traj = _rollout(env, params, jax.random.key(seed), answer, 50, stop_at_done=True)
        assert traj[-1][3], "probe episodes end by termination"
        for obs, g in _returns_to_go(traj, GAMMA):
            seen.setdefault(tuple(obs.round(6)), []).append(g)
    for obs, value in zip(answer.observations, answer.values):
        got = seen[tuple(np.asarray(obs).round(6))]
        np.testing.assert_allclose(got, value, rtol=1e-5, atol=1e-6)


# Probes that publish best actions; the value-only ones (best_actions None) are checked by
# test_published_values_match_brute_force.
ACTION_PROBES = [p for p in PROBES if p().answer(GAMMA).best_actions is not None]


@pytest.mark.parametrize("probe_cls", ACTION_PROBES)
def test_best_action_is_best(probe_cls):
    """No other action earns a higher one-step reward from any query observation."""
    env, params = envs.make(probe_cls.name)
    answer = env.answer(GAMMA, params)
    space = env.action_space()
    if isinstance(space, envs.Discrete):
        candidates = [jnp.asarray(a, space.dtype) for a in range(space.n)]
    else:
        candidates = [jnp.full(space.shape, a, jnp.float32) for a in np.linspace(-1, 1, 41)]
    for obs, best in zip(answer.observations, answer.best_actions):
        state = envs.probes.ProbeState(obs=jnp.asarray(obs), time=jnp.zeros((), jnp.int32))
        reward = lambda a: float(env.step_env(jax.random.key(0), state, a, params)[2])
        best_r = reward(jnp.asarray(best, space.dtype))
        assert best_r == pytest.approx(max(reward(a) for a in candidates), abs=1e-6)


@pytest.mark.parametrize("name", ["probe:truncation", "probe:continuous-truncation"])
def test_truncation_probe_right_and_wrong_answers(name):
    env, params = envs.make(name, time_limit=5)
    answer = env.answer(GAMMA, params)
    key = jax.random.key(0)
    # Bootstrapping through truncation: the state never changes, so the value is the
    # infinite-horizon discounted sum of +1s, which running past the time limit measures.
    long = _rollout(env, params, key, answer, 300, stop_at_done=False)
    assert [d for *_, d, _ in long][:6] == [False] * 4 + [True, False]
    assert not any(t for *_, t in long), "the truncation probe never terminates"
    right = _returns_to_go(long, GAMMA)[0][1]
    np.testing.assert_allclose(right, answer.values[0], rtol=1e-4)
    # Treating the time limit as termination stops the sum at T steps.
    short = _rollout(env, params, key, answer, 300, stop_at_done=True)
    assert len(short) == 5
    np.testing.assert_allclose(_returns_to_go(short, GAMMA)[0][1], answer.wrong_values[0], rtol=1e-5)
    assert abs(answer.values[0] - answer.wrong_values[0]) > 4 * answer.value_tolerance


@pytest.mark.parametrize("probe_cls", PROBES)
def test_probe_protocol_under_jit_and_vmap(probe_cls):
    env, params = envs.make(probe_cls.name)
    keys = jax.random.split(jax.random.key(1), 8)
    obs, state = jax.vmap(env.reset, in_axes=(0, None))(keys, params)
    assert obs.shape == (8, *env.observation_space(params).shape)
    space = env.action_space(params)
    actions = jax.vmap(space.sample)(keys)
    out = jax.jit(jax.vmap(env.step, in_axes=(0, 0, 0, None)))(keys, state, actions, params)
    next_obs, _, reward, term, trunc, info = out
    assert next_obs.shape == obs.shape and reward.shape == (8,)
    assert term.dtype == jnp.bool_ and trunc.dtype == jnp.bool_
    not_done = ~(np.asarray(term) | np.asarray(trunc))
    np.testing.assert_array_equal(
        np.asarray(info["final_observation"])[not_done], np.asarray(next_obs)[not_done]
    )


def test_random_obs_probes_show_both_signs():
    env, params = envs.make("probe:obs-action")
    obs, _ = jax.vmap(env.reset, in_axes=(0, None))(jax.random.split(jax.random.key(0), 64), params)
    assert set(np.unique(np.asarray(obs))) == {-1.0, 1.0}

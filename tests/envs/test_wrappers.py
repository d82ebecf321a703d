"""The episode-statistics wrapper reports completed episodes only: NaN, never a fake zero, when
none completed, and CartPole's episodes counted as a manual count does."""

import jax
import jax.numpy as jnp
import numpy as np

import envs


def _run(env, params, actions_fn, steps, num_envs=3):
    keys = jax.random.split(jax.random.key(0), num_envs)
    _, state = jax.vmap(env.reset, in_axes=(0, None))(keys, params)
    step = jax.jit(jax.vmap(env.step, in_axes=(0, 0, 0, None)))
    infos = []
    for t in range(steps):
        keys = jax.random.split(jax.random.key(t + 1), num_envs)
        _, state, _, _, _, info = step(keys, state, actions_fn(t, num_envs), params)
        infos.append(info)
    return jax.tree.map(lambda *x: jnp.stack(x), *infos)


def lengths_for(info, b):
    done = np.asarray(info["episode_done"])[:, b]
    return np.asarray(info["episode_length"])[:, b][done]


def test_episode_statistics_reports_completed_episodes():
    env, params = envs.make("probe:truncation", time_limit=4)
    wrapped = envs.EpisodeStatistics(env)
    info = _run(wrapped, params, lambda t, n: jnp.zeros((n,), jnp.int32), steps=10)
    done = np.asarray(info["episode_done"])
    assert done[:, 0].tolist() == [False, False, False, True] * 2 + [False, False]
    np.testing.assert_array_equal(np.asarray(info["episode_return"])[done], 4.0)
    np.testing.assert_array_equal(np.asarray(info["episode_length"])[done], 4)
    summary = envs.completed_episode_summary(info)
    assert float(summary["episode_count"]) == 6
    assert float(summary["episode_return_mean"]) == 4.0
    assert float(summary["episode_return_std"]) == 0.0


def test_no_completed_episode_gives_nan_not_zero():
    env, params = envs.make("probe:truncation", time_limit=100)
    info = _run(envs.EpisodeStatistics(env), params, lambda t, n: jnp.zeros((n,), jnp.int32), 3)
    summary = envs.completed_episode_summary(info)
    assert float(summary["episode_count"]) == 0
    for k in ("return_mean", "return_min", "return_max", "length_mean"):
        assert np.isnan(float(summary[f"episode_{k}"]))


def test_episode_statistics_on_cartpole_matches_manual_count():
    env, params = envs.make("CartPole-v1")
    wrapped = envs.EpisodeStatistics(env)
    info = _run(wrapped, params, lambda t, n: jnp.zeros((n,), jnp.int32), steps=40, num_envs=2)
    done = np.asarray(info["episode_done"])
    lengths = np.asarray(info["episode_length"])[done]
    # Always pushing left ends CartPole in roughly 8-12 steps; lengths add up to the steps used.
    assert done.sum() >= 4 and np.all((lengths > 5) & (lengths < 20))
    for b in range(2):
        ends = np.flatnonzero(done[:, b])
        np.testing.assert_array_equal(np.diff(np.concatenate([[-1], ends])), lengths_for(info, b))

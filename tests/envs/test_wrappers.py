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


# -- sticky actions ------------------------------------------------------------------------------
def _executed_actions(env, params, actions, key=0):
    """``(executed, ended)``: the actions the inner env executed (recorded by a spy) for the
    agent's ``actions``, and whether each step ended its episode."""
    import jax
    import jax.numpy as jnp

    seen, ended = [], []
    inner_step = env.env.step

    def spy(key, state, action, params=None):
        seen.append(int(action))
        out = inner_step(key, state, action, params)
        ended.append(bool(out[3] | out[4]))
        return out

    env.env.step = spy
    try:
        _, state = env.reset(jax.random.key(key), params)
        keys = jax.random.split(jax.random.key(key + 1), len(actions))
        for k, a in zip(keys, actions):
            _, state, *_ = env.step(k, state, jnp.int32(a), params)
    finally:
        del env.env.step
    return seen, ended


def test_sticky_actions_repeat_the_last_executed_action_at_their_rate():
    import numpy as np

    import envs
    from envs.wrappers import StickyActions

    env, params = envs.make("gymnax:Breakout-MinAtar", sticky_action_prob=0.25)
    assert isinstance(env, StickyActions) and env.options() == (0.25,)
    agent = [1, 2] * 200  # alternate: every repeat shows as a mismatch
    executed, ended = _executed_actions(env, params, agent)
    repeats = np.mean([e != a for e, a in zip(executed, agent)])
    assert 0.17 < repeats < 0.33  # 400 draws at p = 0.25
    # a repeat executes the previous *executed* action, the no-op (0) at an episode's start
    previous = [0] + [0 if end else e for e, end in zip(executed[:-1], ended[:-1])]
    for prev, now, a in zip(previous, executed, agent):
        assert now in (a, prev)
    assert any(ended) and 0 in executed  # both cases were met
    plain, params = envs.make("gymnax:Breakout-MinAtar", sticky_action_prob=0.0)
    assert _executed_actions(plain, params, agent[:20])[0] == agent[:20]


def test_sticky_actions_start_each_episode_from_the_no_op():
    import jax
    import jax.numpy as jnp

    import envs

    env, params = envs.make("probe:action", sticky_action_prob=0.9)  # one step per episode
    _, state = env.reset(jax.random.key(0), params)
    for k in jax.random.split(jax.random.key(1), 16):
        _, state, _, terminated, truncated, _ = env.step(k, state, jnp.int32(1), params)
        assert bool(terminated | truncated)
        assert int(state.last_action) == 0  # the episode ended: the next starts from the no-op


def test_sticky_actions_refuse_bad_probabilities_and_continuous_actions():
    import pytest

    import envs

    for bad in (1.0, -0.1, "0.1", True):
        with pytest.raises(ValueError, match="sticky_action_prob"):
            envs.make("gymnax:Breakout-MinAtar", sticky_action_prob=bad)
    with pytest.raises(ValueError, match="needs discrete actions"):
        envs.make("Pendulum-v1", sticky_action_prob=0.1)


def test_a_run_takes_sticky_actions_through_env_kwargs():
    import jaxrl

    result = jaxrl.train("ppo", env="gymnax:Breakout-MinAtar", seeds=2, total_steps=256,
                         store=False, progress=False, num_envs=4, num_steps=32,
                         num_minibatches=2, update_epochs=1, eval_episodes=2,
                         env_kwargs={"sticky_action_prob": 0.1, "use_minimal_action_set": False})
    assert result.metrics["policy_loss"].notna().all()
    assert result.config.hidden  # resolved, trained, evaluated

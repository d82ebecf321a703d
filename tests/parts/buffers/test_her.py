"""Hindsight relabelling: relabelled rewards are the env's `compute_reward` on the new goals,
goals come from the same episode at or after the sampled step (never across a boundary), the
share relabelled is 1 - 1/(1+k), and a bad config is one line."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import envs
import jaxrl
from envs.goals import GoalLayout, PointReach, goal_env
from jaxrl.config import ConfigError
from jaxrl.parts.buffers import her, nstep, uniform

N, H = 3, 6  # envs stepping together, the env's step limit


def episode_buffer(lengths_per_env, capacity=200, extra_writes=0):
    """A uniform buffer filled as the off-policy loop fills it: N envs' items per step in
    consecutive slots. Env e plays episodes of the given lengths back to back; each item's
    achieved goal in ``next_obs`` is (episode id, step within the episode + 1) and its ``obs``
    achieved goal (episode id, step). Returns the buffer and, per slot, (episode id, step,
    episode length)."""
    steps = min(sum(lengths) for lengths in lengths_per_env)
    meta = {}
    rows = []
    for e, lengths in enumerate(lengths_per_env):
        col = []
        for ep, length in enumerate(lengths):
            for t in range(length):
                col.append((1000 * e + ep, t, length))
        rows.append(col[:steps])
    item = lambda vals: nstep.NStepTransition(
        obs=jnp.array([[ep, t, 9.0, 9.0] for ep, t, _ in vals], jnp.float32),
        action=jnp.zeros((N, 2)), reward=jnp.full((N,), -1.0),
        discount=jnp.full((N,), 0.9), terminated=jnp.zeros((N,), bool),
        next_obs=jnp.array([[ep, t + 1, 9.0, 9.0] for ep, t, _ in vals], jnp.float32),
        steps=jnp.ones((N,), jnp.int32),
        ended=jnp.array([t == length - 1 for _, t, length in vals]))
    buffer = uniform.init(jax.tree.map(lambda x: x[0], item([r[0] for r in rows])), capacity)
    for s in range(steps):
        vals = [rows[e][s] for e in range(N)]
        slots = np.asarray(uniform.write_slots(buffer, N))
        for e, slot in enumerate(slots):
            meta[int(slot)] = vals[e]
        buffer = uniform.add(buffer, item(vals), s)
    return buffer, meta


class FarGoal(PointReach):
    """PointReach's reward on (episode, step) goals: reached only where they are equal."""

    def goal_reached(self, achieved, desired, params):
        return jnp.all(achieved == desired, axis=-1)


def relabel_all(buffer, strategy, k=10**6, seed=0, size=512):
    """A large sample relabelled (k huge: essentially all of it)."""
    env = FarGoal()
    batch, indices, _ = uniform.sample(buffer, jax.random.key(seed), size)
    out = her.relabel(buffer, batch, indices, jax.random.key(seed + 1), env, env.default_params,
                      GoalLayout(0, 2), strategy, k, 0.9, N, H)
    return batch, indices, out, env


@pytest.mark.parametrize("strategy", ["future", "final"])
def test_relabelled_goals_stay_in_their_episode(strategy):
    buffer, meta = episode_buffer([[4, 6, 3, 5], [6, 6, 6], [2, 3, 4, 5, 6]])
    _, indices, out, _ = relabel_all(buffer, strategy)
    goals = np.asarray(out.obs[:, 2:])
    assert np.array_equal(goals, np.asarray(out.next_obs[:, 2:]))
    latest = max(meta)  # the newest written slot: its episode may be unfinished
    for i, (goal_ep, goal_step) in zip(np.asarray(indices), goals):
        ep, t, length = meta[int(i)]
        assert goal_ep == ep  # never another episode (or another env's)
        # written steps of this episode: up to its end, or the newest item of the env
        env_steps = [s for s, m in meta.items() if m[0] == ep]
        last = max(meta[s][1] for s in env_steps)
        assert t + 1 <= goal_step <= last + 1
        if strategy == "final":
            assert goal_step == last + 1
        assert last <= length - 1 and latest >= max(env_steps)


def test_relabelled_rewards_are_compute_reward():
    buffer, _ = episode_buffer([[4, 6, 3, 5], [6, 6, 6], [2, 3, 4, 5, 6]])
    _, _, out, env = relabel_all(buffer, "future")
    achieved, desired = out.next_obs[:, :2], out.obs[:, 2:]
    params = env.default_params
    np.testing.assert_array_equal(out.reward, env.compute_reward(achieved, desired, params))
    reached = np.asarray(env.goal_reached(achieved, desired, params))
    np.testing.assert_array_equal(out.terminated, reached)
    np.testing.assert_allclose(out.discount, 0.9 * (1 - reached))
    # the step's own achieved goal is sampled too ("future" includes the step itself): then the
    # transition reached its goal and terminates
    assert reached.any() and not reached.all()
    assert np.all(np.asarray(out.reward)[reached] == 0) and np.all(
        np.asarray(out.reward)[~reached] == -1)


@pytest.mark.parametrize("k", [1, 4])
def test_share_relabelled_is_one_minus_one_over_one_plus_k(k):
    buffer, _ = episode_buffer([[6] * 8] * N)
    env = FarGoal()
    batch, indices, _ = uniform.sample(buffer, jax.random.key(0), 4096)
    out = her.relabel(buffer, batch, indices, jax.random.key(1), env, env.default_params,
                      GoalLayout(0, 2), "future", k, 0.9, N, H)
    changed = np.any(np.asarray(out.obs[:, 2:]) != np.asarray(batch.obs[:, 2:]), axis=1)
    assert abs(changed.mean() - (1 - 1 / (1 + k))) < 0.03


def test_a_wrapped_buffer_looks_ahead_from_its_oldest_item():
    """A full buffer that wrapped: lookahead never runs past the newest item into old data."""
    buffer, meta = episode_buffer([[5] * 30] * N, capacity=60)
    assert int(buffer.size) == 60
    _, indices, out, _ = relabel_all(buffer, "final")
    for i, (goal_ep, goal_step) in zip(np.asarray(indices), np.asarray(out.obs[:, 2:])):
        ep, t, length = meta[int(i)]
        assert goal_ep == ep and t + 1 <= goal_step <= length


def test_her_configs_are_checked():
    with pytest.raises(ConfigError, match="her must be one of"):
        jaxrl.train("dqn", env="goal:BitFlip", total_steps=1000, store=False, her="all")
    with pytest.raises(ConfigError, match="n_step=1, prioritized=False"):
        jaxrl.train("dqn", env="goal:BitFlip", total_steps=1000, store=False, her="future",
                    prioritized=True)
    with pytest.raises(ConfigError, match="needs a goal env"):
        jaxrl.train("dqn", env="CartPole-v1", total_steps=1000, store=False, her="future")


def test_goal_envs_keep_the_protocol():
    for name, kwargs in (("goal:BitFlip", {"n_bits": 4}), ("goal:PointReach", {})):
        env, params = envs.make(name, **kwargs)
        assert goal_env(env) is env
        layout = env.goal_layout(params)
        obs, state = env.reset(jax.random.key(0), params)
        assert obs.shape == (layout.obs_size + 2 * layout.goal_size,)
        done = False
        for t in range(int(params.max_steps_in_episode)):
            action = env.action_space(params).sample(jax.random.key(t))
            obs, state, reward, terminated, truncated, info = env.step(
                jax.random.key(100 + t), state, action, params)
            final = info["final_observation"]
            reached = env.goal_reached(layout.achieved(final), layout.desired(final), params)
            assert bool(terminated) == bool(reached) and float(reward) == (0.0 if reached
                                                                          else -1.0)
            if terminated or truncated:
                done = True
                break
        assert done  # the step limit truncates at the latest


def test_dqn_with_her_solves_a_small_bitflip():
    r = jaxrl.train("dqn", env="goal:BitFlip", env_kwargs={"n_bits": 6}, seeds=1,
                    total_steps=12_000, store=False, progress=False, her="future",
                    buffer_size=20_000, learning_starts=500, hidden=(128,), gamma=0.9,
                    eps_decay_fraction=0.2, eps_end=0.1, learning_rate=1e-3,
                    target_update_period=100, num_envs=8, eval_episodes=32)
    assert r.final_eval_return[0] > -6  # the average episode reaches its goal

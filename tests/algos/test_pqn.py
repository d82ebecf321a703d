"""PQN's Q(lambda) targets, worked by hand and against a loop of the paper's recursion
(purejaxql's, with jaxrl's truncation rule added), at terminations, truncations and the
rollout's end; the reward scale; the time-limit bug switch; a learner step; the optional replay
of past rollouts (FIFO order, unfilled slots weigh nothing, targets from the current net)."""

from types import SimpleNamespace

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import envs
from jaxrl.algos import pqn


class Identity:
    """A stand-in Q-network whose output at ``next_obs`` is ``next_obs`` itself: the rollout's
    next "observations" are the Q-values ``[T, N, A]``."""

    def apply(self, params, obs):
        return obs


def targets(reward, next_q, terminated, truncated, gamma=0.5, lam=0.5, scale=1.0, **static):
    """`pqn.q_lambda_targets` of a one-env rollout (``[T]`` lists; ``next_q`` ``[T, A]``)."""
    column = lambda x, dtype=jnp.float32: jnp.asarray(x, dtype)[:, None]
    traj = SimpleNamespace(obs=column(reward), action=column(reward, jnp.int32),
                           reward=column(reward), terminated=column(terminated, bool),
                           truncated=column(truncated, bool),
                           next_obs=jnp.asarray(next_q, jnp.float32)[:, None, :])
    hp = SimpleNamespace(gamma=jnp.float32(gamma), q_lambda=jnp.float32(lam),
                         reward_scale=jnp.float32(scale))
    steps = pqn.as_transitions(traj, pqn.PQNConfig(**static))
    return np.asarray(pqn.q_lambda_targets(None, hp, steps, Identity()))[:, 0]


# r = [1, 2, 3], max_a Q(s_{t+1}, a) = [10, 20, 30], gamma = lambda = 0.5
NEXT_Q = [[10.0, -1.0], [0.0, 20.0], [30.0, 5.0]]


@pytest.mark.parametrize(("terminated", "truncated", "expected"), [
    # G2 = 3 + .5 * 30 = 18; G1 = 2 + .5 (.5 * 20 + .5 * 18) = 11.5; G0 = 1 + .5 (5 + 5.75)
    ([0, 0, 0], [0, 0, 0], [6.375, 11.5, 18.0]),
    # terminated at t = 1: G1 = 2 (no bootstrap); G0 = 1 + .5 (.5 * 10 + .5 * 2) = 4
    ([0, 1, 0], [0, 0, 0], [4.0, 2.0, 18.0]),
    # truncated at t = 1: G1 = 2 + .5 * 20 (the final observation's max Q) = 12;
    # G0 = 1 + .5 (.5 * 10 + .5 * 12) = 6.5
    ([0, 0, 0], [0, 1, 0], [6.5, 12.0, 18.0]),
    # both set: termination wins
    ([0, 1, 0], [0, 1, 0], [4.0, 2.0, 18.0]),
])
def test_q_lambda_targets_by_hand(terminated, truncated, expected):
    np.testing.assert_allclose(targets([1, 2, 3], NEXT_Q, terminated, truncated), expected)


def test_the_time_limit_bug_switch_treats_truncation_as_termination():
    got = targets([1, 2, 3], NEXT_Q, [0, 0, 0], [0, 1, 0], bootstrap_truncation=False)
    np.testing.assert_allclose(got, [4.0, 2.0, 18.0])


def test_rewards_are_scaled_before_the_recursion():
    np.testing.assert_allclose(targets([10, 20, 30], NEXT_Q, [0, 0, 0], [0, 0, 0], scale=0.1),
                               [6.375, 11.5, 18.0])


def peng_loop(reward, next_q, terminated, truncated, gamma, lam):
    """The paper's backward recursion (purejaxql's `_get_target`), written out, with a
    truncated step bootstrapping from its final observation like the rollout's last step."""
    max_q = np.max(next_q, axis=-1)
    out = np.zeros(len(reward))
    for t in reversed(range(len(reward))):
        if terminated[t]:
            out[t] = reward[t]
        elif truncated[t] or t == len(reward) - 1:
            out[t] = reward[t] + gamma * max_q[t]
        else:
            out[t] = reward[t] + gamma * ((1 - lam) * max_q[t] + lam * out[t + 1])
    return out


@pytest.mark.parametrize("lam", [0.0, 0.65, 1.0])
def test_q_lambda_targets_equal_the_papers_loop(lam):
    rng = np.random.default_rng(0)
    t = 40
    reward, next_q = rng.normal(size=t), rng.normal(size=(t, 3)) * 5
    terminated, truncated = rng.random(t) < 0.1, rng.random(t) < 0.1
    got = targets(reward, next_q, terminated, truncated, gamma=0.97, lam=lam)
    want = peng_loop(reward, next_q, terminated, truncated, 0.97, lam)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_a_train_step_fits_q_towards_its_targets_and_reports():
    env, params = envs.make("CartPole-v1")
    env = envs.EpisodeStatistics(env)
    config = pqn.default_config("CartPole-v1").replace(num_envs=4, num_steps=16, hidden=(16,),
                                                       num_minibatches=4, update_epochs=2,
                                                       learning_rate=1e-3, total_steps=1e4)
    state = jax.jit(lambda k: pqn.init(k, env, params, config))(jax.random.key(0))
    step = jax.jit(lambda s: pqn.train_step(s, config.static(), env, params))
    new, metrics = step(state)
    assert int(new.env_steps) == 64 and int(new.update_step) == 1
    for name in ("loss", "td_error_abs_mean", "q_mean", "target_mean", "epsilon",
                 "learning_rate", "grad_norm", "episode_count", "env_steps"):
        assert np.isfinite(float(metrics[name])), name
    assert float(metrics["epsilon"]) == pytest.approx(1.0)  # eps decays from the start
    assert not jax.tree.all(jax.tree.map(jnp.array_equal, new.params, state.params))


def small_config(**changes):
    fields = dict(num_envs=4, num_steps=8, hidden=(16,), num_minibatches=2, update_epochs=1,
                  learning_rate=1e-3, total_steps=1e4)
    return pqn.default_config("CartPole-v1").replace(**{**fields, **changes})


def cartpole_steps(config, updates):
    env, params = envs.make("CartPole-v1")
    env = envs.EpisodeStatistics(env)
    state = jax.jit(lambda k: pqn.init(k, env, params, config))(jax.random.key(0))
    step = jax.jit(lambda s: pqn.train_step(s, config.static(), env, params))
    states = [state]
    for _ in range(updates):
        states.append(step(states[-1])[0])
    return states


def test_replay_keeps_the_last_rollouts_in_order_and_marks_filled_slots():
    config = small_config(replay_rollouts=2)
    states = cartpole_steps(config, 3)
    assert states[0].replay.steps.obs.shape == (2, 8, 4, 4)
    assert [list(map(bool, s.replay.valid)) for s in states] == [
        [False, False], [False, True], [True, True], [True, True]]
    # after update 3 the slots hold rollouts 2 and 3: rollout 3 is the newest slot, and the
    # newest slot of the state before is now the oldest
    np.testing.assert_array_equal(states[3].replay.steps.obs[0], states[2].replay.steps.obs[1])
    # each rollout starts where the envs stood before it: slot 1 of update 3 begins at the
    # observation rollout 2's last step led to
    assert not np.array_equal(states[3].replay.steps.obs[1], states[2].replay.steps.obs[1])


def cartpole_network(config):
    env, params = envs.make("CartPole-v1")
    return pqn.make_network(config.static(), env.action_space(params))


def test_unfilled_replay_slots_weigh_nothing():
    """Before any rollout is kept, the weighted loss over [new rollout + empty slots] is the
    plain loss over the new rollout."""
    config = small_config(replay_rollouts=3)
    network = cartpole_network(config)
    state = cartpole_steps(config, 0)[0]
    rng = np.random.default_rng(1)
    fresh = jax.tree.map(lambda x: x[0], state.replay.steps)  # the [T, N] shapes
    fresh = fresh.replace(obs=jnp.asarray(rng.normal(size=fresh.obs.shape), jnp.float32),
                          next_obs=jnp.asarray(rng.normal(size=fresh.obs.shape), jnp.float32),
                          reward=jnp.ones_like(fresh.reward),
                          action=jnp.asarray(rng.integers(0, 2, fresh.action.shape), jnp.int32))
    batch, targets, pushed = pqn.replay_batch(state, fresh, network)
    assert batch.obs.shape[0] == 4 * 8 * 4 and float(batch.weight.sum()) == 8 * 4
    plain = pqn.Batch(fresh.obs.reshape(-1, 4), fresh.action.reshape(-1), targets.reshape(-1))
    weighted, _ = pqn.td_loss(state.params, network, batch)
    unweighted, _ = pqn.td_loss(state.params, network, plain)
    np.testing.assert_allclose(float(weighted), float(unweighted), rtol=1e-6)
    assert float(unweighted) > 0
    assert list(map(bool, pushed.valid)) == [False, False, True]
    np.testing.assert_array_equal(pushed.steps.obs[2], fresh.obs)


def test_replayed_targets_come_from_the_current_network():
    config = small_config(replay_rollouts=1)
    state = cartpole_steps(config, 2)[2]
    network = cartpole_network(config)
    fresh = jax.tree.map(lambda x: x[0], state.replay.steps)
    batch, _, _ = pqn.replay_batch(state, fresh, network)
    old = jax.tree.map(lambda x: x[0], state.replay.steps)
    want = pqn.q_lambda_targets(state.params, state.hparams, old, network).reshape(-1)
    np.testing.assert_allclose(np.asarray(batch.target[:want.shape[0]]), np.asarray(want),
                               rtol=1e-6)


def test_negative_replay_is_refused():
    from jaxrl.config import ConfigError
    with pytest.raises(ConfigError, match="replay_rollouts"):
        small_config(replay_rollouts=-1)


def test_the_memory_plan_counts_the_kept_rollouts():
    from jaxrl.algos import ALGORITHMS
    from jaxrl.parts import memory
    env, params = envs.make("CartPole-v1")
    plain = memory.estimate(ALGORITHMS["pqn"], small_config(), env, params, members=1)
    kept = memory.estimate(ALGORITHMS["pqn"], small_config(replay_rollouts=4), env, params,
                           members=1)
    # 4 rollouts of 8 steps x 4 envs: obs and next obs (4 floats each), reward, action, 2 flags
    assert plain.replay_bytes == 0
    assert kept.replay_bytes == 4 * 8 * 4 * (2 * 4 * 4 + 4 + 4 + 2) + 4
    assert kept.transient_bytes > plain.transient_bytes
    assert kept.per_member() > plain.per_member() + kept.replay_bytes

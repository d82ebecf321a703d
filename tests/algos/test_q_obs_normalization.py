"""The Q-learners' ``normalize_obs`` (PQN and the replay kit: DQN, C51, QR-DQN, IQN): running
statistics per member equal to numpy's mean and variance of every observation the member saw,
raw observations in the replay, acting (the greedy action, the value, the stored and the
exported policy) at the observations as normalized by those statistics, a probe rung climbed
with it on, and a masked env refused in one line. With it off the programs are unchanged: the
fingerprints (test_fingerprints.py) hold bit for bit and the state has no statistics."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import envs
import jaxrl
from jaxrl import algos
from jaxrl.algos import dqn, obs_normalization, pqn, q_learner
from jaxrl.config import ConfigError
from jaxrl.ops import running_stats_init, running_stats_update
from jaxrl.studies.probe import run_ladder
from jaxrl.trained.serving import load_exported
from tests.algos.learner_batch import state_and_batch

OFF_POLICY = dict(num_envs=4, log_interval=32, learning_starts=256, batch_size=32,
                  buffer_size=1024, hidden=(16,), n_step=1)
PQN = dict(num_envs=4, num_steps=16, num_minibatches=4, update_epochs=1, hidden=(16,),
           replay_rollouts=4)
TRAIN = dict(env="CartPole-v1", seeds=2, progress=False, eval_episodes=1)


@pytest.fixture(scope="module")
def runs_dir(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("runs"))


@pytest.fixture(scope="module")
def dqn_result(runs_dir):
    """2 seeds of DQN on CartPole for 1,024 steps, every observation still in the buffer."""
    return jaxrl.train("dqn", total_steps=1024, normalize_obs=True, seed=3, runs_dir=runs_dir,
                       **TRAIN, **OFF_POLICY)


@pytest.fixture(scope="module")
def pqn_result():
    """2 seeds of PQN on CartPole for 4 rollouts of 64 steps, all 4 kept in its replay."""
    return jaxrl.train("pqn", total_steps=256, normalize_obs=True, store=False, seed=3,
                       **TRAIN, **PQN)


def assert_stats_of(stats, seen: np.ndarray) -> None:
    """``stats`` (one member's) are the population mean and variance of ``seen [M, obs_dim]``."""
    assert float(stats.count) == seen.shape[0]
    np.testing.assert_allclose(np.asarray(stats.mean), seen.mean(0), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(stats.var), seen.var(0), rtol=1e-3, atol=1e-5)


def test_dqn_statistics_are_those_of_every_observation_seen_per_member(dqn_result):
    buffer = dqn_result.state.buffer  # n_step 1, capacity = the budget: every row, as collected
    stats = dqn_result.state.obs_stats
    assert stats.mean.shape == (2, 4)
    for seed in (0, 1):
        assert int(buffer.size[seed]) == 1024
        assert_stats_of(jax.tree.map(lambda x, s=seed: x[s], stats),
                        np.asarray(buffer.data.obs[seed], np.float64))
    assert not np.allclose(stats.mean[0], stats.mean[1])  # each member its own


def test_pqn_statistics_are_those_of_every_observation_seen_per_member(pqn_result):
    replay = pqn_result.state.replay  # K = 4 = the updates: every rollout, as collected
    assert bool(np.all(replay.valid))
    for seed in (0, 1):
        seen = np.asarray(replay.steps.obs[seed], np.float64).reshape(-1, 4)
        assert seen.shape[0] == 256
        assert_stats_of(jax.tree.map(lambda x, s=seed: x[s], pqn_result.state.obs_stats), seen)


def normalized(stats, obs):
    """What the agent should read: ``(obs - mean) / sqrt(var + 1e-8)`` clipped to +-10, by hand."""
    mean, var = np.asarray(stats.mean), np.asarray(stats.var)
    return np.clip((obs - mean) / np.sqrt(var + 1e-8), -10.0, 10.0).astype(np.float32)


def test_pqn_replay_batch_normalizes_raw_rollouts_by_the_current_statistics(pqn_result):
    state = jax.tree.map(lambda x: x[0], pqn_result.state)
    env, params = envs.make("CartPole-v1")
    network = pqn.make_network(pqn_result.config.static(), env.action_space(params))
    fresh = jax.tree.map(lambda x: x[0], state.replay.steps)
    batch, targets, pushed = pqn.replay_batch(state, fresh, network)
    rollouts = np.concatenate([np.asarray(state.replay.steps.obs), np.asarray(fresh.obs)[None]])
    np.testing.assert_allclose(np.asarray(batch.obs), normalized(state.obs_stats, rollouts)
                               .reshape(-1, 4), rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(np.asarray(pushed.steps.obs[-1]), np.asarray(fresh.obs))
    hand = fresh.replace(obs=jnp.asarray(normalized(state.obs_stats, fresh.obs)),
                         next_obs=jnp.asarray(normalized(state.obs_stats, fresh.next_obs)))
    want = pqn.q_lambda_targets(state.params, state.hparams, hand, network)
    np.testing.assert_allclose(np.asarray(targets), np.asarray(want), rtol=1e-5, atol=1e-5)


def probe_obs(seed: int) -> np.ndarray:
    """CartPole-like observations, some far from the statistics (so normalization matters)."""
    return (np.random.default_rng(seed).normal(size=(16, 4)) * [1.0, 2.0, 0.3, 3.0]
            ).astype(np.float32)


@pytest.mark.parametrize("which", ["dqn", "pqn"])
def test_acting_reads_the_normalized_observation(which, dqn_result, pqn_result):
    """The greedy action and value (evaluation, probes, ``act``) are the Q-network's at the
    hand-normalized observation, not at the raw one."""
    result = dqn_result if which == "dqn" else pqn_result
    module = dqn if which == "dqn" else pqn
    env, params = envs.make("CartPole-v1")
    static, space = result.config.static(), env.action_space(params)
    policy = algos.get(which).make_policy(static, env, params)
    obs = probe_obs(0)
    for seed in (0, 1):
        state = jax.tree.map(lambda x, s=seed: x[s], result.state)
        q = module.q_values(state.params, state.hparams, jnp.asarray(
            normalized(state.obs_stats, obs)), static, space)
        raw = module.q_values(state.params, state.hparams, jnp.asarray(obs), static, space)
        np.testing.assert_array_equal(np.asarray(result.act(obs, seed=seed)),
                                      np.asarray(jnp.argmax(q, -1)))
        np.testing.assert_allclose(np.asarray(policy.value(state, obs)), np.asarray(q.max(-1)),
                                   rtol=1e-5, atol=1e-6)
        assert not np.allclose(np.asarray(q), np.asarray(raw), atol=1e-3)


def test_the_stored_and_exported_dqn_policies_act_as_the_trained_one(dqn_result, runs_dir,
                                                                     tmp_path):
    stored = jaxrl.load_policy(dqn_result.run_id, runs_dir=runs_dir)
    for seed in (0, 1):
        obs = probe_obs(seed + 1)
        want = np.asarray(dqn_result.act(obs, seed=seed))
        np.testing.assert_array_equal(np.asarray(stored.act(obs, seed=seed)), want)
        serve = load_exported(dqn_result.export_policy(tmp_path / f"dqn{seed}.jaxpolicy",
                                                       seed=seed, platforms="cpu"))
        np.testing.assert_array_equal(np.asarray(serve.call(obs)), want)


def test_the_exported_pqn_policy_acts_as_the_trained_one(pqn_result, tmp_path):
    obs = probe_obs(3)
    serve = load_exported(pqn_result.export_policy(tmp_path / "pqn.jaxpolicy", seed=1,
                                                   platforms="cpu"))
    np.testing.assert_array_equal(np.asarray(serve.call(obs)),
                                  np.asarray(pqn_result.act(obs, seed=1)))


@pytest.mark.parametrize("algo", ["dqn", "pqn"])
def test_a_probe_rung_is_climbed_with_normalized_observations(algo):
    (result,) = run_ladder(algo, seeds=4, rungs=["probe:obs-action"], normalize_obs=True)
    assert result.passed, (result.measured, result.expected)


@pytest.mark.parametrize("algo", ["dqn", "c51", "qrdqn", "iqn", "pqn"])
def test_off_means_no_statistics_in_the_state(algo):
    env, params = envs.make("CartPole-v1")
    algorithm = algos.get(algo)
    config = algorithm.default_config("CartPole-v1")
    assert config.normalize_obs is False
    shapes = jax.eval_shape(lambda k: algorithm.init(k, env, params, config), jax.random.key(0))
    assert shapes.obs_stats is None
    on = jax.eval_shape(lambda k: algorithm.init(k, env, params, config.replace(
        normalize_obs=True)), jax.random.key(0))
    assert on.obs_stats.mean.shape == (4,)


@pytest.mark.parametrize("algo", ["dqn", "pqn"])
def test_a_masked_env_is_refused_with_normalization(algo):
    env, params = envs.make("probe:masked-action")
    config = algos.get(algo).default_config("probe:masked-action").replace(normalize_obs=True)
    with pytest.raises(ConfigError, match="action mask"):
        algos.get(algo).init(jax.random.key(0), env, params, config)


def test_transitions_keep_their_other_fields():
    stats = running_stats_update(running_stats_init((2,)), jnp.array([[0.0, 1.0], [2.0, 3.0]]))
    steps = pqn.Transition(obs=jnp.array([[2.0, 3.0]]), action=jnp.array([1]),
                           reward=jnp.array([0.5]), terminated=jnp.array([True]),
                           truncated=jnp.array([False]), next_obs=jnp.array([[0.0, 1.0]]))
    out = obs_normalization.normalize_transitions(stats, steps)
    np.testing.assert_allclose(np.asarray(out.obs), [[1.0, 1.0]], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(out.next_obs), [[-1.0, -1.0]], rtol=1e-6)
    assert out.reward is steps.reward and out.action is steps.action
    assert obs_normalization.normalize_transitions(None, steps) is steps


def test_the_replay_learner_reads_a_sampled_batch_normalized_by_the_current_statistics():
    """`q_learner.make_learn` hands its loss the raw batch normalized (obs and next obs)."""
    state, batch, config, space = state_and_batch("dqn", "CartPole-v1", normalize_obs=True)
    data = np.random.default_rng(0).normal(5.0, 2.0, size=(64, 4)).astype(np.float32)
    state = state.replace(obs_stats=running_stats_update(state.obs_stats, data))

    def loss_fn(params, state, batch, weights, key, static, space):
        zero = 0.0 * sum(jnp.sum(x) for x in jax.tree.leaves(params))
        return zero, (jnp.zeros_like(weights), {"obs": batch.obs, "next_obs": batch.next_obs})

    out = q_learner.make_learn(loss_fn)(state, batch, jnp.ones((16,)), jax.random.key(0),
                                        config, space)
    for name in ("obs", "next_obs"):
        np.testing.assert_allclose(np.asarray(out.metrics[name]),
                                   normalized(state.obs_stats, np.asarray(getattr(batch, name))),
                                   rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("algo", ["dqn", "c51", "qrdqn", "iqn"])
def test_the_exploring_action_reads_the_normalized_observation(algo):
    """Training's epsilon-greedy action (the policy's step when not deterministic: IQN's
    samples its fractions) at epsilon 0 is the one the same network takes, without
    normalization, at the hand-normalized observation: the behaviour policy reads what
    the learner reads (IQN's once read the raw observation)."""
    state, _, config, _ = state_and_batch(algo, "CartPole-v1", normalize_obs=True)
    data = np.random.default_rng(1).normal(3.0, 0.5, size=(64, 4)).astype(np.float32)
    leaves, tree = jax.tree.flatten(state.params)  # a fresh C51 net picks one action anywhere
    noisy = [x + jax.random.normal(jax.random.key(i), x.shape, x.dtype)
             for i, x in enumerate(leaves)]
    state = state.replace(obs_stats=running_stats_update(state.obs_stats, data),
                          params=jax.tree.unflatten(tree, noisy),
                          hparams=state.hparams.replace(eps_start=0.0, eps_end=0.0))
    env, params = envs.make("CartPole-v1")
    algorithm = algos.get(algo)
    on = algorithm.make_policy(config.static(), env, params)
    off = algorithm.make_policy(config.replace(normalize_obs=False).static(), env, params)
    obs = probe_obs(4) + 3.0
    hand = jnp.asarray(normalized(state.obs_stats, obs))
    raw_actions, hand_actions, unnormalized = [], [], []
    for i in range(8):
        key = jax.random.key(i)
        raw_actions.append(np.asarray(on.step(state, (), jnp.asarray(obs), key, False)[1]))
        hand_actions.append(np.asarray(off.step(state, (), hand, key, False)[1]))
        unnormalized.append(np.asarray(off.step(state, (), jnp.asarray(obs), key, False)[1]))
    np.testing.assert_array_equal(np.stack(raw_actions), np.stack(hand_actions))
    assert not np.array_equal(np.stack(raw_actions), np.stack(unnormalized))

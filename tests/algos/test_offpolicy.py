"""The off-policy learners: gradients flow only where they should (reading 002's DDPG bug),
the warm-up and n-step plumbing, prioritized replay end to end, and diagnostics."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import envs
import jaxrl
from jaxrl.algos import ddpg, dqn, sac
from tests.algos.learner_batch import state_and_batch


def _all_zero(tree) -> bool:
    return all(float(jnp.abs(x).max()) == 0.0 for x in jax.tree.leaves(tree))


@pytest.mark.parametrize("algo", ["ddpg", "sac"])
def test_actor_loss_sends_no_gradient_to_the_critic(algo):
    state, batch, config, space = state_and_batch(algo, "Pendulum-v1")
    module = ddpg if algo == "ddpg" else sac
    actor, critic = module.networks(config, space)
    if algo == "ddpg":
        loss = lambda a, c: ddpg.actor_loss(a, c, actor, critic, batch.obs)[0]
    else:
        loss = lambda a, c: sac.actor_loss(a, c, jnp.float32(0.2), actor, critic, batch.obs,
                                           jax.random.key(5))[0]
    g_actor, g_critic = jax.jit(jax.grad(loss, argnums=(0, 1)))(state.params.actor,
                                                                  state.params.critic)
    assert _all_zero(g_critic)
    assert not _all_zero(g_actor)


@pytest.mark.parametrize("algo", ["dqn", "ddpg", "td3", "sac"])
def test_targets_receive_no_gradient(algo):
    state, batch, config, space = state_and_batch(algo, "CartPole-v1" if algo == "dqn"
                                                   else "Pendulum-v1")
    if algo == "dqn":
        network = dqn.make_network(config, space)
        targets = lambda tp: dqn.td_targets(state.params, tp, network, batch, config).sum()
    elif algo == "sac":
        actor, critic = sac.networks(config, space)
        targets = lambda tp: sac.td_targets(state.replace(target_params=tp), batch,
                                            jax.random.key(6), actor, critic).sum()
    else:
        actor, critic = ddpg.networks(config, space)
        targets = lambda tp: ddpg.td_targets(state.replace(target_params=tp), batch,
                                             jax.random.key(6), config, actor, critic).sum()
    assert _all_zero(jax.jit(jax.grad(targets))(state.target_params))


def test_warmup_acts_randomly_and_does_not_learn():
    result = jaxrl.train("dqn", env="CartPole-v1", seeds=1, total_steps=2 * 50 * 20,
                         progress=False, store=False, num_envs=2, log_interval=50,
                         learning_starts=1000, hidden=(8,))
    m = result.metrics
    assert m.learning_fraction.iloc[:10].eq(0).all() and m.learning_fraction.iloc[10:].eq(1).all()
    assert m.gradient_updates.iloc[9] == 0 and m.gradient_updates.iloc[-1] > 0


@pytest.mark.parametrize("algo, env_name", [("dqn", "CartPole-v1"), ("sac", "Pendulum-v1")])
def test_prioritized_nstep_run_reports_its_diagnostics(algo, env_name):
    result = jaxrl.train(algo, env=env_name, seeds=2, total_steps=3000, progress=False,
                         num_envs=2, log_interval=100, learning_starts=400, hidden=(16,),
                         buffer_size=1000, batch_size=32, prioritized=True, n_step=3)
    m = result.metrics
    expected = ["q_mean", "q_std", "q_min", "q_max", "td_error_abs_mean", "target_mean",
                "buffer_fill", "sample_staleness", "importance_weight_mean", "env_steps"]
    expected += (["epsilon", "loss", "grad_norm"] if algo == "dqn" else
                 ["alpha", "entropy", "actor_loss", "critic_loss", "alpha_loss",
                  "critic_grad_norm", "actor_grad_norm"])
    for col in expected:
        assert col in m, col
    learned = m[m.learning_fraction > 0]
    assert np.isfinite(learned[expected].to_numpy()).all()
    assert (learned.importance_weight_mean <= 1).all() and (learned.sample_staleness > 0).all()


def _ou_state_after_a_train_step(algo: str, env_name: str, **overrides):
    """``(initial noise, noise after one train step, static, state)`` with ``action_noise=ou``."""
    algorithm = jaxrl.algos.get(algo)
    env, params = envs.make(env_name)
    env = envs.EpisodeStatistics(env)
    config = algorithm.default_config(env_name).replace(
        hidden=(8,), num_envs=3, batch_size=8, buffer_size=64, learning_starts=8, log_interval=4,
        action_noise="ou", **overrides)
    static = config.static()
    state = jax.jit(lambda key: algorithm.init(key, env, params, config))(jax.random.key(0))
    after, _ = jax.jit(lambda s: algorithm.train_step(s, static, env, params))(state)
    return np.asarray(state.noise), np.asarray(after.noise), static, after


@pytest.mark.parametrize("algo", ["ddpg", "sac"])
def test_ou_noise_persists_within_episodes_and_restarts_at_their_ends(algo):
    # ou_theta 0: rho = 1, the process holds still, so only an episode's end can change it
    x0, x1, _, _ = _ou_state_after_a_train_step(algo, "Pendulum-v1", ou_theta=0.0)
    assert x0.shape == (3, 1)
    np.testing.assert_array_equal(x1, x0)  # Pendulum's episodes run 200 steps: no end yet
    x0, x1, _, _ = _ou_state_after_a_train_step(algo, "probe:continuous-action", ou_theta=0.0)
    assert not np.any(x1 == x0)  # one-step episodes: a fresh draw after every step


def test_the_default_white_noise_keeps_no_noise_state():
    state, *_ = state_and_batch("sac", "Pendulum-v1")
    assert state.noise is None


def _ou_exploration(module):
    """After one Pendulum train step with OU noise: ``(OU state [N, A], the state, the
    actor's output at the envs' observations, the explored action)``."""
    _, x1, static, state = _ou_state_after_a_train_step(module.__name__.split(".")[-1],
                                                        "Pendulum-v1")
    env, params = envs.make("Pendulum-v1")
    space, obs = env.action_space(params), state.carry.obs
    actor, _ = module.networks(static, space)
    out = actor.apply(state.params.actor, obs)
    return x1, state, out, module.explore(state, obs, jax.random.key(9), static, space)


def test_ddpg_explores_with_the_ou_state_scaled_by_exploration_noise():
    x1, state, mu, act = _ou_exploration(ddpg)
    expected = np.clip(mu + state.hparams.exploration_noise * x1, -1.0, 1.0)
    np.testing.assert_allclose(act, expected, rtol=1e-6)


def test_sac_explores_with_the_ou_state_as_its_standard_normal_draw():
    x1, _, dist, act = _ou_exploration(sac)
    np.testing.assert_allclose(act, np.tanh(dist.mean + np.exp(dist.log_std) * x1), rtol=1e-5)


@pytest.mark.parametrize("algo", ["ddpg", "sac"])
def test_acting_outside_training_draws_fresh_noise(algo):
    """Evaluation and demonstrations act on batches of their own: the training envs' OU
    processes are not theirs, so a stochastic action draws independent noise."""
    _, _, static, state = _ou_state_after_a_train_step(algo, "Pendulum-v1")
    env, params = envs.make("Pendulum-v1")
    act = jax.jit(jaxrl.algos.get(algo).policy(static, env, params).act, static_argnums=3)
    obs = jnp.zeros((5, 3))  # 5 eval envs, where training has 3
    a, b = act(state, obs, jax.random.key(1), False), act(state, obs, jax.random.key(2), False)
    assert a.shape == (5, 1) and not np.allclose(a, b)


def test_a_rounds_metrics_are_each_gradient_steps_mean_summed_in_the_carry():
    """`learn_round` chains the steps' states and reports each metric's mean over the round's
    gradient steps (summed in the loop, not stacked): as the stacked mean, up to rounding,
    with integer metrics averaged as floats and the metric tree's structure kept."""
    from jaxrl.algos.offpolicy.train_step import learn_round

    def learn_once(carry, key):
        state, learning = carry
        x = jax.random.normal(key, (3,))
        metrics = {"loss": (x ** 2).sum() + state, "count": jnp.int32(2) * state.astype(int),
                   "q": {"max": x.max()}}
        return (state + 1.0, learning), metrics

    keys = jax.random.split(jax.random.key(0), 7)
    state, metrics = jax.jit(lambda s, k: learn_round(learn_once, s, jnp.bool_(True), k))(
        jnp.float32(1.0), keys)
    assert float(state) == 8.0  # seven chained steps
    _, stacked = jax.lax.scan(learn_once, (jnp.float32(1.0), jnp.bool_(True)), keys)
    expected = jax.tree.map(lambda v: jnp.mean(v.astype(jnp.float32)), stacked)
    assert jax.tree.structure(metrics) == jax.tree.structure(expected)
    for got, want in zip(jax.tree.leaves(metrics), jax.tree.leaves(expected)):
        assert got.dtype == jnp.float32
        np.testing.assert_allclose(got, want, rtol=1e-6)
    assert float(metrics["count"]) == 8.0  # 2 x mean(1..7): a float mean, not a floored one

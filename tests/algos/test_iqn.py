"""IQN's parts: the implicit quantile network's shapes and its dependence on tau, the targets
(the next action over sampled fractions, terminal transitions collapsing to the reward, a
truncated one bootstrapping), the loss at the drawn fractions with no gradient into the
targets, the greedy policy at the midpoints, exploration at sampled fractions, quantile
regression through the cosine embedding, and one real learner step."""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

from envs.spaces import Discrete
from jaxrl.algos import iqn, q_learner
from jaxrl.ops import quantile_huber_loss, quantile_midpoints
from jaxrl.parts.q_networks import ImplicitQuantileNetwork
from tests.algos.learner_batch import jitted_learn, state_and_batch

SPACE = Discrete(3)
CONFIG = iqn.IQNConfig(hidden=(16, 16), num_quantiles=8, num_target_quantiles=6,
                       num_action_quantiles=4, embedding_dim=8)


def network_and_params(config=CONFIG, key=0):
    network = iqn.make_network(config, SPACE)
    params = network.init(jax.random.key(key), *iqn.example_inputs(5, config))
    return network, params


def test_the_network_gives_a_quantile_per_action_and_fraction_and_depends_on_tau():
    network, params = network_and_params()
    obs = jax.random.normal(jax.random.key(1), (7, 5))
    taus = jax.random.uniform(jax.random.key(2), (7, 9))
    out = network.apply(params, obs, taus)
    assert out.shape == (7, 3, 9)
    # fraction j of sample b is Z at (obs_b, tau_bj) alone: the same as evaluating it by itself
    alone = network.apply(params, obs[2:3], taus[2:3, 4:5])
    np.testing.assert_allclose(out[2, :, 4], alone[0, :, 0], rtol=1e-5, atol=1e-6)
    other = network.apply(params, obs, 1.0 - taus)
    assert not np.allclose(out, other)


def test_dueling_quantiles_centre_the_advantages_per_fraction():
    network = ImplicitQuantileNetwork(3, (16,), "relu", dueling=True, embedding_dim=8)
    params = network.init(jax.random.key(0), jnp.zeros((1, 5)), jnp.full((1, 1), 0.5))
    out = network.apply(params, jnp.ones((2, 5)), jnp.full((2, 4), 0.3))
    assert out.shape == (2, 3, 4)


def test_iqn_refuses_a_continuous_action_space():
    from envs.spaces import Box
    with pytest.raises(Exception, match="IQN needs a discrete action space"):
        iqn.make_network(CONFIG, Box(-1.0, 1.0, (2,)))


def batch(discount, reward=(0.5, 2.0)):
    from jaxrl.parts.buffers import nstep
    discount = jnp.asarray(discount, jnp.float32)
    obs = jax.random.normal(jax.random.key(3), (2, 5))
    return nstep.NStepTransition(
        obs=obs, action=jnp.array([0, 2]), reward=jnp.asarray(reward, jnp.float32),
        discount=discount, terminated=discount == 0, next_obs=obs + 1.0,
        steps=jnp.ones((2,), jnp.int32), ended=discount == 0)


@pytest.mark.parametrize("double_q", [False, True])
def test_targets_bootstrap_from_the_selected_action_and_terminals_give_the_reward(double_q):
    config = CONFIG.replace(double_q=double_q)
    network, online = network_and_params(config, key=0)
    _, target = network_and_params(config, key=1)
    b = batch(discount=[0.9, 0.0])  # the second transition is terminal
    key = jax.random.key(4)
    targets = iqn.target_quantiles(online, target, network, b, key, config)
    assert targets.shape == (2, config.num_target_quantiles)
    np.testing.assert_allclose(targets[1], 2.0)  # terminal: the reward alone, every sample
    # by hand: a* from the selector's mean over K drawn fractions, Z of the target net at N'
    select_key, target_key = jax.random.split(key)
    select_taus = jax.random.uniform(select_key, (2, config.num_action_quantiles))
    selector = online if double_q else target
    best = jnp.argmax(network.apply(selector, b.next_obs, select_taus).mean(-1), axis=-1)
    target_taus = jax.random.uniform(target_key, (2, config.num_target_quantiles))
    next_z = network.apply(target, b.next_obs, target_taus)[0, best[0]]
    np.testing.assert_allclose(targets[0], 0.5 + 0.9 * next_z, rtol=1e-5)


def test_the_loss_is_the_quantile_huber_loss_at_the_drawn_fractions_and_spares_the_target():
    network, online = network_and_params()
    _, target = network_and_params(key=1)
    state = type("S", (), dict(params=online, target_params=target,
                               hparams=CONFIG.hparams()))()
    b, weights, key = batch(discount=[0.9, 0.9]), jnp.array([1.0, 0.5]), jax.random.key(5)
    loss, (per_sample, metrics) = iqn.iqn_loss(online, state, b, weights, key, CONFIG, SPACE)
    target_key, online_key = jax.random.split(key)
    targets = iqn.target_quantiles(online, target, network, b, target_key, CONFIG)
    taus = jax.random.uniform(online_key, (2, CONFIG.num_quantiles))
    z = network.apply(online, b.obs, taus)
    quantiles = jnp.stack([z[0, 0], z[1, 2]])  # the taken actions 0 and 2
    expected = quantile_huber_loss(quantiles, targets, taus, 1.0)
    np.testing.assert_allclose(per_sample, expected, rtol=1e-5)
    assert float(loss) == pytest.approx(float((expected * weights).mean()), rel=1e-5)
    assert float(metrics["q_mean"]) == pytest.approx(float(quantiles.mean()), rel=1e-5)

    def through_target(tp):
        s = type("S", (), dict(params=online, target_params=tp, hparams=CONFIG.hparams()))()
        return iqn.iqn_loss(online, s, b, weights, key, CONFIG, SPACE)[0]

    grads = jax.grad(through_target)(target)
    assert not any(np.any(np.asarray(g)) for g in jax.tree.leaves(grads))


def test_the_greedy_policy_averages_the_midpoints_and_exploration_samples():
    network, params = network_and_params()
    obs = jax.random.normal(jax.random.key(6), (4, 5))
    q = iqn.q_values(params, CONFIG.hparams(), obs, CONFIG, SPACE)
    mids = jnp.broadcast_to(quantile_midpoints(4), (4, 4))
    np.testing.assert_allclose(q, network.apply(params, obs, mids).mean(-1), rtol=1e-6)
    np.testing.assert_array_equal(q, iqn.q_values(params, CONFIG.hparams(), obs, CONFIG, SPACE))
    # epsilon 0: the argmax of the mean over K fractions drawn with the key's first half
    hp = CONFIG.hparams().replace(eps_start=0.0, eps_end=0.0, total_steps=100)
    state = type("S", (), dict(params=params, hparams=hp, env_steps=jnp.array(0)))()
    key = jax.random.key(7)
    action = iqn.explore(state, obs, key, CONFIG, SPACE)
    taus = jax.random.uniform(jax.random.split(key)[0], (4, 4))
    np.testing.assert_array_equal(action,
                                  jnp.argmax(network.apply(params, obs, taus).mean(-1), -1))


def test_quantile_regression_through_the_cosine_embedding_recovers_the_quantiles():
    """One state, one action, targets drawn from U(0, 1): Z(tau) learns tau itself. (The
    state is not zero: the paper's product psi(x) * phi(tau) has no tau in it where the torso's
    features are all zero, as they are at a zero observation with zero biases.)"""
    network = ImplicitQuantileNetwork(1, (32,), "relu", embedding_dim=16)
    obs = jnp.ones((1, 2))
    params = network.init(jax.random.key(0), obs, jnp.full((1, 1), 0.5))
    opt = optax.adam(3e-3)

    def loss(p, key):
        tau_key, target_key = jax.random.split(key)
        taus = jax.random.uniform(tau_key, (1, 32))
        z = network.apply(p, obs, taus)[:, 0]
        targets = jax.random.uniform(target_key, (1, 64))
        return quantile_huber_loss(z, targets, taus, 0.05).mean()

    @jax.jit
    def step(carry, key):
        p, s = carry
        updates, s = opt.update(jax.grad(loss)(p, key), s, p)
        return (optax.apply_updates(p, updates), s), None

    (params, _), _ = jax.lax.scan(step, (params, opt.init(params)),
                                  jax.random.split(jax.random.key(1), 3000))
    taus = jnp.array([[0.1, 0.3, 0.5, 0.7, 0.9]])
    np.testing.assert_allclose(network.apply(params, obs, taus)[0, 0], taus[0], atol=0.06)


def test_a_learner_step_returns_its_per_sample_loss_as_priorities():
    state, b, config, space = state_and_batch("iqn", "CartPole-v1", target_update_period=3,
                                              num_quantiles=8, num_target_quantiles=8,
                                              num_action_quantiles=4, embedding_dim=8)
    weights = jnp.linspace(0.2, 1.0, 16)
    key = jax.random.key(0)
    out = jitted_learn(q_learner.make_learn(iqn.iqn_loss), config, space)(state, b, weights, key)
    _, (per_sample, _) = iqn.iqn_loss(state.params, state, b, weights, key, config, space)
    np.testing.assert_allclose(out.td_error, per_sample, rtol=1e-5)
    assert (np.asarray(out.td_error) > 0).all()
    assert not jax.tree.all(jax.tree.map(jnp.array_equal, out.params, state.params))
    assert jax.tree.all(jax.tree.map(jnp.array_equal, out.target_params, state.target_params))



def test_a_whole_target_step_every_update_gives_the_online_networks_targets():
    """``tau 1.0, target_update_period 1`` (rejax's IQN, the navix suite's entries): after each
    update the target network is the online one, so the next update's targets are the online
    network's."""
    state, b, config, space = state_and_batch("iqn", "CartPole-v1", target_update_period=1,
                                              tau=1.0, num_quantiles=8, num_target_quantiles=8,
                                              num_action_quantiles=4, embedding_dim=8)
    out = jitted_learn(q_learner.make_learn(iqn.iqn_loss), config, space)(
        state, b, jnp.ones(16), jax.random.key(0))
    assert not jax.tree.all(jax.tree.map(jnp.array_equal, out.params, state.params))
    assert jax.tree.all(jax.tree.map(jnp.array_equal, out.target_params, out.params))

def test_the_memory_model_adds_the_pairs_and_the_per_fraction_layers():
    from jaxrl import algos
    from jaxrl.algos import offpolicy
    from jaxrl.engine.spec import resolve
    from jaxrl.parts import memory
    algorithm, env, env_params, config, _ = resolve("iqn", "CartPole-v1", 10_000, 1, None,
                                                    buffer_size=1000, batch_size=32)
    state = jax.eval_shape(lambda k: algorithm.init(k, env, env_params, config),
                           jax.random.key(0))
    plain = offpolicy.memory_model(config, state, 16, 4)
    extra = algos.get("iqn").memory_model(config, state, 16, 4)
    assert extra.replay_bytes == plain.replay_bytes == memory.tree_bytes(state.buffer) > 0
    assert extra.working_bytes - plain.working_bytes >= 3 * 32 * 64 * 64 * 4

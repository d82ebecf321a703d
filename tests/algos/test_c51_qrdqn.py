"""C51's and QR-DQN's targets and losses on DQN's machinery, worked by hand with a stand-in
network: the next action picked by the online net's mean (double Q) or the target net's,
terminal transitions collapsing to the reward, the per-sample priorities, no gradient into
the targets; then one real learner step each."""

from types import SimpleNamespace

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxrl.algos import c51, q_learner, qrdqn
from jaxrl.parts.buffers import nstep
from tests.algos.learner_batch import jitted_learn, state_and_batch


class Table:
    """A stand-in network whose "parameters" are its outputs ``[B, A, K]``."""

    def apply(self, params, obs):
        return params


def batch_of(reward, discount, action):
    two = jnp.zeros((2, 3))
    discount = jnp.asarray(discount, jnp.float32)
    return nstep.NStepTransition(obs=two, action=jnp.asarray(action), reward=jnp.asarray(
        reward, jnp.float32), discount=discount, terminated=discount == 0, next_obs=two,
        steps=jnp.ones((2,), jnp.int32), ended=discount == 0)


def logits_of(probs):
    return jnp.log(jnp.clip(jnp.asarray(probs, jnp.float32), 1e-12))


# C51 on the support [-1, 0, 1]: the target net's next distributions put action 0 at +1 and
# action 1 at -1; the online net's next means are the other way round.
TARGET_NEXT = logits_of([[[0, 0, 1], [1, 0, 0]]] * 2)
ONLINE_NEXT = logits_of([[[1, 0, 0], [0, 0, 1]]] * 2)
ONLINE_NOW = logits_of([[[0.2, 0.3, 0.5], [1 / 3] * 3]] * 2)  # action 0 taken
C51_BATCH = batch_of(reward=[0.5, 0.5], discount=[0.5, 0.0], action=[0, 0])  # 2nd terminal


def c51_state(double_q):
    config = c51.C51Config(num_atoms=3, v_min=-1.0, v_max=1.0, double_q=double_q)
    return config, SimpleNamespace(params=ONLINE_NEXT, target_params=TARGET_NEXT,
                                   hparams=config.hparams())


@pytest.mark.parametrize(("double_q", "first"), [
    # double: a* = 1 (online), atom -1 -> 0.5 + 0.5 * -1 = 0: all mass on 0
    (True, [0.0, 1.0, 0.0]),
    # plain: a* = 0 (target), atom +1 -> 0.5 + 0.5 * 1 = 1: all mass on 1
    (False, [0.0, 0.0, 1.0]),
])
def test_c51_target_selects_projects_and_collapses_terminals(double_q, first, monkeypatch):
    config, state = c51_state(double_q)
    z = c51.support(state.hparams, config)
    target = c51.target_distribution(state.params, state.target_params, Table(), C51_BATCH, z,
                                     config)
    # the terminal transition's target is its reward, 0.5: half on 0, half on 1
    np.testing.assert_allclose(target, [first, [0.0, 0.5, 0.5]], atol=1e-6)

    monkeypatch.setattr(c51, "make_network", lambda static, space: Table())
    weights = jnp.array([1.0, 0.5])
    loss, (priority, metrics) = c51.c51_loss(ONLINE_NOW, state, C51_BATCH, weights, None,
                                             config, None)
    log_p = np.log([0.2, 0.3, 0.5])
    cross_entropy = [-np.dot(first, log_p), -np.dot([0.0, 0.5, 0.5], log_p)]
    np.testing.assert_allclose(priority, cross_entropy, rtol=1e-5)
    assert float(loss) == pytest.approx((cross_entropy[0] + 0.5 * cross_entropy[1]) / 2, 1e-5)
    q_now = 0.5 - 0.2  # the online distribution's mean
    target_means = [np.dot(first, [-1, 0, 1]), 0.5]
    assert float(metrics["q_mean"]) == pytest.approx(q_now, abs=1e-5)
    assert float(metrics["td_error_abs_max"]) == pytest.approx(
        max(abs(m - q_now) for m in target_means), abs=1e-5)

    grad = jax.grad(lambda tp: c51.c51_loss(ONLINE_NOW, SimpleNamespace(
        params=state.params, target_params=tp, hparams=state.hparams), C51_BATCH, weights,
        None, config, None)[0])(TARGET_NEXT)
    assert not np.any(np.asarray(grad))  # no gradient reaches the target net


# QR-DQN with 2 quantiles (tau = 1/4, 3/4): the target net's next quantiles are [0, 2] for
# action 0 (mean 1) and [-4, -2] for action 1 (mean -3); the online net prefers action 1.
QR_TARGET_NEXT = jnp.array([[[0.0, 2.0], [-4.0, -2.0]]] * 2)
QR_ONLINE_NEXT = jnp.array([[[0.0, 0.0], [1.0, 1.0]]] * 2)
QR_ONLINE_NOW = jnp.array([[[0.0, 1.0], [9.0, 9.0]]] * 2)  # action 0 taken: theta = [0, 1]
QR_BATCH = batch_of(reward=[1.0, 1.0], discount=[0.5, 0.0], action=[0, 0])


@pytest.mark.parametrize(("double_q", "first", "first_loss"), [
    # double: a* = 1, T = 1 + 0.5 [-4, -2] = [-1, 0]; theta = [0, 1]:
    # i = 0 (1/4): u = [-1, 0]: (3/4 huber(-1) + 1/4 0) / 2 = 0.1875
    # i = 1 (3/4): u = [-2, -1]: 1/4 (1.5 + 0.5) / 2 = 0.25
    (True, [-1.0, 0.0], 0.1875 + 0.25),
    # plain: a* = 0, T = 1 + 0.5 [0, 2] = [1, 2]:
    # i = 0: u = [1, 2]: 1/4 (0.5 + 1.5) / 2 = 0.25; i = 1: u = [0, 1]: 3/4 (0 + 0.5) / 2
    (False, [1.0, 2.0], 0.25 + 0.1875),
])
def test_qrdqn_targets_and_loss_by_hand(double_q, first, first_loss, monkeypatch):
    config = qrdqn.QRDQNConfig(num_quantiles=2, double_q=double_q)
    state = SimpleNamespace(params=QR_ONLINE_NEXT, target_params=QR_TARGET_NEXT,
                            hparams=config.hparams())
    targets = qrdqn.target_quantiles(state.params, state.target_params, Table(), QR_BATCH,
                                     config)
    np.testing.assert_allclose(targets, [first, [1.0, 1.0]])  # terminal: the reward alone

    monkeypatch.setattr(qrdqn, "make_network", lambda static, space: Table())
    weights = jnp.array([1.0, 0.5])
    loss, (priority, metrics) = qrdqn.qr_loss(QR_ONLINE_NOW, state, QR_BATCH, weights, None,
                                              config, None)
    # the terminal sample: T = [1, 1], theta = [0, 1]: i = 0: u = [1, 1]: 1/4 0.5 = 0.125;
    # i = 1: u = [0, 0]: 0
    np.testing.assert_allclose(priority, [first_loss, 0.125], rtol=1e-6)
    assert float(loss) == pytest.approx((first_loss + 0.5 * 0.125) / 2, rel=1e-6)
    assert float(metrics["q_mean"]) == pytest.approx(0.5)
    grad = jax.grad(lambda tp: qrdqn.qr_loss(QR_ONLINE_NOW, SimpleNamespace(
        params=state.params, target_params=tp, hparams=state.hparams), QR_BATCH, weights,
        None, config, None)[0])(QR_TARGET_NEXT)
    assert not np.any(np.asarray(grad))


@pytest.mark.parametrize(("module", "size"), [(c51, {"num_atoms": 11}),
                                              (qrdqn, {"num_quantiles": 8})])
def test_a_learner_step_returns_its_per_sample_loss_as_priorities(module, size):
    name = module.__name__.rsplit(".", 1)[-1]
    state, batch, config, space = state_and_batch(name, "CartPole-v1", target_update_period=3,
                                                  **size)
    weights = jnp.linspace(0.2, 1.0, 16)
    loss_fn = module.c51_loss if module is c51 else module.qr_loss
    out = jitted_learn(q_learner.make_learn(loss_fn), config, space)(state, batch, weights,
                                                                     jax.random.key(0))
    _, (per_sample, _) = loss_fn(state.params, state, batch, weights, None, config, space)
    np.testing.assert_allclose(out.td_error, per_sample, rtol=1e-5)
    assert (np.asarray(out.td_error) > 0).all()
    assert np.isfinite(float(out.metrics["loss"]))
    assert not jax.tree.all(jax.tree.map(jnp.array_equal, out.params, state.params))
    # update 1 of 3: the target stays
    assert jax.tree.all(jax.tree.map(jnp.array_equal, out.target_params, state.target_params))

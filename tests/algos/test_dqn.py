"""DQN's own switches, each checked against numbers worked by hand: double-Q target selection,
the dueling head, the epsilon schedule, the weighted Huber/squared loss and the target-network
period. (Shared off-policy behaviour: test_offpolicy.py.)"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxrl.algos import dqn, q_learner
from jaxrl.parts.buffers import nstep
from jaxrl.parts.q_networks import QNetwork
from tests.algos.learner_batch import jitted_learn, state_and_batch


class Table:
    """A stand-in Q-network whose "parameters" are the Q-values themselves ``[B, n]``."""

    def apply(self, params, obs):
        return params


def batch_of(reward, discount, action=(0, 0)):
    two = jnp.zeros((2, 3))
    return nstep.NStepTransition(obs=two, action=jnp.asarray(action), reward=jnp.asarray(reward),
                                 discount=jnp.asarray(discount),
                                 terminated=jnp.asarray(discount) == 0, next_obs=two,
                                 steps=jnp.ones((2,), jnp.int32),
                                 ended=jnp.asarray(discount) == 0)


@pytest.mark.parametrize(("double_q", "expected"), [(True, [2.0, 1.0]), (False, [2.5, 1.0])])
def test_double_q_selects_online_and_evaluates_target(double_q, expected):
    online = jnp.array([[1.0, 5.0], [4.0, 0.0]])  # Q(s', .): picks action 1, then 0
    target = jnp.array([[3.0, 2.0], [7.0, 1.0]])  # Q_target(s', .): picks action 0, then 0
    batch = batch_of(reward=[1.0, 1.0], discount=[0.5, 0.0])  # the second s' is terminal
    config = dqn.DQNConfig(double_q=double_q)
    y = dqn.td_targets(online, target, Table(), batch, config)
    # double: 1 + 0.5 * Q_target(s', 1) = 2; plain: 1 + 0.5 * max Q_target(s') = 2.5
    np.testing.assert_allclose(y, expected)


def test_dueling_head_is_value_plus_mean_zero_advantage():
    net = QNetwork(3, (8,), "relu", dueling=True)
    obs = jax.random.normal(jax.random.key(0), (5, 4))
    variables = net.init(jax.random.key(1), obs)
    q, seen = net.apply(variables, obs, capture_intermediates=True)
    features = seen["intermediates"]["Torso_0"]["__call__"][0]
    heads = {k: v for k, v in variables["params"].items() if k.startswith("Dense")}
    (value_head,) = [h for h in heads.values() if h["kernel"].shape[-1] == 1]
    value = features @ value_head["kernel"] + value_head["bias"]
    assert q.shape == (5, 3)
    np.testing.assert_allclose(q.mean(axis=-1), value[:, 0], rtol=1e-5, atol=1e-6)
    plain = QNetwork(3, (8,), "relu", dueling=False).init(jax.random.key(1), obs)
    assert jax.tree.structure(plain) != jax.tree.structure(variables)


def test_a_dueling_learner_step_is_finite_and_moves_the_net():
    state, batch, config, space = state_and_batch("dqn", "CartPole-v1", dueling=True)
    out = jitted_learn(q_learner.make_learn(dqn.td_loss), config, space)(state, batch, jnp.ones((16,)), jax.random.key(0))
    assert np.isfinite(float(out.metrics["loss"]))
    assert not jax.tree.all(jax.tree.map(jnp.array_equal, out.params, state.params))


def test_epsilon_decays_linearly_then_holds():
    state, _, _, _ = state_and_batch("dqn", "CartPole-v1", eps_start=1.0, eps_end=0.1,
                                     eps_decay_fraction=0.5)
    state = state.replace(hparams=state.hparams.replace(total_steps=jnp.float32(1000)))
    at = lambda steps: float(q_learner.epsilon(state.replace(env_steps=jnp.int32(steps))))
    assert at(0) == pytest.approx(1.0)
    assert at(250) == pytest.approx(0.55)  # halfway through the 500-step decay
    assert at(500) == pytest.approx(0.1) and at(900) == pytest.approx(0.1)


@pytest.mark.parametrize(("loss", "per_sample"), [("mse", [0.5 * 4.0, 0.5 * 0.25]),
                                                  ("huber", [2.0 - 0.5, 0.5 * 0.25])])
def test_loss_is_importance_weighted(loss, per_sample):
    q = jnp.array([[1.0, 9.0], [9.0, 2.0]])
    batch = batch_of(reward=[0.0, 0.0], discount=[0.0, 0.0], action=(0, 1))
    targets, weights = jnp.array([3.0, 1.5]), jnp.array([1.0, 0.5])  # td = 2, -0.5
    value, (td, q_taken) = dqn.dqn_loss(q, Table(), batch, targets, weights,
                                        dqn.DQNConfig(loss=loss))
    np.testing.assert_allclose(td, [2.0, -0.5])
    np.testing.assert_allclose(q_taken, [1.0, 2.0])
    assert float(value) == pytest.approx((per_sample[0] + 0.5 * per_sample[1]) / 2)


def test_target_network_moves_only_every_period():
    state, batch, config, space = state_and_batch("dqn", "CartPole-v1", target_update_period=3,
                                                  tau=1.0)
    weights, key = jnp.ones((16,)), jax.random.key(0)
    learn = jitted_learn(q_learner.make_learn(dqn.td_loss), config, space)
    early = learn(state, batch, weights, key)  # update 1 of 3
    assert jax.tree.all(jax.tree.map(jnp.array_equal, early.target_params, state.target_params))
    due = learn(state.replace(update_step=jnp.int32(2)), batch, weights, key)
    assert jax.tree.all(jax.tree.map(jnp.array_equal, due.target_params, due.params))  # tau 1


def test_rmsprop_is_torchs_rmsprop_with_momentum():
    """``optimizer="rmsprop"`` steps as ``torch.optim.RMSprop(alpha, eps, momentum)`` does (the
    optimizer of reading 002's DQN): v <- a v + (1 - a) g^2, b <- m b + g / (sqrt(v) + eps),
    theta <- theta - lr b, worked here in numpy."""
    config = dqn.DQNConfig(optimizer="rmsprop", rmsprop_style="pytorch", max_grad_norm=1e9,
                           rmsprop_decay=0.95, rmsprop_eps=0.1, rmsprop_momentum=0.95)
    tx = q_learner.optimizer(config.hparams(), config.static(), 2.5e-4)
    params = {"w": jnp.zeros(3)}
    opt_state = tx.init(params)
    v, b = np.zeros(3), np.zeros(3)
    for g in ([0.1, -2.0, 0.0], [0.5, 0.5, 3.0], [-1.0, 0.02, 0.3]):
        g = np.asarray(g)
        updates, opt_state = tx.update({"w": jnp.asarray(g, jnp.float32)}, opt_state, params)
        v = 0.95 * v + 0.05 * g**2
        b = 0.95 * b + g / (np.sqrt(v) + 0.1)
        np.testing.assert_allclose(np.asarray(updates["w"]), -2.5e-4 * b, rtol=1e-5, atol=1e-9)


def test_the_atari_presets_rmsprop_climbs_the_truncation_rung():
    """The Atari preset's optimizer (vel's RMSProp: lr 2.5e-4, alpha 0.95, momentum 0.95,
    eps 0.1) learns the value of a truncated episode on the probe ladder."""
    from jaxrl.studies.probe import run_ladder

    d = dqn.default_config("atari:Pong")
    assert (d.optimizer, d.rmsprop_style, d.learning_rate) == ("rmsprop", "pytorch", 2.5e-4)
    assert (d.rmsprop_decay, d.rmsprop_momentum, d.rmsprop_eps) == (0.95, 0.95, 0.1)
    (result,) = run_ladder("dqn", seeds=4, rungs=["probe:truncation"], optimizer="rmsprop",
                           learning_rate=d.learning_rate, rmsprop_decay=d.rmsprop_decay,
                           rmsprop_momentum=d.rmsprop_momentum, rmsprop_eps=d.rmsprop_eps)
    assert result.passed, (result.measured, result.expected)


def test_the_cleanrl_preset_keeps_cleanrl_dqns_cadence_in_env_steps():
    """`dqn/cleanrl-classic` steps 10 envs once per update where CleanRL steps 1 env 10 times:
    per env step the same updates (one of batch 128 per 10), target copies (every 500) and
    epsilon schedule (1 -> 0.05 over half of the 500k steps) as CleanRL's dqn.py."""
    from jaxrl.algos import references
    from jaxrl.cli.discover import reference_config

    c = reference_config(references.PRESETS["dqn/cleanrl-classic"])
    env_steps_per_update = c.num_envs / c.gradient_steps
    assert env_steps_per_update == 10 and c.batch_size == 128
    assert c.target_update_period * env_steps_per_update == 500 and c.tau == 1.0
    assert (c.eps_start, c.eps_end, c.eps_decay_fraction) == (1.0, 0.05, 0.5)
    assert (c.buffer_size, c.learning_starts, c.learning_rate) == (10_000, 10_000, 2.5e-4)
    assert tuple(c.hidden) == (120, 84) and c.activation == "relu"
    assert not c.double_q and not c.dueling and c.loss == "mse" and c.n_step == 1
    assert c.bootstrap_truncation  # SB3's buffer bootstraps a time-limit end


def test_the_zoo_acrobot_preset_keeps_sb3s_cadence_in_env_steps():
    """`dqn/zoo-acrobot` steps 16 envs once per round of 4 updates where SB3 steps 1 env 16
    times: per env step the zoo's updates (4 of batch 512 per 16), target copies (every 5,000
    env steps, which SB3 counts in env steps and jaxrl in updates) and epsilon schedule."""
    from jaxrl.algos import references
    from jaxrl.cli.discover import reference_config

    c = reference_config(references.PRESETS["dqn/zoo-acrobot"])
    env_steps_per_update = c.num_envs / c.gradient_steps
    assert env_steps_per_update == 4 and c.batch_size == 512
    assert c.target_update_period * env_steps_per_update == 5_000 and c.tau == 1.0
    assert (c.eps_start, c.eps_end, c.eps_decay_fraction) == (1.0, 0.11, 0.06)
    assert (c.buffer_size, c.learning_starts, c.learning_rate) == (100_000, 0, 2.5e-4)
    assert tuple(c.hidden) == (64, 64) and c.activation == "relu"
    assert not c.double_q and c.loss == "huber" and c.max_grad_norm == 10.0
    assert c.bootstrap_truncation

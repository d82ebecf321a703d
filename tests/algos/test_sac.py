"""SAC's own pieces against hand-worked values: the soft TD target, the temperature's loss
and its switch. (Shared off-policy behaviour: test_offpolicy.py.)"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxrl.algos import offpolicy, sac
from tests.algos.learner_batch import state_and_batch


def test_soft_target_subtracts_alpha_log_prob_from_the_smaller_critic():
    state, batch, config, space = state_and_batch("sac", "Pendulum-v1")
    state = state.replace(params=state.params.replace(log_alpha=jnp.log(jnp.float32(0.3))))
    actor, critic = sac.networks(config, space)
    key = jax.random.key(5)
    y = jax.jit(lambda s, b, k: sac.td_targets(s, b, k, actor, critic))(state, batch, key)

    @jax.jit
    def by_hand(state, batch, key):
        a, log_prob = actor.apply(state.params.actor, batch.next_obs).sample_and_log_prob(key)
        return offpolicy.critic_values(critic, state.target_params.critic, batch.next_obs,
                                       a), log_prob

    q, log_prob = by_hand(state, batch, key)
    assert q.shape == (2, 16)  # two target critics
    expected = batch.reward + batch.discount * (jnp.minimum(q[0], q[1]) - 0.3 * log_prob)
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("log_prob", "direction"), [(2.0, +1), (-3.0, -1)])
def test_temperature_rises_when_the_policy_is_too_sure(log_prob, direction):
    """Target entropy -1: a log-prob of 2 (entropy -2, too low) must raise alpha under
    gradient descent; a log-prob of -3 (entropy 3, above target) must lower it."""
    grad = jax.grad(sac.alpha_loss)(jnp.float32(0.0), jnp.full((4,), log_prob), -1.0)
    assert np.sign(-float(grad)) == direction
    assert float(grad) == pytest.approx(-(log_prob - 1.0))


@pytest.mark.parametrize("autotune", [True, False])
def test_the_temperature_moves_only_when_autotuned(autotune):
    state, batch, config, space = state_and_batch("sac", "Pendulum-v1", autotune_alpha=autotune)
    learn = jax.jit(lambda s, b, w, k: sac.learn(s, b, w, k, config, space))
    out = learn(state, batch, jnp.ones((16,)), jax.random.key(0))
    moved = not np.array_equal(out.params.log_alpha, state.params.log_alpha)
    assert moved == autotune
    assert ("alpha_loss" in out.metrics) == autotune
    assert float(out.metrics["alpha"]) == pytest.approx(float(jnp.exp(out.params.log_alpha)))

"""DDPG's own pieces against hand-worked values: exploration noise, the TD target through the
target actor and critic, and an actor updated at every step. (TD3's switches: test_td3.py;
shared off-policy behaviour: test_offpolicy.py.)"""

import jax
import jax.numpy as jnp
import numpy as np

from jaxrl.algos import ddpg, offpolicy
from tests.algos.learner_batch import jitted_learn, state_and_batch


def test_exploration_adds_clipped_gaussian_noise():
    state, batch, config, space = state_and_batch("ddpg", "Pendulum-v1")
    actor, _ = ddpg.networks(config, space)
    mu = actor.apply(state.params.actor, batch.obs)
    quiet = state.replace(hparams=state.hparams.replace(exploration_noise=jnp.float32(0.0)))
    np.testing.assert_allclose(ddpg.explore(quiet, batch.obs, jax.random.key(0), config, space),
                               mu)
    loud = state.replace(hparams=state.hparams.replace(exploration_noise=jnp.float32(100.0)))
    noisy = ddpg.explore(loud, batch.obs, jax.random.key(0), config, space)
    assert float(jnp.abs(noisy).max()) <= 1.0 and float(jnp.mean(jnp.abs(noisy) == 1.0)) > 0.9


def test_target_uses_the_target_actor_and_critic():
    state, batch, config, space = state_and_batch("ddpg", "Pendulum-v1")
    assert not config.target_policy_noise and config.num_critics == 1
    actor, critic = ddpg.networks(config, space)
    y = ddpg.td_targets(state, batch, jax.random.key(0), config, actor, critic)
    a_next = actor.apply(state.target_params.actor, batch.next_obs)
    q_next = offpolicy.critic_values(critic, state.target_params.critic, batch.next_obs, a_next)
    np.testing.assert_allclose(y, batch.reward + batch.discount * q_next[0], rtol=1e-5, atol=1e-5)
    # a different online actor changes nothing: only the target networks are read
    other = state.replace(params=state.params.replace(actor=jax.tree.map(
        lambda x: x + 1.0, state.params.actor)))
    np.testing.assert_allclose(ddpg.td_targets(other, batch, jax.random.key(0), config, actor,
                                               critic), y)


def test_the_actor_and_targets_move_at_every_update():
    state, batch, config, space = state_and_batch("ddpg", "Pendulum-v1")
    assert config.policy_delay == 1
    out = jitted_learn(ddpg.learn, config, space)(state, batch, jnp.ones((16,)), jax.random.key(0))
    for new, old in ((out.params.actor, state.params.actor),
                     (out.target_params, state.target_params)):
        assert not jax.tree.all(jax.tree.map(jnp.array_equal, new, old))

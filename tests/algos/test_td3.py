"""TD3 as switches of the DDPG learner: two independently initialized critics, and the actor (and
the targets) updated every second critic update."""

import jax
import jax.numpy as jnp
import numpy as np

from jaxrl import algos
from jaxrl.algos import ddpg
from tests.algos.learner_batch import jitted_learn, state_and_batch


def test_td3_switches_change_the_learner():
    assert algos.get("td3").default_config("Pendulum-v1").num_critics == 2
    state, _, _, _ = state_and_batch("td3", "Pendulum-v1")
    stacked = state.params.critic
    leaves = jax.tree.leaves(stacked)
    assert leaves[0].shape[0] == 2  # two critics, independently initialized
    assert any(not np.array_equal(np.asarray(x[0]), np.asarray(x[1])) for x in leaves)


def test_td3_delays_the_actor():
    state, batch, config, space = state_and_batch("td3", "Pendulum-v1")
    weights = jnp.ones((16,))
    learn = jitted_learn(ddpg.learn, config, space)
    first = learn(state, batch, weights, jax.random.key(7))  # update 1 of 2
    assert jax.tree.all(jax.tree.map(jnp.array_equal, first.params.actor,
                                     state.params.actor))
    assert jax.tree.all(jax.tree.map(jnp.array_equal, first.target_params, state.target_params))
    second = learn(state.replace(update_step=jnp.int32(1)), batch, weights, jax.random.key(7))
    assert not jax.tree.all(jax.tree.map(jnp.array_equal, second.params.actor,
                                         state.params.actor))

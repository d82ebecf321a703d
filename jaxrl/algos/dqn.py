"""Deep Q-Network (Mnih et al., 2015) with the Rainbow-era switches: double Q (van Hasselt et
al., 2016), dueling heads (Wang et al., 2016), n-step returns and prioritized replay (Schaul et
al., 2016).

    for each env-step round:                                  (offpolicy.make_train_step)
        a = argmax_a Q(s, a) with probability 1 - eps, else uniform     (explore)
        store the n-step transition (s, a, R, discount, s')
        gradient_steps times, on a sampled batch with importance weights w:
            a* = argmax_a' Q(s', a')  if double_q  else  argmax_a' Q_target(s', a')
            y  = R + discount * Q_target(s', a*)                          (dqn_loss)
            L  = E[w huber(y - Q(s, a))]
            theta <- Adam or RMSProp(clip_by_global_norm(grad L))
            every target_update_period updates: theta_target <- tau theta + (1 - tau) theta_target

``discount`` is ``gamma^m (1 - terminated)`` from the n-step window, so a time limit
bootstraps from the final observation and a terminal state does not.

DQN is the replay Q-learners' kit (`jaxrl.algos.q_learner`) with a Q-network and the TD loss.
"""

from __future__ import annotations

import dataclasses
from typing import cast

import chex
import jax
import jax.numpy as jnp
import optax

from envs.spaces import Discrete
from jaxrl.algos import offpolicy, q_learner
from jaxrl.algos.families import family_defaults
from jaxrl.algos.q_learner import QLearnerHparams, QLearnerStatic, q_metrics, take_action
from jaxrl.config import AlgoConfig, ConfigError, static
from jaxrl.parts.q_networks import QNetwork
from jaxrl.parts.user_networks import UserQNetwork, check_network, is_own

LOSSES = ("huber", "mse")


@dataclasses.dataclass(frozen=True)
class DQNStatic(QLearnerStatic):
    """DQN's static fields (shapes, loop counts, flags)."""

    loss: str = static("huber", "huber | mse")
    network: str = static("default", "your own whole Q-network, a Flax module from a factory "
                          "(package.module:factory, or a name given to register_network) called "
                          "with the number of actions: obs -> Q [..., n]; default: jaxrl's, from "
                          "hidden / torso (jaxrl.parts.user_networks)")

    def validate(self) -> None:
        super().validate()
        check_network(self.network)
        if self.loss not in LOSSES:
            raise ConfigError(f"loss must be one of {LOSSES}, got {self.loss!r}")


@dataclasses.dataclass(frozen=True)
class DQNConfig(AlgoConfig, QLearnerHparams, DQNStatic):
    """DQN's config: the fields of `DQNStatic` and `QLearnerHparams` as one."""


def default_config(env_name: str) -> DQNConfig:
    """DQN's defaults for ``env_name``'s family (`jaxrl.algos.families`)."""
    return DQNConfig(**family_defaults("dqn", env_name))


def make_network(static: DQNStatic, space: Discrete) -> QNetwork | UserQNetwork:
    if not isinstance(space, Discrete):
        raise ConfigError(f"DQN needs a discrete action space, got {space!r}")
    if is_own(static.network):
        return UserQNetwork(space.n, static.network)
    return QNetwork(space.n, tuple(static.hidden), static.activation, static.dueling,
                    static.torso)


def q_values(params, hparams, obs: jax.Array, static: DQNStatic, space) -> jax.Array:
    """``[B, A]`` the Q-network's output at flat observations ``obs [B, obs_dim]``."""
    del hparams
    return cast(jax.Array, make_network(static, space).apply(params, obs))


def td_targets(params, target_params, network, batch, static: QLearnerStatic, space=None
               ) -> jax.Array:
    """``[B]`` ``y = R + discount * Q_target(s', a*)`` (no gradient flows into it)."""
    q_next = q_learner.next_outputs(params, target_params, network, batch.next_obs, static,
                                    space=space)
    return jax.lax.stop_gradient(batch.reward + batch.discount * q_next)


def dqn_loss(params, network, batch, targets, weights, static: DQNStatic):
    """Importance-weighted Huber (or squared) TD loss on a batch (leaves ``[B, ...]``, actions
    ``[B]``) with targets and weights ``[B]``. ``-> (loss, (td [B], q_taken [B]))``."""
    offpolicy.check_transitions(batch, weights)
    chex.assert_rank(batch.action, 1)
    chex.assert_equal_shape([targets, weights])
    q = network.apply(params, batch.obs)
    chex.assert_rank(q, 2)
    q_taken = take_action(q, batch.action)
    td = targets - q_taken
    per_sample = optax.huber_loss(td) if static.loss == "huber" else 0.5 * jnp.square(td)
    return jnp.mean(weights * per_sample), (td, q_taken)


def td_loss(params, state, batch, weights, key, static: DQNStatic, space):
    """DQN's `make_learn` loss: `dqn_loss` at `td_targets`; the priority is ``|TD|``."""
    del key  # the loss is deterministic given the batch
    network = make_network(static, space)
    targets = td_targets(state.params, state.target_params, network, batch, static, space)
    loss, (td, q_taken) = dqn_loss(params, network, batch, targets, weights, static)
    return loss, (td, q_metrics(td, q_taken, targets))


ALGORITHM = q_learner.algorithm("dqn", DQNConfig, default_config, make_network, q_values, td_loss)

"""QR-DQN, distributional DQN by quantile regression (Dabney, Rowland, Bellemare & Munos, 2018),
on the replay Q-learners' kit (`jaxrl.algos.q_learner`: uniform or prioritized n-step replay,
target network, epsilon schedule, double Q).

    the network gives, per action, N quantiles theta_i(s, a) of the return at the fractions
    tau_i = (2i - 1) / (2N);  Q(s, a) = mean_i theta_i(s, a)
    for each sampled batch (importance weights w):
        a*  = argmax_a Q(s', a)  (online net if double_q, else target net)
        T_j = R + discount * theta_j(s', a*) of the target net             (j = 1..N)
        L   = E[w * sum_i mean_j rho_kappa(tau_i, T_j - theta_i(s, a))]  (ops.quantile_huber_loss)
        priorities <- the per-sample loss (prioritized replay)

``discount`` is ``gamma^n (1 - terminated)`` from the n-step window: a terminal transition's
targets are all its reward, a truncated one bootstraps from its final observation.
"""

from __future__ import annotations

import dataclasses
from typing import cast

import jax
import jax.numpy as jnp

from jaxrl.algos import offpolicy, q_learner
from jaxrl.algos.families import family_defaults
from jaxrl.config import AlgoConfig, static
from jaxrl.ops import quantile_huber_loss, quantile_midpoints
from jaxrl.parts.q_networks import DistributionalQNetwork


@dataclasses.dataclass(frozen=True)
class QRDQNStatic(q_learner.DistributionalStatic):
    """QR-DQN's static fields: DQN's (less its loss switch) and the number of quantiles."""

    num_quantiles: int = static(200, "N quantiles per action, at tau_i = (2i - 1) / (2N)")

    @property
    def distribution_size(self) -> int:
        """Outputs per action (the memory model's ``K``)."""
        return self.num_quantiles


@dataclasses.dataclass(frozen=True)
class QRDQNConfig(AlgoConfig, q_learner.QuantileHparams, QRDQNStatic):
    """QR-DQN's config: the fields of `QRDQNStatic` and `q_learner.QuantileHparams` as one."""


def default_config(env_name: str) -> QRDQNConfig:
    """QR-DQN's defaults for ``env_name``'s family (`jaxrl.algos.families`)."""
    return QRDQNConfig(**family_defaults("qrdqn", env_name))


def make_network(static: QRDQNStatic, space) -> DistributionalQNetwork:
    """Quantiles ``[B, A, num_quantiles]``."""
    return q_learner.distributional_network(static, space, "QR-DQN")


def q_values(params, hp: q_learner.QuantileHparams, obs: jax.Array, static: QRDQNStatic, space
             ) -> jax.Array:
    """``[B, A]`` the mean of each action's quantiles."""
    del hp
    return cast(jax.Array, make_network(static, space).apply(params, obs)).mean(axis=-1)


def target_quantiles(params, target_params, network, batch, static: QRDQNStatic, space=None
                     ) -> jax.Array:
    """``[B, N]`` ``T_j = R + discount * theta_j(s', a*)`` (no gradient flows into it)."""
    mean = lambda quantiles: quantiles.mean(axis=-1)
    next_q = q_learner.next_outputs(params, target_params, network, batch.next_obs, static, mean,
                                    space)
    return jax.lax.stop_gradient(batch.reward[:, None] + batch.discount[:, None] * next_q)


def qr_loss(params, state, batch, weights, key, static: QRDQNStatic, space):
    """`q_learner.make_learn`'s loss: the importance-weighted quantile Huber loss of the online
    quantiles at the taken action against the target samples. The priority is the per-sample
    loss ``[B]``; the TD metrics compare the two means."""
    del key  # the loss is deterministic given the batch
    offpolicy.check_transitions(batch, weights)
    network = make_network(static, space)
    targets = target_quantiles(state.params, state.target_params, network, batch, static, space)
    quantiles = q_learner.take_action(cast(jax.Array, network.apply(params, batch.obs)),
                                      batch.action)
    per_sample = quantile_huber_loss(quantiles, targets, quantile_midpoints(static.num_quantiles),
                                     state.hparams.kappa)
    q_taken, target_mean = quantiles.mean(axis=-1), targets.mean(axis=-1)
    metrics = q_learner.q_metrics(target_mean - q_taken, q_taken, target_mean)
    return jnp.mean(weights * per_sample), (per_sample, metrics)


ALGORITHM = q_learner.algorithm("qrdqn", QRDQNConfig, default_config, make_network,
                                q_values, qr_loss, q_learner.distributional_memory_model)

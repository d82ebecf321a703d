"""C51, categorical distributional DQN (Bellemare, Dabney & Munos, 2017), on the replay
Q-learners' kit (`jaxrl.algos.q_learner`: uniform or prioritized n-step replay, target network,
epsilon schedule, double Q).

    the network gives, per action, logits over K fixed atoms z_i (v_min .. v_max):
        p_i(s, a) = softmax(logits(s, a))_i,  Q(s, a) = sum_i p_i(s, a) z_i
    for each sampled batch (importance weights w):
        a*  = argmax_a Q(s', a)  (online net if double_q, else target net)
        m   = Phi(R + discount * z, p(s', a*) of the target net)        (ops.categorical_projection)
        L   = E[w * CE(m, p(s, a))] = -E[w * sum_i m_i log p_i(s, a)]
        priorities <- the per-sample cross-entropy (prioritized replay)

``discount`` is ``gamma^n (1 - terminated)`` from the n-step window: a terminal transition's
target is all mass on its reward, a truncated one bootstraps from its final observation.
"""

from __future__ import annotations

import dataclasses
from typing import cast

import jax
import jax.numpy as jnp
from flax import struct

from jaxrl.algos import offpolicy, q_learner
from jaxrl.algos.families import family_defaults
from jaxrl.config import ANY, AlgoConfig, ConfigError, static, traced
from jaxrl.ops import categorical_projection, categorical_support
from jaxrl.parts.q_networks import DistributionalQNetwork


@dataclasses.dataclass(frozen=True)
class C51Static(q_learner.DistributionalStatic):
    """C51's static fields: DQN's (less its loss switch) and the number of atoms."""

    num_atoms: int = static(51, "atoms of the fixed support from v_min to v_max")

    @property
    def distribution_size(self) -> int:
        """Outputs per action (the memory model's ``K``)."""
        return self.num_atoms

    def validate(self) -> None:
        super().validate()
        if self.num_atoms < 2:
            raise ConfigError(f"num_atoms must be >= 2, got {self.num_atoms}")
        v_min, v_max = getattr(self, "v_min", None), getattr(self, "v_max", None)
        if v_min is not None and v_max is not None and not v_min < v_max:
            raise ConfigError(f"v_min ({v_min}) must be below v_max ({v_max})")


@struct.dataclass(frozen=True)
class C51Hparams(q_learner.QLearnerHparams):
    """C51's traced hyperparameters: DQN's and the support's range."""

    v_min: float = traced(-10.0, "the support's lowest atom (returns below it are clipped)",
                          valid=ANY)
    v_max: float = traced(10.0, "the support's highest atom (returns above it are clipped)",
                          valid=ANY)


@dataclasses.dataclass(frozen=True)
class C51Config(AlgoConfig, C51Hparams, C51Static):
    """C51's config: the fields of `C51Static` and `C51Hparams` as one."""


def default_config(env_name: str) -> C51Config:
    """C51's defaults for ``env_name``'s family (`jaxrl.algos.families`)."""
    return C51Config(**family_defaults("c51", env_name))


def make_network(static: C51Static, space) -> DistributionalQNetwork:
    """Logits ``[B, A, num_atoms]``."""
    return q_learner.distributional_network(static, space, "C51")


def support(hp: C51Hparams, static: C51Static) -> jax.Array:
    """``[K]`` the atoms ``z``."""
    return categorical_support(hp.v_min, hp.v_max, static.num_atoms)


def q_values(params, hp: C51Hparams, obs: jax.Array, static: C51Static, space) -> jax.Array:
    """``[B, A]`` the mean of each action's distribution, ``sum_i p_i z_i``."""
    logits = cast(jax.Array, make_network(static, space).apply(params, obs))
    return jax.nn.softmax(logits, axis=-1) @ support(hp, static)


def target_distribution(params, target_params, network, batch, z: jax.Array,
                        static: C51Static, space=None) -> jax.Array:
    """``[B, K]`` the projected target ``m`` (no gradient flows into it)."""
    mean = lambda logits: jax.nn.softmax(logits, axis=-1) @ z
    next_logits = q_learner.next_outputs(params, target_params, network, batch.next_obs, static,
                                         mean, space)
    next_probs = jax.nn.softmax(next_logits, axis=-1)
    return jax.lax.stop_gradient(categorical_projection(next_probs, batch.reward,
                                                        batch.discount, z))


def c51_loss(params, state, batch, weights, key, static: C51Static, space):
    """`q_learner.make_learn`'s loss: the importance-weighted cross-entropy of the online
    distribution at the taken action against the projected target. The priority is the cross-entropy
    ``[B]``; the TD metrics compare the two distributions' means."""
    del key  # the loss is deterministic given the batch
    offpolicy.check_transitions(batch, weights)
    network = make_network(static, space)
    z = support(state.hparams, static)
    target = target_distribution(state.params, state.target_params, network, batch, z, static,
                                 space)
    logits = cast(jax.Array, network.apply(params, batch.obs))
    log_p = jax.nn.log_softmax(q_learner.take_action(logits, batch.action))
    cross_entropy = -jnp.sum(target * log_p, axis=-1)
    q_taken, target_mean = jnp.exp(log_p) @ z, target @ z
    metrics = {"cross_entropy": cross_entropy.mean(),
               **q_learner.q_metrics(target_mean - q_taken, q_taken, target_mean)}
    return jnp.mean(weights * cross_entropy), (cross_entropy, metrics)


ALGORITHM = q_learner.algorithm("c51", C51Config, default_config, make_network,
                                q_values, c51_loss, q_learner.distributional_memory_model)

"""Synchronous advantage actor-critic (A2C; Mnih et al. 2016's A3C made synchronous).

    for each update:                                      (onpolicy.make_train_step)
        collect T steps (short, e.g. 5) from N envs with pi_theta
        A = GAE(lambda) bootstrapped through truncation   (lambda = 1: the n-step advantage)
        L = -E[log pi(a|s) A] + c_V 0.5 E[(V(s) - R)^2] - c_H H[pi]
        theta <- RMSProp(clip_by_global_norm(grad L))     (one step per rollout)

RMSProp's epsilon convention is explicit config (reading 002): ``rmsprop_style="tensorflow"``
divides by ``sqrt(E[g^2] + eps)`` with the accumulator starting at 1 (TF1's RMSPropOptimizer,
which OpenAI baselines' A2C hyperparameters were tuned with); ``"pytorch"`` divides by
``sqrt(E[g^2]) + eps`` with the accumulator starting at 0. ``optimizer="adam"`` is an option.
"""

from __future__ import annotations

import dataclasses

import chex
import jax
import jax.numpy as jnp
from flax import struct

from jaxrl.algos import onpolicy
from jaxrl.algos.families import family_defaults
from jaxrl.config import (
    NON_NEGATIVE,
    POSITIVE,
    UNIT_NO_ONE,
    AlgoConfig,
    ConfigError,
    defaults,
    static,
    traced,
)
from jaxrl.ops import clipped_optimizer, optimizer_problem


@dataclasses.dataclass(frozen=True)
@defaults(num_envs=16, num_steps=5, normalize_advantages=False)
class A2CStatic(onpolicy.OnPolicyStatic):
    """A2C's static fields (shapes, loop counts, flags): 16 envs of 5 steps (the n of n-step
    returns), advantages as they come."""

    optimizer: str = static("rmsprop", "rmsprop | adam | radam")
    rmsprop_style: str = static("tensorflow", "epsilon convention: tensorflow | pytorch")

    def validate(self) -> None:
        super().validate()
        problem = optimizer_problem(self.optimizer, self.rmsprop_style)
        if problem:
            raise ConfigError(problem)


@struct.dataclass(frozen=True)
@defaults(gae_lambda=1.0)
class A2CHparams(onpolicy.OnPolicyHparams):
    """A2C's traced hyperparameters (``state.hparams``); ``gae_lambda`` 1.0: n-step
    advantages."""

    learning_rate: float = traced(7e-4, valid=POSITIVE)
    rmsprop_decay: float = traced(0.99, valid=UNIT_NO_ONE)
    rmsprop_eps: float = traced(1e-5, valid=POSITIVE)
    ent_coef: float = traced(0.01, valid=NON_NEGATIVE)
    vf_coef: float = traced(1.0, "weight of 0.5 (V - R)^2, i.e. baselines' 0.5 x MSE",
                            valid=NON_NEGATIVE)


@dataclasses.dataclass(frozen=True)
class A2CConfig(AlgoConfig, A2CHparams, A2CStatic):
    """A2C's config: the fields of `A2CStatic` and `A2CHparams` as one."""


def default_config(env_name: str) -> A2CConfig:
    """A2C's defaults for ``env_name``'s family (`jaxrl.algos.families`)."""
    return A2CConfig(**family_defaults("a2c", env_name))


def a2c_loss(params, network, batch: onpolicy.Batch, hp: A2CHparams, static: A2CStatic):
    """Policy gradient + value regression - entropy bonus over the batch (leaves ``[B, ...]``).
    Returns ``(loss, aux metrics)``."""
    onpolicy.check_batch(batch)
    dist, value = onpolicy.forward(network, params, batch)
    chex.assert_equal_shape([value, batch.target])
    adv = onpolicy.standardize(batch.advantage, static)
    policy_loss = -jnp.mean(dist.log_prob(batch.action) * adv)
    value_loss = 0.5 * jnp.mean(jnp.square(value - batch.target))
    entropy = dist.entropy().mean()
    loss = policy_loss + hp.vf_coef * value_loss - hp.ent_coef * entropy
    return loss, {"policy_loss": policy_loss, "value_loss": value_loss, "entropy": entropy}


def optimizers(hp: A2CHparams, static: A2CStatic, lr_scale: jax.Array) -> onpolicy.ParamGroups:
    """One optimizer over all parameters: RMSProp (explicit epsilon convention) or Adam."""
    lr = hp.learning_rate * lr_scale
    return onpolicy.ParamGroups(all=clipped_optimizer(static.optimizer, hp, lr,
                                                      static.rmsprop_style))


def update(state, batch: onpolicy.Batch, key, static: A2CStatic, network) -> onpolicy.Updated:
    """One full-batch gradient step."""
    hp: A2CHparams = state.hparams
    scale = onpolicy.lr_scale(state, static)
    loss = lambda params, mb: a2c_loss(params, network, mb, hp, static)
    params, opt_state, metrics = onpolicy.minibatch_sgd(
        loss, state.params, state.opt_state.all, optimizers(hp, static, scale).all, batch,
        key, 1, 1, static.verbosity)
    metrics.update(onpolicy.policy_shift(network, params, batch))
    metrics["learning_rate"] = hp.learning_rate * scale
    return onpolicy.Updated(params, onpolicy.ParamGroups(all=opt_state), metrics)


ALGORITHM = onpolicy.algorithm("a2c", A2CConfig, default_config, update, optimizers)

"""Vanilla policy gradient: REINFORCE with a learned value baseline (Spinning Up's VPG).

    for each update:                                      (onpolicy.make_train_step)
        collect T steps from N envs with pi_theta
        A = GAE(lambda) bootstrapped through truncation; R = A + V_phi(s)
        theta <- Adam(grad of -E[log pi_theta(a|s) A] - c_H H[pi])   (policy_epochs full-batch steps)
        phi   <- value regression of V_phi(s) on R                   (onpolicy.fit_value)

Policy and value are separate MLPs with separate Adam optimizers.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
from flax import struct

from jaxrl.algos import onpolicy
from jaxrl.algos.families import family_defaults
from jaxrl.config import NON_NEGATIVE, POSITIVE, AlgoConfig, static, traced
from jaxrl.ops import clipped_adam


@dataclasses.dataclass(frozen=True)
class VPGStatic(onpolicy.SeparateValueStatic):
    """VPG's static fields (shapes, loop counts, flags)."""

    policy_epochs: int = static(1, "full-batch policy gradient steps per update (1 = VPG)")


@struct.dataclass(frozen=True)
class VPGHparams(onpolicy.SeparateValueHparams):
    """VPG's traced hyperparameters (``state.hparams``)."""

    learning_rate: float = traced(3e-4, "policy Adam learning rate", valid=POSITIVE)
    ent_coef: float = traced(0.0, valid=NON_NEGATIVE)


@dataclasses.dataclass(frozen=True)
class VPGConfig(AlgoConfig, VPGHparams, VPGStatic):
    """VPG's config: the fields of `VPGStatic` and `VPGHparams` as one."""


def default_config(env_name: str) -> VPGConfig:
    """VPG's defaults for ``env_name``'s family (`jaxrl.algos.families`)."""
    return VPGConfig(**family_defaults("vpg", env_name))


def policy_gradient_loss(policy_params, params, network, batch: onpolicy.Batch, hp: VPGHparams,
                         static: VPGStatic):
    """``-E[log pi(a|s) A] - c_H H[pi]`` over the batch (leaves ``[B, ...]``; A standardized
    if configured). Returns ``(loss, aux metrics)``."""
    onpolicy.check_batch(batch)
    full = onpolicy.with_param_group(params, "policy", policy_params)
    dist = network.apply(full, batch.obs, method=network.dist)
    adv = onpolicy.standardize(batch.advantage, static)
    policy_loss = -jnp.mean(dist.log_prob(batch.action) * adv)
    entropy = dist.entropy().mean()
    return policy_loss - hp.ent_coef * entropy, {"policy_loss": policy_loss, "entropy": entropy}


def optimizers(hp: VPGHparams, static: VPGStatic, lr_scale: jax.Array) -> onpolicy.ParamGroups:
    """Separate Adams for the policy and the value MLPs."""
    return onpolicy.ParamGroups(policy=clipped_adam(hp, hp.learning_rate * lr_scale),
                                value=clipped_adam(hp, hp.vf_learning_rate * lr_scale))


def update(state, batch: onpolicy.Batch, key, static: VPGStatic, network) -> onpolicy.Updated:
    """Policy gradient step(s), then value regression."""
    hp: VPGHparams = state.hparams
    scale = onpolicy.lr_scale(state, static)
    tx = optimizers(hp, static, scale)
    policy_key, value_key = jax.random.split(key)
    loss = lambda pp, mb: policy_gradient_loss(pp, state.params, network, mb, hp, static)
    policy_params, policy_opt, metrics = onpolicy.minibatch_sgd(
        loss, onpolicy.param_group(state.params, "policy"), state.opt_state.policy,
        tx.policy, batch, policy_key, static.policy_epochs, 1, static.verbosity)
    params = onpolicy.with_param_group(state.params, "policy", policy_params)
    metrics.update(onpolicy.policy_shift(network, params, batch))
    params, value_opt, value_metrics = onpolicy.fit_value(
        params, state.opt_state.value, tx.value, batch, value_key, static, network)
    metrics.update(value_metrics)
    metrics["learning_rate"] = hp.learning_rate * scale
    return onpolicy.Updated(params, onpolicy.ParamGroups(policy=policy_opt, value=value_opt),
                            metrics)


ALGORITHM = onpolicy.algorithm("vpg", VPGConfig, default_config, update, optimizers)

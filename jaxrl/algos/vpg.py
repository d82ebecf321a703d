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

from envs.registry import env_family
from jaxrl.algos import onpolicy
from jaxrl.config import AlgoConfig, static, traced
from jaxrl.ops import clipped_adam


@dataclasses.dataclass(frozen=True)
class VPGStatic(onpolicy.SeparateValueStatic):
    """VPG's static fields (shapes, loop counts, flags)."""

    policy_epochs: int = static(1, "full-batch policy gradient steps per update (1 = VPG)")


@struct.dataclass(frozen=True)
class VPGHparams(onpolicy.SeparateValueHparams):
    """VPG's traced hyperparameters (``state.hparams``)."""

    learning_rate: float = traced(3e-4, "policy Adam learning rate")
    ent_coef: float = traced(0.0)


@dataclasses.dataclass(frozen=True)
class VPGConfig(AlgoConfig, VPGHparams, VPGStatic):
    """VPG's config: the fields of `VPGStatic` and `VPGHparams` as one."""


def default_config(env_name: str) -> VPGConfig:
    """Configs that work without tuning flags, per env family."""
    family = env_family(env_name)
    if family == "probe":
        return onpolicy.probe_config(VPGConfig, learning_rate=1e-2, vf_learning_rate=3e-3)
    if family == "continuous":
        return VPGConfig(num_envs=8, num_steps=256, gamma=0.9, gae_lambda=0.95,
                         learning_rate=3e-3, vf_learning_rate=3e-3, value_epochs=10,
                         value_minibatches=16, normalize_reward=True)
    if family in ("minatar", "brax"):
        return VPGConfig(num_envs=64, num_steps=64, hidden=(256, 256),
                         activation="relu" if family == "minatar" else "tanh",
                         learning_rate=1e-3, normalize_reward=family == "brax")
    return VPGConfig(num_envs=8, num_steps=128, learning_rate=3e-3, vf_learning_rate=3e-3,
                     normalize_obs=False, value_epochs=5, value_minibatches=4)


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


train_step = onpolicy.make_train_step(update)
init = onpolicy.make_init(optimizers)

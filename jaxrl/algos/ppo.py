"""Proximal Policy Optimization (Schulman et al., 2017), clipped-surrogate variant.

    for each update:                                      (onpolicy.make_train_step)
        collect T steps from N envs with pi_old
        A = GAE(lambda) with bootstrapping through truncation    (onpolicy.make_batch)
        for each epoch, for each minibatch:                      (onpolicy.minibatch_sgd)
            L = -min(r A, clip(r, 1-eps, 1+eps) A) + c_v L_V - c_H H[pi]   (ppo_loss)
              (eps annealed linearly to 0 with `anneal_clip`, like the learning rate)
            theta <- Adam(clip_by_global_norm(grad L))

Observation normalization and reward scaling are agent state (running statistics updated after
each rollout), so evaluation and `act` see what training saw.
"""

from __future__ import annotations

import dataclasses

import chex
import jax
import jax.numpy as jnp
from flax import struct

from jaxrl.algos import onpolicy
from jaxrl.algos.families import family_defaults
from jaxrl.config import NON_NEGATIVE, POSITIVE, AlgoConfig, ConfigError, static, traced
from jaxrl.ops import clipped_adam


@dataclasses.dataclass(frozen=True)
class PPOStatic(onpolicy.OnPolicyStatic):
    """PPO's static fields (shapes, loop counts, flags)."""

    update_epochs: int = static(4, "passes over each rollout")
    num_minibatches: int = static(4, "minibatches per epoch")
    clip_value_loss: bool = static(True, "clip the value update like the policy's")
    anneal_clip: bool = static(False, "anneal the clip range linearly to 0 over total_steps "
                                      "(baselines' and reading 002's Atari PPO)")

    def validate(self) -> None:
        super().validate()
        if self.recurrent and self.num_envs % self.num_minibatches:
            raise ConfigError(
                f"a recurrent policy's minibatches are made of whole envs: num_envs "
                f"({self.num_envs}) must be divisible by num_minibatches ({self.num_minibatches})")
        if (self.num_envs * self.num_steps) % self.num_minibatches:
            raise ConfigError(
                f"num_envs * num_steps ({self.num_envs * self.num_steps}) must be divisible by "
                f"num_minibatches ({self.num_minibatches})"
            )


@struct.dataclass(frozen=True)
class PPOHparams(onpolicy.OnPolicyHparams):
    """PPO's traced hyperparameters (``state.hparams``)."""

    learning_rate: float = traced(2.5e-4, valid=POSITIVE)
    clip_eps: float = traced(0.2, "policy (and value) clip range", valid=POSITIVE)
    ent_coef: float = traced(0.01, valid=NON_NEGATIVE)
    vf_coef: float = traced(0.5, valid=NON_NEGATIVE)


@dataclasses.dataclass(frozen=True)
class PPOConfig(AlgoConfig, PPOHparams, PPOStatic):
    """PPO's config: the fields of `PPOStatic` and `PPOHparams` as one."""


def default_config(env_name: str) -> PPOConfig:
    """PPO's defaults for ``env_name``'s family (`jaxrl.algos.families`)."""
    return PPOConfig(**family_defaults("ppo", env_name))


def ppo_loss(params, network, batch: onpolicy.Batch, hp: PPOHparams, static: PPOStatic,
             clip_eps: jax.Array | float | None = None):
    """Clipped surrogate + value loss - entropy bonus on a minibatch (leaves ``[B, ...]``), the
    clip range ``clip_eps`` (``hp.clip_eps`` if None). Returns ``(loss, aux metrics)``."""
    onpolicy.check_batch(batch)
    dist, value = onpolicy.forward(network, params, batch)
    chex.assert_equal_shape([value, batch.target])
    log_ratio = dist.log_prob(batch.action) - batch.log_prob
    ratio = jnp.exp(log_ratio)
    adv = onpolicy.standardize(batch.advantage, static)
    eps = hp.clip_eps if clip_eps is None else clip_eps
    policy_loss = -jnp.minimum(ratio * adv, jnp.clip(ratio, 1.0 - eps, 1.0 + eps) * adv).mean()
    value_loss = 0.5 * jnp.square(value - batch.target)
    if static.clip_value_loss:
        clipped = batch.value + jnp.clip(value - batch.value, -eps, eps)
        value_loss = jnp.maximum(value_loss, 0.5 * jnp.square(clipped - batch.target))
    value_loss = value_loss.mean()
    entropy = dist.entropy().mean()
    loss = policy_loss + hp.vf_coef * value_loss - hp.ent_coef * entropy
    aux = {
        "policy_loss": policy_loss,
        "value_loss": value_loss,
        "entropy": entropy,
        "approx_kl": jnp.mean((ratio - 1.0) - log_ratio),
        "clip_fraction": jnp.mean(jnp.abs(ratio - 1.0) > eps),
    }
    return loss, aux


def optimizers(hp: PPOHparams, static: PPOStatic, lr_scale: jax.Array) -> onpolicy.ParamGroups:
    """One Adam over all parameters."""
    return onpolicy.ParamGroups(all=clipped_adam(hp, hp.learning_rate * lr_scale))


def update(state, batch: onpolicy.Batch, key, static: PPOStatic, network) -> onpolicy.Updated:
    """Epochs x minibatches of clipped-surrogate SGD."""
    hp: PPOHparams = state.hparams
    scale = onpolicy.lr_scale(state, static)
    tx = optimizers(hp, static, scale).all
    clip_eps = hp.clip_eps * (onpolicy.progress_scale(state) if static.anneal_clip else 1.0)
    loss = lambda params, mb: ppo_loss(params, network, mb, hp, static, clip_eps)
    params, opt_state, metrics = onpolicy.minibatch_sgd(
        loss, state.params, state.opt_state.all, tx, batch, key, static.update_epochs,
        static.num_minibatches, static.verbosity)
    metrics["learning_rate"] = hp.learning_rate * scale
    metrics["clip_eps"] = jnp.asarray(clip_eps, jnp.float32)
    return onpolicy.Updated(params, onpolicy.ParamGroups(all=opt_state), metrics)


ALGORITHM = onpolicy.algorithm("ppo", PPOConfig, default_config, update, optimizers)

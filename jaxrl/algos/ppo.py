"""Proximal Policy Optimization (Schulman et al., 2017), clipped-surrogate variant.

    for each update:
        collect T steps from N envs with pi_old                         (rollout.collect)
        A = GAE(lambda) with bootstrapping through truncation            (ops.gae)
        for each epoch, for each minibatch:
            L = -min(r A, clip(r, 1-eps, 1+eps) A) + c_v L_V - c_H H[pi]   (ppo_loss)
            theta <- Adam(clip_by_global_norm(grad L))

Observation normalization and reward scaling are agent state (running statistics updated after
each rollout), so evaluation and `act` see what training saw.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import optax
from flax import struct

from jaxrl import diagnostics as diag
from jaxrl.algos import onpolicy
from jaxrl.config import ConfigError, static, traced
from jaxrl.ops import gae


@dataclasses.dataclass(frozen=True)
class PPOConfig(onpolicy.OnPolicyConfig):
    """PPO hyperparameters. Static fields fix shapes/loops; traced ones live in state.hparams."""

    update_epochs: int = static(4, "passes over each rollout")
    num_minibatches: int = static(4, "minibatches per epoch")
    normalize_advantages: bool = static(True, "standardize advantages per minibatch")
    clip_value_loss: bool = static(True, "clip the value update like the policy's")
    anneal_lr: bool = static(True, "linearly anneal the learning rate to 0")

    learning_rate: float = traced(2.5e-4)
    clip_eps: float = traced(0.2, "policy (and value) clip range")
    ent_coef: float = traced(0.01)
    vf_coef: float = traced(0.5)

    def validate(self) -> None:
        super().validate()
        if self.update_epochs < 1 or self.num_minibatches < 1:
            raise ConfigError("update_epochs and num_minibatches must be >= 1")
        if (self.num_envs * self.num_steps) % self.num_minibatches:
            raise ConfigError(
                f"num_envs * num_steps ({self.num_envs * self.num_steps}) must be divisible by "
                f"num_minibatches ({self.num_minibatches})"
            )
        if not 0.0 < self.clip_eps:
            raise ConfigError(f"clip_eps must be > 0, got {self.clip_eps}")


def default_config(env_name: str) -> PPOConfig:
    """Configs that work without tuning flags, per env family."""
    family = onpolicy.env_family(env_name)
    if family == "continuous":  # Pendulum-like classic control: short horizon, many epochs
        return PPOConfig(num_envs=8, num_steps=256, update_epochs=10, num_minibatches=16,
                         gamma=0.9, gae_lambda=0.95, learning_rate=1e-3, ent_coef=0.0,
                         normalize_reward=True, clip_value_loss=False)
    if family == "minatar":
        return PPOConfig(num_envs=64, num_steps=128, update_epochs=4, num_minibatches=8,
                         learning_rate=5e-3 / 10, hidden=(256, 256), activation="relu")
    if family == "brax":
        return PPOConfig(num_envs=64, num_steps=64, update_epochs=4, num_minibatches=32,
                         hidden=(256, 256), learning_rate=3e-4, ent_coef=0.0, gamma=0.99,
                         normalize_reward=True, clip_value_loss=False, max_grad_norm=0.5)
    if family == "probe":
        return onpolicy.probe_config(PPOConfig)
    # Discrete classic control: no obs normalization. As the policy improves the state
    # distribution narrows, the running variance shrinks and the inputs drift under a fixed
    # policy; on CartPole-v1 (8 seeds, 500k steps) that took the eval IQM from 500 to 267.
    return PPOConfig(normalize_obs=False)


@struct.dataclass
class PPOBatch:
    """One flattened rollout; leaves ``[B, ...]`` with B = T * N."""

    obs: jax.Array  # [B, obs_dim] normalized with the acting statistics
    action: jax.Array  # [B] or [B, act_dim]
    log_prob: jax.Array  # [B] log pi_old(a|s)
    value: jax.Array  # [B] V_old(s)
    advantage: jax.Array  # [B]
    target: jax.Array  # [B] value target = advantage + V_old(s)


def ppo_loss(params, network, batch: PPOBatch, hp: dict, config: PPOConfig):
    """Clipped surrogate + value loss - entropy bonus. Returns ``(loss, aux metrics)``."""
    dist, value = network.apply(params, batch.obs)
    log_ratio = dist.log_prob(batch.action) - batch.log_prob
    ratio = jnp.exp(log_ratio)
    adv = batch.advantage
    if config.normalize_advantages:
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    eps = hp["clip_eps"]
    policy_loss = -jnp.minimum(ratio * adv, jnp.clip(ratio, 1.0 - eps, 1.0 + eps) * adv).mean()
    value_loss = 0.5 * jnp.square(value - batch.target)
    if config.clip_value_loss:
        clipped = batch.value + jnp.clip(value - batch.value, -eps, eps)
        value_loss = jnp.maximum(value_loss, 0.5 * jnp.square(clipped - batch.target))
    value_loss = value_loss.mean()
    entropy = dist.entropy().mean()
    loss = policy_loss + hp["vf_coef"] * value_loss - hp["ent_coef"] * entropy
    aux = {
        "policy_loss": policy_loss,
        "value_loss": value_loss,
        "entropy": entropy,
        "approx_kl": jnp.mean((ratio - 1.0) - log_ratio),
        "clip_fraction": jnp.mean(jnp.abs(ratio - 1.0) > eps),
    }
    return loss, aux


def make_batch(state: onpolicy.OnPolicyState, traj, rewards, config: PPOConfig, network):
    """Rollout -> PPOBatch (normalized obs, old log-probs/values, GAE advantages)."""
    obs = onpolicy.normalize_obs(state, traj.obs, config)
    next_obs = onpolicy.normalize_obs(state, traj.next_obs, config)
    values = network.apply(state.params, obs, method=network.value)
    next_values = network.apply(state.params, next_obs, method=network.value)
    terminated, truncated = onpolicy.loss_flags(traj, config)
    hp = state.hparams
    adv = gae(rewards, values, next_values, terminated, truncated, hp["gamma"], hp["gae_lambda"])
    flat = lambda x: x.reshape(-1, *x.shape[2:])
    batch = PPOBatch(flat(obs), flat(traj.action), flat(traj.log_prob), flat(values),
                     flat(adv), flat(adv + values))
    return batch


def update(state, batch: PPOBatch, key, config: PPOConfig, network):
    """Epochs x minibatches of clipped-surrogate SGD. Returns ``(params, opt_state, metrics)``."""
    hp = state.hparams
    lr = onpolicy.learning_rate(state, config)
    tx = onpolicy.optimizer(hp, lr)
    grad_fn = jax.grad(ppo_loss, has_aux=True)

    def minibatch_step(carry, mb):
        params, opt_state = carry
        grads, aux = grad_fn(params, network, mb, hp, config)
        updates, opt_state = tx.update(grads, opt_state, params)
        aux.update(diag.gradient_stats(grads, updates, config.verbosity))
        return (optax.apply_updates(params, updates), opt_state), aux

    def epoch(carry, epoch_key):
        minibatches = onpolicy.shuffle_into_minibatches(epoch_key, batch, config.num_minibatches)
        return jax.lax.scan(minibatch_step, carry, minibatches)

    keys = jax.random.split(key, config.update_epochs)
    (params, opt_state), aux = jax.lax.scan(epoch, (state.params, state.opt_state), keys)
    metrics = jax.tree.map(jnp.mean, aux)
    metrics["learning_rate"] = lr
    return params, opt_state, metrics


def train_step(state: onpolicy.OnPolicyState, config: PPOConfig, env, env_params):
    """One PPO iteration: rollout, advantages, update, diagnostics. ``-> (state, metrics)``."""
    network = onpolicy.make_network(config, env, env_params)
    key, rollout_key, update_key = jax.random.split(state.key, 3)
    carry, traj = onpolicy.rollout(state, rollout_key, config, env, env_params, network)
    reward_scaler = onpolicy.update_reward_scaler(state, traj, config)
    rewards = onpolicy.scale_rewards(reward_scaler, traj.reward, config)
    batch = make_batch(state, traj, rewards, config, network)
    params, opt_state, metrics = update(state, batch, update_key, config, network)
    metrics.update(onpolicy.rollout_metrics(
        state, traj, batch.value, batch.target, batch.advantage, rewards, metrics["entropy"],
        config, env, env_params, params))
    new_state = onpolicy.advance(state, traj, carry, params, opt_state, key, reward_scaler, config)
    return new_state, metrics


init = onpolicy.init

"""Soft Actor-Critic (Haarnoja et al., 2018) with twin critics and automatic temperature.

    for each env-step round:                                  (offpolicy.make_train_step)
        a ~ pi(.|s) = tanh(N(mu(s), sigma(s)^2))                           (explore)
        store (s, a, R, discount, s')
        gradient_steps times, on a sampled batch:
            a' ~ pi(.|s')
            y = R + discount * (min_i Q_target_i(s', a') - alpha log pi(a'|s'))
            critics <- Adam(grad of E[0.5 (Q_i(s, a) - y)^2])
            a~ ~ pi(.|s) (reparameterized)
            actor <- Adam(grad of E[alpha log pi(a~|s) - min_i Q_i(s, a~)])   (critics constant)
            log alpha <- Adam(grad of -E[log alpha (log pi(a~|s) + target_entropy)])
            targets <- tau * critics + (1 - tau) * targets

``log pi`` includes the tanh change-of-variables correction (`jaxrl.ops.TanhGaussian`).
The target entropy defaults to ``-dim(A)``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import chex
import jax
import jax.numpy as jnp
from flax import struct

from jaxrl.algos import acting, offpolicy
from jaxrl.algos.families import family_defaults
from jaxrl.config import ANY, NON_NEGATIVE, POSITIVE, UNIT_NO_ZERO, AlgoConfig, static, traced
from jaxrl.ops import clipped_adam, polyak_update
from jaxrl.parts.actor_critic import SquashedGaussianActor


@dataclasses.dataclass(frozen=True)
class SACStatic(offpolicy.ActorCriticStatic):
    """SAC's static fields (shapes, loop counts, flags)."""

    autotune_alpha: bool = static(True, "learn the temperature to hit target_entropy")
    action_noise: str = static("white", "exploration noise over time: white (a fresh draw each "
                               "step) | ou (Ornstein-Uhlenbeck, correlated over ~1/(ou_theta "
                               "ou_dt) steps, restarted at episode ends; jaxrl.ops.noise)")

    def validate(self) -> None:
        super().validate()
        offpolicy.check_action_noise(self.action_noise)


@struct.dataclass(frozen=True)
class SACHparams(offpolicy.OffPolicyHparams):
    """SAC's traced hyperparameters (``state.hparams``)."""

    actor_lr: float = traced(3e-4, valid=POSITIVE)
    critic_lr: float = traced(3e-4, valid=POSITIVE)
    alpha_lr: float = traced(3e-4, valid=POSITIVE)
    tau: float = traced(0.005, valid=UNIT_NO_ZERO)
    init_alpha: float = traced(1.0, "initial temperature (fixed if not autotuned)", valid=POSITIVE)
    target_entropy_scale: float = traced(1.0, "target entropy = -scale * dim(A)", valid=ANY)
    ou_theta: float = traced(0.15, "action_noise=ou: mean-reversion rate; step-to-step "
                             "correlation exp(-ou_theta ou_dt)", valid=NON_NEGATIVE)
    ou_dt: float = traced(0.01, "action_noise=ou: time step of the OU process", valid=POSITIVE)


@dataclasses.dataclass(frozen=True)
class SACConfig(AlgoConfig, SACHparams, SACStatic):
    """SAC's config: the fields of `SACStatic` and `SACHparams` as one."""


@struct.dataclass(frozen=True)
class SACGroups(offpolicy.ActorCriticGroups):
    """SAC's parameter groups: the actor, the stacked critics and the learned temperature's
    log (``[]``); as parameters (online or target), optimizers or optimizer states."""

    log_alpha: Any


def default_config(env_name: str) -> SACConfig:
    """SAC's defaults for ``env_name``'s family (`jaxrl.algos.families`)."""
    return SACConfig(**family_defaults("sac", env_name))


def networks(static: offpolicy.ActorCriticStatic, space):
    """``(SquashedGaussianActor, Critic)``: ``pi(.|s)`` (a `TanhGaussian`) and ``Q(s, a)``."""
    return offpolicy.actor_critic_networks(SquashedGaussianActor, static, space)


def optimizers(hp: SACHparams) -> SACGroups:
    return SACGroups(actor=clipped_adam(hp, hp.actor_lr), critic=clipped_adam(hp, hp.critic_lr),
                     log_alpha=clipped_adam(hp, hp.alpha_lr))


def init_learner(key, obs_dim: int, space, static: SACStatic, hp: SACHparams):
    actor, critic = networks(static, space)
    nets = offpolicy.init_actor_critic(key, obs_dim, space, actor, critic, 2)
    params = SACGroups(actor=nets.actor, critic=nets.critic, log_alpha=jnp.log(hp.init_alpha))
    return params, params, offpolicy.init_optimizers(optimizers(hp), params)


def explore(state, obs, key, static: SACStatic, space):
    """``[N, action_dim]`` a sample of ``pi(.|s)`` (training, and the policy's step when not
    deterministic): ``tanh(mean + std * z)`` with ``z`` the state's OU processes where it
    carries them (training with ``action_noise="ou"``: each ``z`` is still ``N(0, 1)``, but
    correlated over steps, so the behaviour policy explores in long pushes as pink/red-noise SAC
    and gSDE do; the learner's own samples, in its losses, stay independent), else a fresh
    standard normal draw."""
    actor, _ = networks(static, space)
    dist = actor.apply(state.params.actor, obs)
    if state.noise is not None:
        return jnp.tanh(dist.mean + jnp.exp(dist.log_std) * state.noise)
    return dist.sample(key)


def td_targets(state, batch, key, actor, critic) -> jax.Array:
    """``[B]`` soft target ``R + discount * (min_i Q_target_i(s', a') - alpha log pi(a'|s'))``."""
    alpha = jnp.exp(state.params.log_alpha)
    next_action, next_log_prob = actor.apply(state.params.actor,
                                             batch.next_obs).sample_and_log_prob(key)
    q_next = offpolicy.critic_values_min(critic, state.target_params.critic, batch.next_obs,
                                         next_action)
    return jax.lax.stop_gradient(batch.reward + batch.discount * (q_next - alpha * next_log_prob))


def actor_loss(actor_params, critic_params, alpha, actor, critic, obs, key):
    """``E[alpha log pi(a|s) - min_i Q_i(s, a)]`` over observations ``[B, obs_dim]``, a
    reparameterized; critics and alpha are constants here."""
    chex.assert_rank(obs, 2)
    critic_params, alpha = jax.lax.stop_gradient((critic_params, alpha))
    action, log_prob = actor.apply(actor_params, obs).sample_and_log_prob(key)
    q = offpolicy.critic_values_min(critic, critic_params, obs, action)
    return jnp.mean(alpha * log_prob - q), ({"entropy": -log_prob.mean()}, log_prob)


def alpha_loss(log_alpha, log_prob, target_entropy):
    """``-E[log alpha (log pi(a|s) + target_entropy)]`` with ``log_prob`` ``[B]`` constant."""
    chex.assert_rank([log_alpha, log_prob], [0, 1])
    return -jnp.mean(log_alpha * jax.lax.stop_gradient(log_prob + target_entropy))


def learn(state, batch, weights, key, static: SACStatic, space) -> offpolicy.Learned:
    hp: SACHparams = state.hparams
    actor, critic = networks(static, space)
    tx = optimizers(hp)
    target_key, actor_key = jax.random.split(key)
    targets = td_targets(state, batch, target_key, actor, critic)
    critic_params, critic_opt, td, metrics = offpolicy.critic_step(
        state, critic, batch, targets, weights, tx.critic, static)
    alpha = jnp.exp(state.params.log_alpha)
    loss = lambda p: actor_loss(p, critic_params, alpha, actor, critic, batch.obs, actor_key)
    actor_update = offpolicy.actor_step(state, loss, tx.actor, static)
    metrics.update(actor_update.metrics)
    log_alpha, alpha_opt = state.params.log_alpha, state.opt_state.log_alpha
    if static.autotune_alpha:
        target_entropy = -hp.target_entropy_scale * offpolicy.action_dim(space)
        value, grad = jax.value_and_grad(alpha_loss)(log_alpha, actor_update.extra,
                                                     target_entropy)
        update, alpha_opt = tx.log_alpha.update(grad, alpha_opt, log_alpha)
        log_alpha = log_alpha + update
        metrics["alpha_loss"] = value
    metrics["alpha"] = jnp.exp(log_alpha)
    params = SACGroups(actor=actor_update.params, critic=critic_params, log_alpha=log_alpha)
    target_params = state.target_params.replace(
        critic=polyak_update(state.target_params.critic, critic_params, hp.tau))
    opt_state = SACGroups(actor=actor_update.opt_state, critic=critic_opt, log_alpha=alpha_opt)
    return offpolicy.Learned(params, target_params, opt_state, td, metrics)


def make_policy(static: SACStatic, env, env_params) -> acting.Policy:
    """Acting by ``tanh(mean(s))`` ``[K, action_dim]``, the policy's mode in the agent's
    ``[-1, 1]`` (a sample of the policy when not deterministic); its value
    ``min_i Q_i(s, tanh(mean(s)))`` ``[K]``, the soft Q at the deterministic action."""
    actor, critic, flat = offpolicy.acting_parts(networks, static, env, env_params)

    def mode(state, obs):
        return actor.apply(state.params.actor, flat(obs)).mode()

    def value(state, obs):
        x = flat(obs)
        action = actor.apply(state.params.actor, x).mode()
        return offpolicy.critic_values_min(critic, state.params.critic, x, action)

    return offpolicy.exploring_policy(mode, value, explore, static, env, env_params)


ALGORITHM = offpolicy.algorithm("sac", SACConfig, default_config, init_learner, explore, learn,
                                make_policy)

"""Deep Deterministic Policy Gradient (Lillicrap et al., 2016) and, by three switches, TD3
(Fujimoto et al., 2018; see `jaxrl.algos.td3` for its defaults).

    for each env-step round:                                  (offpolicy.make_train_step)
        a = clip(mu(s) + N(0, sigma^2), -1, 1)                          (explore)
        store (s, a, R, discount, s')
        gradient_steps times, on a sampled batch:
            a' = mu_target(s')  [+ clip(N(0, sigma_target^2), -c, c), clipped to [-1, 1]]   (TD3)
            y  = R + discount * min_i Q_target_i(s', a')          (min over 1 critic, or 2: TD3)
            critics <- Adam(grad of E[0.5 (Q_i(s, a) - y)^2])
            every policy_delay updates (1: DDPG, 2: TD3):
                actor <- Adam(grad of -E[Q_1(s, mu(s))])   (critics held constant)
                targets <- tau * online + (1 - tau) * targets
"""

from __future__ import annotations

import dataclasses

import chex
import jax
import jax.numpy as jnp
from flax import struct

from jaxrl.algos import acting, offpolicy
from jaxrl.algos.families import family_defaults
from jaxrl.algos.offpolicy import ActorCriticGroups
from jaxrl.config import (
    NON_NEGATIVE,
    POSITIVE,
    UNIT_NO_ZERO,
    AlgoConfig,
    ConfigError,
    static,
    traced,
)
from jaxrl.ops import clipped_adam, polyak_update
from jaxrl.parts.actor_critic import DeterministicActor


@dataclasses.dataclass(frozen=True)
class DDPGStatic(offpolicy.ActorCriticStatic):
    """DDPG's static fields (TD3 is the same learner with its three switches on)."""

    num_critics: int = static(1, "1 (DDPG) or 2 (TD3's clipped double Q)")
    policy_delay: int = static(1, "critic updates per actor/target update (TD3: 2)")
    target_policy_noise: bool = static(False, "TD3's target policy smoothing")
    action_noise: str = static("white", "exploration noise over time: white (a fresh draw each "
                               "step) | ou (Ornstein-Uhlenbeck, correlated over ~1/(ou_theta "
                               "ou_dt) steps, restarted at episode ends; jaxrl.ops.noise)")

    def validate(self) -> None:
        super().validate()
        if self.num_critics not in (1, 2):
            raise ConfigError(f"num_critics must be 1 or 2, got {self.num_critics}")
        offpolicy.check_action_noise(self.action_noise)


@struct.dataclass(frozen=True)
class DDPGHparams(offpolicy.OffPolicyHparams):
    """DDPG's (and TD3's) traced hyperparameters (``state.hparams``)."""

    actor_lr: float = traced(1e-3, valid=POSITIVE)
    critic_lr: float = traced(1e-3, valid=POSITIVE)
    tau: float = traced(0.005, "Polyak weight of the target update", valid=UNIT_NO_ZERO)
    exploration_noise: float = traced(0.1, "std of the Gaussian action noise (agent units)",
                                      valid=NON_NEGATIVE)
    ou_theta: float = traced(0.15, "action_noise=ou: mean-reversion rate; step-to-step "
                             "correlation exp(-ou_theta ou_dt)", valid=NON_NEGATIVE)
    ou_dt: float = traced(0.01, "action_noise=ou: time step of the OU process", valid=POSITIVE)
    target_noise: float = traced(0.2, "std of the target policy smoothing noise",
                                 valid=NON_NEGATIVE)
    target_noise_clip: float = traced(0.5, valid=NON_NEGATIVE)


@dataclasses.dataclass(frozen=True)
class DDPGConfig(AlgoConfig, DDPGHparams, DDPGStatic):
    """DDPG's config: the fields of `DDPGStatic` and `DDPGHparams` as one."""


def default_config(env_name: str) -> DDPGConfig:
    """DDPG's defaults for ``env_name``'s family (`jaxrl.algos.families`)."""
    return DDPGConfig(**family_defaults("ddpg", env_name))


def networks(static: offpolicy.ActorCriticStatic, space):
    """``(DeterministicActor, Critic)``: ``mu(s)`` in ``[-1, 1]`` and ``Q(s, a)``."""
    return offpolicy.actor_critic_networks(DeterministicActor, static, space)


def optimizers(hp: DDPGHparams) -> ActorCriticGroups:
    return ActorCriticGroups(actor=clipped_adam(hp, hp.actor_lr),
                             critic=clipped_adam(hp, hp.critic_lr))


def init_learner(key, obs_dim: int, space, static: DDPGStatic, hp: DDPGHparams):
    actor, critic = networks(static, space)
    params = offpolicy.init_actor_critic(key, obs_dim, space, actor, critic, static.num_critics)
    return params, params, offpolicy.init_optimizers(optimizers(hp), params)


def explore(state, obs, key, static: DDPGStatic, space):
    """``[N, action_dim]`` deterministic action plus Gaussian noise of std
    ``exploration_noise``, clipped to the agent's ``[-1, 1]`` (training, and the policy's step when
    not deterministic). The noise is the state's OU processes where it carries them (training
    with ``action_noise="ou"``: correlated over steps, stationary std ``exploration_noise``),
    else drawn afresh."""
    actor, _ = networks(static, space)
    action = actor.apply(state.params.actor, obs)
    unit = state.noise if state.noise is not None else jax.random.normal(key, action.shape)
    noise = state.hparams.exploration_noise * unit
    return jnp.clip(action + noise, -1.0, 1.0)


def td_targets(state, batch, key, static: DDPGStatic, actor, critic) -> jax.Array:
    """``[B]`` ``y = R + discount * min_i Q_target_i(s', a')`` (stop-gradient)."""
    hp: DDPGHparams = state.hparams
    next_action = actor.apply(state.target_params.actor, batch.next_obs)
    if static.target_policy_noise:
        noise = jnp.clip(hp.target_noise * jax.random.normal(key, next_action.shape),
                         -hp.target_noise_clip, hp.target_noise_clip)
        next_action = jnp.clip(next_action + noise, -1.0, 1.0)
    q_next = offpolicy.critic_values_min(critic, state.target_params.critic, batch.next_obs,
                                         next_action)
    return jax.lax.stop_gradient(batch.reward + batch.discount * q_next)


def actor_loss(actor_params, critic_params, actor, critic, obs):
    """``-E[Q_1(s, mu(s))]`` over observations ``[B, obs_dim]``; the critic parameters are
    constants here (no gradient reaches them, reading 002's DDPG bug)."""
    chex.assert_rank(obs, 2)
    critic_params = jax.lax.stop_gradient(critic_params)
    q = offpolicy.critic_values(critic, critic_params, obs, actor.apply(actor_params, obs))
    return -q[0].mean(), ({}, None)


def learn(state, batch, weights, key, static: DDPGStatic, space) -> offpolicy.Learned:
    hp: DDPGHparams = state.hparams
    actor, critic = networks(static, space)
    tx = optimizers(hp)
    targets = td_targets(state, batch, key, static, actor, critic)
    critic_params, critic_opt, td, metrics = offpolicy.critic_step(
        state, critic, batch, targets, weights, tx.critic, static)
    loss = lambda p: actor_loss(p, critic_params, actor, critic, batch.obs)
    actor_update = offpolicy.actor_step(state, loss, tx.actor, static)
    metrics.update(actor_update.metrics)
    delayed = (state.update_step + 1) % static.policy_delay == 0
    actor_params, actor_opt = offpolicy.keep_if(delayed,
                                                (actor_update.params, actor_update.opt_state),
                                                (state.params.actor, state.opt_state.actor))
    params = ActorCriticGroups(actor=actor_params, critic=critic_params)
    target_params = offpolicy.keep_if(delayed, polyak_update(state.target_params, params,
                                                             hp.tau), state.target_params)
    return offpolicy.Learned(params, target_params,
                             ActorCriticGroups(actor=actor_opt, critic=critic_opt), td, metrics)


def make_policy(static: DDPGStatic, env, env_params) -> acting.Policy:
    """Acting by ``mu(s) [K, action_dim]`` in the agent's ``[-1, 1]`` (with exploration noise
    when not deterministic); its value ``V(s) = min_i Q_i(s, mu(s))`` ``[K]``."""
    actor, critic, flat = offpolicy.acting_parts(networks, static, env, env_params)

    def mode(state, obs):
        return actor.apply(state.params.actor, flat(obs))

    def value(state, obs):
        x = flat(obs)
        return offpolicy.critic_values_min(critic, state.params.critic, x,
                                           actor.apply(state.params.actor, x))

    return offpolicy.exploring_policy(mode, value, explore, static, env, env_params)


ALGORITHM = offpolicy.algorithm("ddpg", DDPGConfig, default_config, init_learner, explore, learn,
                                make_policy)

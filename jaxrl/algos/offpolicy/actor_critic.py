"""The continuous actor-critic kit DDPG, TD3 and SAC build on: networks, stacked critics, their
gradient steps and the acting parts."""

from __future__ import annotations

import dataclasses
from typing import Any

import chex
import jax
import jax.numpy as jnp
import optax
from flax import struct

from jaxrl.algos import acting
from jaxrl.algos.offpolicy.config import OffPolicyStatic, action_dim
from jaxrl.algos.offpolicy.state import check_transitions
from jaxrl.config import NON_NEGATIVE, ConfigError, static
from jaxrl.parts import diagnostics as diag
from jaxrl.parts.actor_critic import Critic
from jaxrl.parts.rollout import flatten_obs


# -- continuous actor-critic pieces (DDPG, TD3, SAC) -----------------------------------------
def init_critics(key, critic, obs_dim: int, act_dim: int, num: int):
    """``num`` independently initialized critics, params stacked on a leading axis."""
    return jax.vmap(lambda k: critic.init(k, jnp.zeros((1, obs_dim)), jnp.zeros((1, act_dim))))(
        jax.random.split(key, num))


def critic_values(critic, stacked_params, obs, action) -> jax.Array:
    """``[C, B]`` Q-values of every critic."""
    return jax.vmap(lambda p: critic.apply(p, obs, action))(stacked_params)


def critic_step(state, critic, batch, targets, weights, tx, static: OffPolicyStatic):
    """One Adam step of every critic on ``E_w[0.5 (Q_i(s, a) - y)^2]`` (summed over critics).
    ``targets`` ``[B]`` must already be ``stop_gradient``-ed. Returns ``(critic params,
    opt_state, td [B] of the first critic, metrics)``."""
    check_transitions(batch, weights)
    chex.assert_equal_shape([targets, weights])

    def loss(critic_params):
        q = critic_values(critic, critic_params, batch.obs, batch.action)  # [C, B]
        chex.assert_equal_shape_suffix([q, targets], 1)
        per_critic = 0.5 * jnp.mean(weights * jnp.square(q - targets), axis=-1)
        return per_critic.sum(), q

    with jax.named_scope("gradient"):
        (value, q), grads = jax.value_and_grad(loss, has_aux=True)(state.params.critic)
    with jax.named_scope("optimizer"):
        updates, opt_state = tx.update(grads, state.opt_state.critic, state.params.critic)
        params = optax.apply_updates(state.params.critic, updates)
    td = targets - q[0]
    with jax.named_scope("diagnostics"):
        metrics = {"critic_loss": value, "td_error_abs_mean": jnp.abs(td).mean(),
                   "td_error_abs_max": jnp.abs(td).max(), **diag.describe(q, "q"),
                   **diag.describe(targets, "target")}
        metrics.update({f"critic_{k}": v for k, v in
                        diag.gradient_stats(grads, updates, static.verbosity).items()})
    return params, opt_state, td, metrics


@struct.dataclass(frozen=True)
class ActorStep:
    """What one step of the actor gives: its new parameters and optimizer state, its metrics,
    and what its loss computed that the learner reads next (SAC: the sampled actions' log-probs
    ``[B]``, for the temperature; None for DDPG)."""

    params: Any
    opt_state: Any
    metrics: dict
    extra: Any = None


def actor_step(state, actor_loss, tx, static: OffPolicyStatic) -> ActorStep:
    """One Adam step of the actor on ``actor_loss(actor_params) -> (loss, (metrics, extra))``
    (which must treat the critics as constants)."""
    with jax.named_scope("gradient"):
        (value, (aux, extra)), grads = jax.value_and_grad(actor_loss, has_aux=True)(
            state.params.actor)
    with jax.named_scope("optimizer"):
        updates, opt_state = tx.update(grads, state.opt_state.actor, state.params.actor)
        params = optax.apply_updates(state.params.actor, updates)
    metrics = {"actor_loss": value, **aux}
    with jax.named_scope("diagnostics"):
        metrics.update({f"actor_{k}": v for k, v in
                        diag.gradient_stats(grads, updates, static.verbosity).items()})
    return ActorStep(params, opt_state, metrics, extra)


@struct.dataclass(frozen=True)
class ActorCriticGroups:
    """One entry per parameter group of DDPG / TD3: the parameters (online or target), their
    optimizers (``GradientTransformation``) or the optimizers' states."""

    actor: Any
    critic: Any  # critics stacked on a leading axis [C, ...]


def init_actor_critic(key, obs_dim: int, space, actor, critic,
                      num_critics: int) -> ActorCriticGroups:
    """Fresh parameters of an actor and ``num_critics`` stacked critics."""
    actor_key, critic_key = jax.random.split(key)
    return ActorCriticGroups(
        actor=actor.init(actor_key, jnp.zeros((1, obs_dim))),
        critic=init_critics(critic_key, critic, obs_dim, action_dim(space), num_critics))


def init_optimizers(tx, params):
    """The optimizer state of every group: ``tx.<group>.init(params.<group>)`` (``tx`` and
    ``params``: alike group containers, such as `ActorCriticGroups`)."""
    return type(tx)(**{f.name: getattr(tx, f.name).init(getattr(params, f.name))
                       for f in dataclasses.fields(tx)})


@dataclasses.dataclass(frozen=True)
class ActorCriticStatic(OffPolicyStatic):
    """The static fields of the off-policy actor-critics (DDPG, TD3, SAC)."""

    asymmetric_critic: bool = static(False, "the critics also see the env's privileged "
                                     "observation, the actor only its own part (an env that "
                                     "declares one: playground:TASK with env_kwargs critic_key)")
    actor_obs: int = static(0, "leading observation entries the actor sees (0: all); the "
                            "driver sets it from the env (asymmetric_critic)", valid=NON_NEGATIVE)

    def validate(self) -> None:
        super().validate()
        if self.asymmetric_critic and (self.her != "none" or self.torso not in ("mlp", "auto")):
            raise ConfigError("asymmetric_critic needs flat observations: her=none and an MLP "
                              "torso")

    def for_env(self, env):
        """This config with ``actor_obs`` read from ``env`` (`acting.policy_obs_size`)."""
        return dataclasses.replace(
            self, actor_obs=acting.policy_obs_size(self.asymmetric_critic, env))


def actor_critic_networks(actor_cls, static: ActorCriticStatic, space) -> tuple:
    """``(actor, critic)`` modules for a Box action space: ``actor_cls(action_dim, hidden,
    activation, torso, policy_obs)`` (DDPG's deterministic actor, SAC's squashed Gaussian; the
    actor sees the first ``static.actor_obs`` observation entries) and a `Critic`
    ``(obs [B, obs_dim], action [B, action_dim]) -> Q [B]`` of the same widths (all entries)."""
    if static.asymmetric_critic and not static.actor_obs:
        raise ConfigError("asymmetric_critic=True but actor_obs is unset: build the config "
                          "with config.for_env(env) (the driver does)")
    dim = action_dim(space)
    return (actor_cls(dim, tuple(static.hidden), static.activation, static.torso,
                      static.actor_obs),
            Critic(tuple(static.hidden), static.activation, static.torso))


def critic_values_min(critic, stacked_params, obs, action) -> jax.Array:
    """``[B]`` the smallest Q-value over the stacked critics (clipped double Q with two)."""
    return critic_values(critic, stacked_params, obs, action).min(axis=0)


def acting_parts(networks, static, env, env_params):
    """``(actor, critic, flatten)`` for the act / value functions built from raw env obs;
    ``networks(static, action_space) -> (actor, critic)``."""
    actor, critic = networks(static, env.action_space(env_params))
    obs_space = env.observation_space(env_params)
    return actor, critic, lambda obs: flatten_obs(obs, obs_space)

"""Collecting a rollout with the current policy (observations normalized as
`jaxrl.algos.obs_normalization` does) and reward scaling."""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp

from jaxrl.algos.obs_normalization import normalize_obs
from jaxrl.algos.onpolicy.config import OnPolicyStatic, RolloutStatic
from jaxrl.algos.onpolicy.state import OnPolicyState, RewardScaler
from jaxrl.ops import running_stats_update
from jaxrl.parts.rollout import collect_with_memory


def policy_sample(params, network, obs_normalized, key):
    """``(action, log_prob)`` sampled from the policy at normalized observations."""
    return network.apply(params, obs_normalized, method=network.dist).sample_and_log_prob(key)


def recurrent_step(network, params, memory, obs: jax.Array) -> tuple[Any, Any, jax.Array]:
    """One step of a recurrent policy within an episode (no reset): ``(memory, dist, value)``
    at normalized ``obs [..., obs_dim]`` from ``memory`` (leaves ``[..., ...]``)."""
    out: tuple[Any, Any, jax.Array] = network.apply(params, memory, obs,
                                                    jnp.zeros(obs.shape[:-1], bool))
    return out


def rollout(state: OnPolicyState, key, static: OnPolicyStatic, env, env_params, network):
    """Collect ``[T, N]`` transitions with the current policy and frozen obs statistics.
    Returns ``(env carry, policy memory, steps)`` to continue from."""

    def act(memory, obs, k):
        x = normalize_obs(state, obs, static)
        if not static.recurrent:
            return (memory, *policy_sample(state.params, network, x, k))
        memory, dist, _ = recurrent_step(network, state.params, memory, x)
        return (memory, *dist.sample_and_log_prob(k))

    return collect_with_memory(key, env, env_params, state.carry, state.memory, act,
                               static.num_steps)


def update_reward_scaler(state: OnPolicyState, traj, static: OnPolicyStatic) -> RewardScaler:
    """Track the running discounted return per env and its variance (if reward scaling)."""
    scaler = state.reward_scaler
    if not static.normalize_reward:
        return scaler
    gamma = state.hparams.gamma
    done = jnp.logical_or(traj.terminated, traj.truncated)

    def accumulate(running, step):
        reward, d = step
        running = running * gamma + reward
        return jnp.where(d, 0.0, running), running

    discounted, returns = jax.lax.scan(accumulate, scaler.discounted, (traj.reward, done))
    return RewardScaler(running_stats_update(scaler.stats, returns.reshape(-1)), discounted)


def scale_rewards(scaler: RewardScaler, rewards: jax.Array, static: OnPolicyStatic) -> jax.Array:
    if not static.normalize_reward:
        return rewards
    return rewards / jnp.sqrt(scaler.stats.var + 1e-8)


def loss_flags(traj, static: RolloutStatic) -> tuple[jax.Array, jax.Array]:
    """``(terminated, truncated)`` as the loss sees them. ``bootstrap_truncation=False`` is the
    classic bug (time limit treated as termination), kept as a switch to measure it."""
    if static.bootstrap_truncation:
        return traj.terminated, traj.truncated
    return jnp.logical_or(traj.terminated, traj.truncated), jnp.zeros_like(traj.truncated)

"""Vectorized rollouts shared by the on-policy algorithms.

`collect` steps ``N`` environments (vmapped) for ``T`` steps with a policy and returns a
time-major `Transition` batch ``[T, N, ...]`` plus the env state to continue from. It records
the *true* next observation of every step (``info["final_observation"]``), so advantage code can
bootstrap through time-limit truncation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from envs.spaces import Space
from jaxrl.networks import to_env_action


@struct.dataclass
class Transition:
    """One step of N envs; stacked by `collect` into ``[T, N, ...]``.

    obs: ``[N, obs_dim]`` the (raw, flattened) observation the action was chosen from.
    action: ``[N]`` int or ``[N, act_dim]`` float agent action (normalized space).
    reward: ``[N]`` raw reward r_t. terminated / truncated: ``[N]`` bool.
    next_obs: ``[N, obs_dim]`` true next observation s_{t+1} (the final one on done steps).
    log_prob: ``[N]`` log pi(a_t | s_t) under the acting policy.
    info: episode statistics of the `envs.EpisodeStatistics` wrapper (``[N]`` each).
    """

    obs: jax.Array
    action: jax.Array
    reward: jax.Array
    terminated: jax.Array
    truncated: jax.Array
    next_obs: jax.Array
    log_prob: jax.Array
    info: dict


@struct.dataclass
class EnvCarry:
    """What a rollout continues from: env states and current observations of N envs."""

    env_state: Any
    obs: jax.Array  # [N, obs_dim] raw flattened observation


def obs_dim(obs_space: Space) -> int:
    """Length of a flattened observation: the product of ``obs_space.shape`` (1 for ``()``)."""
    return int(np.prod(obs_space.shape))


def flatten_obs(obs: jax.Array, obs_space: Space) -> jax.Array:
    """``[..., *obs_shape] -> [..., obs_dim]`` float32."""
    lead = obs.shape[: obs.ndim - len(obs_space.shape)]
    return obs.reshape(*lead, obs_dim(obs_space)).astype(jnp.float32)


def reset_envs(key: jax.Array, env, env_params, num_envs: int) -> EnvCarry:
    obs, env_state = jax.vmap(env.reset, in_axes=(0, None))(
        jax.random.split(key, num_envs), env_params
    )
    return EnvCarry(env_state, flatten_obs(obs, env.observation_space(env_params)))


def env_step(key: jax.Array, env, env_params, carry: EnvCarry, action: jax.Array):
    """Step N envs with agent actions ``[N, ...]``. Returns ``(carry, reward, term, trunc,
    next_obs, info)`` with ``next_obs`` the true next observation."""
    num_envs = carry.obs.shape[0]
    env_action = to_env_action(env.action_space(env_params), action)
    obs, env_state, reward, term, trunc, info = jax.vmap(env.step, in_axes=(0, 0, 0, None))(
        jax.random.split(key, num_envs), carry.env_state, env_action, env_params
    )
    space = env.observation_space(env_params)
    final = flatten_obs(info["final_observation"], space)
    info = {k: v for k, v in info.items() if k.startswith("episode_")}
    return EnvCarry(env_state, flatten_obs(obs, space)), reward, term, trunc, final, info


def collect(
    key: jax.Array,
    env,
    env_params,
    carry: EnvCarry,
    act: Callable[[jax.Array, jax.Array], tuple[jax.Array, jax.Array]],
    num_steps: int,
) -> tuple[EnvCarry, Transition]:
    """Roll ``act(obs [N, obs_dim], key) -> (action, log_prob)`` for ``num_steps`` steps.

    Returns the carry to continue from and a `Transition` with leaves ``[T, N, ...]``.
    """

    def one_step(carry: EnvCarry, step_key):
        act_key, env_key = jax.random.split(step_key)
        action, log_prob = act(carry.obs, act_key)
        new_carry, reward, term, trunc, next_obs, info = env_step(
            env_key, env, env_params, carry, action
        )
        return new_carry, Transition(carry.obs, action, reward, term, trunc, next_obs, log_prob, info)

    return jax.lax.scan(one_step, carry, jax.random.split(key, num_steps))

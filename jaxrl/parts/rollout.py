"""Vectorized env stepping for both families, and the on-policy rollout.

`env_step` steps ``N`` environments (vmapped) once and returns the step as a
`jaxrl.parts.transition.Transition` (the one step schema; off-policy training stores it through the
n-step window). `collect` rolls a policy for ``T`` steps and returns a time-major `RolloutStep`
batch ``[T, N, ...]`` (the `Transition` plus the acting policy's log-probability and episode
statistics) and the env state to continue from. Both record the *true* next observation of
every step (``info["final_observation"]``), so advantage and TD code can bootstrap through
time-limit truncation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from envs.spaces import Space
from envs.starts import prepared_starts, refresh_starts
from jaxrl.parts.actions import to_env_action
from jaxrl.parts.recurrent import reset_memory
from jaxrl.parts.transition import Transition


@struct.dataclass
class RolloutStep(Transition):
    """A `Transition` of N envs as an on-policy rollout records it; stacked by `collect` into
    ``[T, N, ...]``. The step fields are `Transition`'s (``reward`` is the raw reward); added:

    log_prob: ``[N]`` log pi(a_t | s_t) under the acting policy.
    info: episode statistics of the `envs.EpisodeStatistics` wrapper (``[N]`` each).
    """

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


def env_step(key: jax.Array, env, env_params, carry: EnvCarry, action: jax.Array
             ) -> tuple[EnvCarry, Transition, dict]:
    """Step N envs with agent actions ``[N, ...]`` from ``carry.obs``. Returns ``(carry,
    transition, info)``: the carry to continue from, the step as a `Transition` (its
    ``next_obs`` the true next observation) and the episode statistics (``episode_*``, and
    ``env_nonfinite`` where the env reports a non-finite physics state). An env with prepared
    starts (`envs.starts`) first draws the next starts of some of its envs, and reports
    ``env_reused_start``."""
    num_envs = carry.obs.shape[0]
    states = carry.env_state
    if prepared_starts(env) is not None:
        key, starts_key = jax.random.split(key)
        states = refresh_starts(starts_key, env, env_params, states)
    env_action = to_env_action(env.action_space(env_params), action)
    obs, env_state, reward, term, trunc, info = jax.vmap(env.step, in_axes=(0, 0, 0, None))(
        jax.random.split(key, num_envs), states, env_action, env_params
    )
    space = env.observation_space(env_params)
    final = flatten_obs(info["final_observation"], space)
    kept = ("episode_", "env_nonfinite", "env_reused")
    info = {k: v for k, v in info.items() if k.startswith(kept)}
    step = Transition(carry.obs, action, reward, term, trunc, final)
    return EnvCarry(env_state, flatten_obs(obs, space)), step, info


def collect(
    key: jax.Array,
    env,
    env_params,
    carry: EnvCarry,
    act: Callable[[jax.Array, jax.Array], tuple[jax.Array, jax.Array]],
    num_steps: int,
) -> tuple[EnvCarry, RolloutStep]:
    """Roll ``act(obs [N, obs_dim], key) -> (action, log_prob)`` for ``num_steps`` steps.

    Returns the carry to continue from and a `RolloutStep` with leaves ``[T, N, ...]``.
    """
    carry, _, steps = collect_with_memory(key, env, env_params, carry, (),
                                          lambda m, obs, k: (m, *act(obs, k)), num_steps)
    return carry, steps


def collect_with_memory(key: jax.Array, env, env_params, carry: EnvCarry, memory: Any,
                        act: Callable, num_steps: int) -> tuple[EnvCarry, Any, RolloutStep]:
    """`collect` for a policy with memory (a recurrent one): ``act(memory, obs [N, obs_dim],
    key) -> (memory, action, log_prob)``, the memory (leaves ``[N, ...]``) zeroed after a step
    that ended an episode (terminated or truncated), so every episode starts from zero memory.
    Returns ``(carry, memory, steps [T, N, ...])``."""

    def one_step(state, step_key):
        carry, memory = state
        act_key, env_key = jax.random.split(step_key)
        with jax.named_scope("act"):
            memory, action, log_prob = act(memory, carry.obs, act_key)
        new_carry, step, info = env_step(env_key, env, env_params, carry, action)
        memory = reset_memory(memory, jnp.logical_or(step.terminated, step.truncated))
        return (new_carry, memory), RolloutStep(step.obs, step.action, step.reward,
                                                step.terminated, step.truncated, step.next_obs,
                                                log_prob, info)

    (carry, memory), steps = jax.lax.scan(one_step, (carry, memory),
                                          jax.random.split(key, num_steps))
    return carry, memory, steps

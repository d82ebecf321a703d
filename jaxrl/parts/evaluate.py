"""Evaluation: the first episode's return of each of a batch of fresh envs, under the policy's
mode (deterministic, the default) or its sampled actions. It is traced under
`envs.core.first_episode_only`: nothing after an env's first episode is read, so the program
computes the env's reset once, for the first episode (no auto-reset in its steps, no next
start drawn by `envs.starts.PreparedStarts`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import jax
import jax.numpy as jnp

from envs.core import first_episode_only
from jaxrl.parts.recurrent import reset_memory

EVAL_MAX_STEPS = 100_000  # cap on an episode's length during evaluation
DEFAULT_EVAL_STEPS = 10_000  # for envs whose params name no time limit


class Acting(Protocol):
    """What evaluation reads of a policy: its memory at an episode start and its step
    (`jaxrl.algos.acting.Policy`, every algorithm's, is one)."""

    initial: Callable[[int], Any]  # n -> memory of n envs at an episode start
    step: Callable[..., tuple[Any, jax.Array]]  # (state, memory, obs, key, det) -> (memory, a)


def evaluate(state, key, policy: Acting, env, env_params, episodes: int, max_steps: int,
             deterministic: bool = True) -> jax.Array:
    """Undiscounted return of the first episode of ``episodes`` envs under the policy
    (``policy.step(state, memory, obs, key, deterministic)``, memory carried from step to step;
    `jaxrl.algos.acting.Policy`: its mode when ``deterministic``, else its sampled action, the
    Q-learners' epsilon-greedy one at the current epsilon) as ``[episodes]``; NaN for an env
    that did not finish within ``max_steps``. ``env`` must be wrapped in `EpisodeStatistics`."""
    with first_episode_only():  # nothing after an env's first episode is read: no next start
        return _first_episodes(state, key, policy, env, env_params, episodes, max_steps,
                               deterministic)


def _first_episodes(state, key, policy: Acting, env, env_params, episodes: int, max_steps: int,
                    deterministic: bool) -> jax.Array:
    """`evaluate`'s body, traced under `first_episode_only`."""
    reset_key, key = jax.random.split(key)
    obs, env_state = jax.vmap(env.reset, in_axes=(0, None))(
        jax.random.split(reset_key, episodes), env_params)
    vstep = jax.vmap(env.step, in_axes=(0, 0, 0, None))

    def cond(c):
        return jnp.logical_and(c[0] < max_steps, ~jnp.all(c[5]))

    def body(c):
        t, k, obs, env_state, memory, done, ret = c
        k, act_key, step_key = jax.random.split(k, 3)
        memory, action = policy.step(state, memory, obs, act_key, deterministic)
        obs, env_state, _, _, _, info = vstep(jax.random.split(step_key, episodes), env_state,
                                              action, env_params)
        memory = reset_memory(memory, info["episode_done"])
        first = info["episode_done"] & ~done
        return (t + 1, k, obs, env_state, memory, done | info["episode_done"],
                jnp.where(first, info["episode_return"], ret))

    init = (jnp.int32(0), key, obs, env_state, policy.initial(episodes),
            jnp.zeros(episodes, bool), jnp.full(episodes, jnp.nan))
    *_, done, ret = jax.lax.while_loop(cond, body, init)
    return jnp.where(done, ret, jnp.nan)


TIME_LIMIT_NAMES = ("max_steps_in_episode", "episode_length", "time_limit")  # env params'


def time_limit(env_params) -> tuple[str, int] | None:
    """The env's time limit as (the name of its param, steps): gymnax's
    ``max_steps_in_episode``, brax's and Playground's ``episode_length``, the probes'
    ``time_limit``; None when its params name none."""
    for name in TIME_LIMIT_NAMES:
        if hasattr(env_params, name):
            return name, int(getattr(env_params, name))
    return None


def eval_horizon(env_params) -> int:
    """The step cap of an evaluation episode: the env's own time limit (at most
    `EVAL_MAX_STEPS`), or `DEFAULT_EVAL_STEPS` when its params name none."""
    limit = time_limit(env_params)
    return DEFAULT_EVAL_STEPS if limit is None else min(limit[1], EVAL_MAX_STEPS)

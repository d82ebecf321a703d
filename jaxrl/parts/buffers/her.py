"""Hindsight Experience Replay (Andrychowicz et al., 2017): replayed transitions of a goal env
(`envs.goals`) relabelled with goals the agent did reach.

A sampled one-step transition ``(s || g, a, r, s' || g)`` is relabelled, with probability
``1 - 1 / (1 + k)`` (``k`` relabels per real transition; the paper's ``k = 4`` relabels 80%),
to the goal ``g'`` = the achieved goal of ``s'_j`` for a step ``j`` of the same episode:

* ``future``: ``j`` uniform over the transition's own step and every later step of its episode;
* ``final``: ``j`` the episode's last step.

Its observations get ``g'`` as their desired goal, its reward is the env's
``compute_reward(achieved(s'), g')``, and it terminates where ``goal_reached`` (for envs that
end an episode on success) with ``discount = gamma * (1 - terminated)``. Relabelling happens at
sampling time, so the buffer keeps only real transitions.

Finding ``j``: the replay buffer writes the ``N`` envs' items of one env step to ``N``
consecutive slots, so the item after slot ``i`` in the same env is at slot ``i + N`` (mod
capacity). Looking ahead at most ``horizon`` (the env's step limit) such slots, stopping at
the first item that ended its episode (``ended``) or at the newest written item, gives the
episode's steps from ``i`` on; ``j`` never crosses an episode boundary. An episode still being
written relabels with the steps it has so far.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp

from envs.goals import GoalEnv, GoalLayout
from jaxrl.parts.buffers import uniform
from jaxrl.parts.buffers.nstep import NStepTransition

STRATEGIES = ("none", "future", "final")


def episode_steps_ahead(buffer: uniform.ReplayState, indices: jax.Array, num_envs: int,
                        horizon: int) -> jax.Array:
    """``[K]`` int32: how many items after slot ``indices[k]`` belong to its episode (0 when
    it is the episode's last written item), looking at most ``horizon - 1`` items ahead."""
    cap = uniform.capacity(buffer)
    offsets = jnp.arange(horizon, dtype=jnp.int32)  # items ahead: 0 .. horizon - 1
    slots = (indices[:, None] + offsets[None] * num_envs) % cap  # [K, H]
    ahead = (buffer.position - indices) % cap  # items written from slot i on, i included
    ahead = jnp.where(ahead == 0, cap, ahead)  # a full buffer's oldest item: all are after it
    written = offsets[None] * num_envs < ahead[:, None]  # [K, H]
    ended = buffer.data.ended[slots] & written
    last_written = jnp.sum(written, axis=1) - 1
    first_end = jnp.argmax(ended, axis=1)
    return jnp.where(jnp.any(ended, axis=1), first_end, last_written).astype(jnp.int32)


def relabel(buffer: uniform.ReplayState, batch: NStepTransition, indices: jax.Array,
            key: jax.Array, env: GoalEnv, env_params, layout: GoalLayout, strategy: str,
            k: int, gamma: jax.Array | float, num_envs: int, horizon: int
            ) -> NStepTransition:
    """``batch`` (one-step items sampled from ``buffer`` at ``indices [K]``, observations flat)
    with a ``1 - 1/(1+k)`` share relabelled by ``strategy`` (see the module docstring)."""
    if strategy not in STRATEGIES[1:]:
        raise ValueError(f"HER strategy must be one of {STRATEGIES[1:]}, got {strategy!r}")
    pick_key, step_key = jax.random.split(key)
    steps_left = episode_steps_ahead(buffer, indices, num_envs, horizon)
    if strategy == "future":
        ahead = jax.random.randint(step_key, steps_left.shape, 0, steps_left + 1)
    else:
        ahead = steps_left
    source = (indices + ahead * num_envs) % uniform.capacity(buffer)
    goal = layout.achieved(buffer.data.next_obs[source])
    relabelled = jax.random.uniform(pick_key, indices.shape) < 1.0 - 1.0 / (1.0 + k)
    goal = jnp.where(relabelled[:, None], goal, layout.desired(batch.obs))
    achieved = layout.achieved(batch.next_obs)
    reward = env.compute_reward(achieved, goal, env_params)
    terminated = env.goal_reached(achieved, goal, env_params) & env.terminates_on_success
    return dataclasses.replace(
        batch,
        obs=layout.with_desired(batch.obs, goal),
        next_obs=layout.with_desired(batch.next_obs, goal),
        reward=reward.astype(batch.reward.dtype),
        terminated=terminated,
        discount=(gamma * (1.0 - terminated)).astype(batch.discount.dtype))

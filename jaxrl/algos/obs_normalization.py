"""Observation normalization as agent state, one home for every kit that has it (on-policy, BC
and GAIL through it, the replay Q-learners, PQN).

A config's static ``normalize_obs`` switches it on; the statistics are the train state's
``obs_stats`` (`jaxrl.ops.RunningMeanStd` over flat observations ``[obs_dim]``, one per member:
the seeds axis is vmapped over them like every other leaf). Observations are standardized by
them and clipped to ``[-OBS_CLIP, OBS_CLIP]`` (`normalize_obs`) wherever the agent reads one:
acting, evaluation and the stored or exported policy as well as learning, so evaluation sees
what training saw. The kits fold the observations they collect into the statistics
(`update_obs_stats`). A kit whose state carries ``obs_stats`` only when normalization is on
(`init_obs_stats`: None when off, so the state, its checkpoints and its stored policy are
unchanged without it) normalizes with `normalize_with`, and a batch of transitions with
`normalize_transitions`: a replay keeps the raw observations and they are normalized when
sampled, by the statistics of that moment (they drift as the agent sees more of the env).
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar, overload

import jax

from envs.spaces import Discrete
from jaxrl.config import ConfigError
from jaxrl.ops import RunningMeanStd, normalize, running_stats_init, running_stats_update

OBS_CLIP = 10.0
Steps = TypeVar("Steps")


def normalize_with(stats: RunningMeanStd | None, obs: jax.Array) -> jax.Array:
    """``obs [..., obs_dim]`` standardized by ``stats`` and clipped to ``[-OBS_CLIP,
    OBS_CLIP]``; ``obs`` as given for None (normalization off)."""
    if stats is None:
        return obs
    return normalize(stats, obs, clip=OBS_CLIP)


def normalize_transitions(stats: RunningMeanStd | None, steps: Steps) -> Steps:
    """``steps`` (a `jaxrl.parts.transition.Transition` or `jaxrl.parts.buffers.nstep.NStepTransition`,
    any leading axes) with ``obs`` and ``next_obs [..., obs_dim]`` normalized by ``stats``;
    ``steps`` itself for None."""
    if stats is None:
        return steps
    obs, next_obs = steps.obs, steps.next_obs  # type: ignore[attr-defined]
    return dataclasses.replace(steps, obs=normalize_with(stats, obs),  # type: ignore[type-var]
                               next_obs=normalize_with(stats, next_obs))


def normalize_obs(state: Any, obs: jax.Array, static: Any) -> jax.Array:
    """``obs [..., obs_dim]`` as the agent reads it: standardized by ``state.obs_stats`` when
    ``static.normalize_obs``, else as given."""
    if not static.normalize_obs:
        return obs
    return normalize_with(state.obs_stats, obs)


def init_obs_stats(static: Any, obs_dim: int) -> RunningMeanStd | None:
    """Empty statistics ``[obs_dim]`` when ``static.normalize_obs``, else None (no leaves)."""
    return running_stats_init((obs_dim,)) if static.normalize_obs else None


@overload
def update_obs_stats(stats: RunningMeanStd, obs: jax.Array) -> RunningMeanStd: ...
@overload
def update_obs_stats(stats: None, obs: jax.Array) -> None: ...
def update_obs_stats(stats: RunningMeanStd | None, obs: jax.Array) -> RunningMeanStd | None:
    """``stats`` with the collected observations ``obs [..., obs_dim]`` (any leading axes:
    ``[N]`` envs of one step, ``[T, N]`` of a rollout) folded in; None stays None."""
    if stats is None:
        return None
    return running_stats_update(stats, obs.reshape(-1, obs.shape[-1]))


def check_unmasked(static: Any, space: Any) -> None:
    """`ConfigError` when ``static.normalize_obs`` and the action ``space``'s observations end
    in an action mask (`envs.spaces.Discrete.mask_size`): the mask must reach the action
    choice as the env gives it, and a normalized one does not."""
    if static.normalize_obs and isinstance(space, Discrete) and space.mask_size:
        raise ConfigError("this env's observation ends in an action mask, which the agent "
                          "reads as given: set normalize_obs=False")

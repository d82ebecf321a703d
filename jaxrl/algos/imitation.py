"""What the imitation algorithms (BC, GAIL) share: the expert's (s, a) pairs of a demonstration
set, in the agent's terms, as constants of the compiled programs.

The set is named by the static field ``demos`` (a demo id in the run store, or a set's folder;
`jaxrl.runs.demos`), loaded on the host once per process, checked against the env (observation
shape, action kind and shape), and handed to the programs as arrays that are baked in: the
member axis shares one copy, and the compile cache keys on ``demos``.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp

from envs.spaces import Discrete
from jaxrl.config import ConfigError
from jaxrl.parts.actions import from_env_action
from jaxrl.parts.rollout import flatten_obs
from jaxrl.runs.demos import Demos, demo_folder, load_demos

DEMOS_DOC = ("the expert's demonstration set: a demo id (`jaxrl runs demos`) or a set's folder; "
             "`jaxrl demos RUN_ID` records one")


class Expert(NamedTuple):
    """The expert's steps: ``obs [S, obs_dim]`` (flattened raw observations), ``action
    [S, ...]`` agent actions (int32 indices, or Box actions in ``[-1, 1]``)."""

    obs: jax.Array
    action: jax.Array


@functools.lru_cache(maxsize=8)
def _load(folder: str) -> Demos:
    return load_demos(folder)


def expert(demos: str, env, env_params) -> Expert:
    """The demonstration set ``demos`` as an `Expert` for ``env``. A missing set, or one
    recorded on an env of another shape, is a one-line `ConfigError`."""
    if not demos:
        raise ConfigError(f"imitation needs demonstrations: set demos=DEMO_ID ({DEMOS_DOC})")
    try:
        data = _load(str(demo_folder(demos).absolute()))
    except ValueError as err:  # StoreError
        raise ConfigError(str(err)) from None
    obs_space, action_space = env.observation_space(env_params), env.action_space(env_params)
    source = f"demonstrations {data.demo_id!r} (recorded on {data.meta.get('env')})"
    if tuple(data.obs.shape[1:]) != tuple(obs_space.shape):
        raise ConfigError(f"{source} have observations of shape {list(data.obs.shape[1:])}; "
                          f"this env's are {list(obs_space.shape)}")
    discrete = isinstance(action_space, Discrete)
    if discrete != (data.action.dtype.kind in "iu") or (
            not discrete and tuple(data.action.shape[1:]) != tuple(action_space.shape)):
        raise ConfigError(f"{source} have {data.action.dtype} actions of shape "
                          f"{list(data.action.shape[1:])}; this env's action space is "
                          f"{action_space!r}")
    obs = flatten_obs(jnp.asarray(data.obs, jnp.float32), obs_space)
    return Expert(obs, from_env_action(action_space, jnp.asarray(data.action)))


def sample(data: Expert, key: jax.Array, n: int) -> Expert:
    """``n`` expert steps drawn uniformly with replacement."""
    idx = jax.random.randint(key, (n,), 0, data.obs.shape[0])
    return Expert(data.obs[idx], data.action[idx])

"""Craftax's symbolic envs in the jaxrl env protocol (the ``craftax`` extra).

    env, params = envs.make("craftax:Craftax-Symbolic-v1")

The adapter wraps Craftax's env without auto-reset (``make_craftax_env_from_name(name,
auto_reset=False)``) and adds jaxrl's protocol:

* **Time limit as truncation.** Craftax ends an episode at ``max_timesteps`` inside its own
  ``done``, merged with death. Here its limit is pushed out of reach and the adapter's
  ``params.episode_length`` (Craftax's own default: 100,000 steps, 10,000 in Classic) is
  ``truncated``; ``terminated`` is Craftax's ``done`` (death, or the final boss beaten).
* **Optimistic resets** (Craftax's authors' recommendation: generating a world is the slow
  part of a step, and a plain auto-reset generates one for every env at every step, since a
  vmapped branch computes both sides). When ``step`` is vmapped over ``N`` envs, each step
  generates ``max(1, N // reset_ratio)`` fresh worlds and hands them to the envs that ended,
  in order; if more envs end on one step than worlds were generated, some share a world (with
  ``reset_ratio=16`` and 1,000-step episodes that is rare). ``reset_ratio=1`` is a plain
  auto-reset. Unbatched, ``step`` generates its own world.
* **Observations**: the flat symbolic vector (8,268 entries; Classic 1,345) in ``[0, 1]``.
* ``info``: Craftax's achievement flags (``Achievements/...``, 100 where unlocked at an
  episode's end) are dropped; the episode statistics are jaxrl's.

Craftax is imported by `task_names` and `make_task`, not by importing this module.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from envs.core import Environment, EqualByConstruction, auto_reset, resets_on_step, without_reset
from envs.spaces import Box, Discrete

#: The tasks: Craftax's symbolic envs (its pixel envs are not adapted).
TASKS = ("Craftax-Symbolic-v1", "Craftax-Classic-Symbolic-v1")
_OUT_OF_REACH = 2**30  # Craftax's own time limit, moved past any episode_length


def task_names() -> list[str]:
    """The symbolic Craftax envs (imports Craftax, so a missing extra shows here)."""
    import craftax.craftax_env  # noqa: F401

    return list(TASKS)


@struct.dataclass
class CraftaxParams:
    """``episode_length``: the time limit (agent steps); ``inner``: Craftax's own params."""

    episode_length: Any
    inner: Any


@struct.dataclass
class CraftaxState:
    inner: Any  # Craftax's EnvState
    t: jax.Array  # [] int32 steps taken in this episode


class CraftaxEnv(EqualByConstruction, Environment):
    """A Craftax symbolic env; see the module docstring. Static: close over it in ``jit``."""

    def __init__(self, task: str, reset_ratio: int = 16):
        from craftax.craftax_env import make_craftax_env_from_name

        if int(reset_ratio) < 1:
            raise ValueError(f"reset_ratio must be >= 1, got {reset_ratio}")
        self.task, self.reset_ratio = task, int(reset_ratio)
        self.name = f"craftax:{task}"
        self._env = make_craftax_env_from_name(task, auto_reset=False)
        inner = self._env.default_params
        self._default = CraftaxParams(episode_length=int(inner.max_timesteps),
                                      inner=inner.replace(max_timesteps=_OUT_OF_REACH))
        self.observation_size = int(np.prod(self._env.observation_space(inner).shape))
        self.num_actions = int(self._env.action_space(inner).n)
        self._fresh = _optimistic_reset(self._env.reset_env, self.reset_ratio)

    def __repr__(self) -> str:
        return f"CraftaxEnv({self.task!r}, reset_ratio={self.reset_ratio})"

    @property
    def default_params(self) -> CraftaxParams:
        return self._default

    def observation_space(self, params: Any = None) -> Box:
        return Box(low=0.0, high=1.0, shape=(self.observation_size,))

    def action_space(self, params: Any = None) -> Discrete:
        return Discrete(self.num_actions)

    def reset_env(self, key: jax.Array, params: CraftaxParams):
        obs, inner = self._env.reset_env(key, params.inner)
        return jnp.asarray(obs, jnp.float32), CraftaxState(inner, jnp.zeros((), jnp.int32))

    def step_env(self, key: jax.Array, state: CraftaxState, action: jax.Array,
                 params: CraftaxParams):
        obs, inner, reward, done, _ = self._env.step_env(key, state.inner, action, params.inner)
        t = state.t + 1
        return (jnp.asarray(obs, jnp.float32), CraftaxState(inner, t),
                jnp.asarray(reward, jnp.float32), jnp.asarray(done, bool),
                t >= params.episode_length, {})

    def step(self, key: jax.Array, state: CraftaxState, action: jax.Array,
             params: CraftaxParams | None = None):
        """`Environment.step` with the reset drawn optimistically (module docstring)."""
        params = self.default_params if params is None else params
        key_step, key_reset = jax.random.split(key)
        obs_st, state_st, reward, terminated, truncated, info = self.step_env(
            key_step, state, action, params)
        if not resets_on_step():
            return without_reset(obs_st, state_st, reward, terminated, truncated, info)
        ended = jnp.logical_or(terminated, truncated)
        obs_re, inner_re = self._fresh(key_reset, ended, params.inner)
        state_re = CraftaxState(inner_re, jnp.zeros((), jnp.int32))
        return auto_reset(obs_st, state_st, jnp.asarray(obs_re, jnp.float32), state_re, reward,
                          terminated, truncated, info)


def _optimistic_reset(reset_env, ratio: int):
    """``fresh(key, ended, inner_params) -> (obs, inner_state)``: one new world per env
    unbatched; vmapped over ``N`` envs, ``max(1, N // ratio)`` worlds shared out to the envs
    that ended, in order (`CraftaxEnv`)."""

    @jax.custom_batching.custom_vmap
    def fresh(key, ended, params):
        del ended
        return reset_env(key, params)

    @fresh.def_vmap
    def fresh_batched(axis_size, in_batched, key, ended, params):
        key_batched, ended_batched, params_batched = in_batched
        keys = key if key_batched else jax.random.split(key, axis_size)
        if any(jax.tree.leaves(params_batched)):  # per-env Craftax params: a world each
            axes = jax.tree.map(lambda batched: 0 if batched else None, params_batched)
            out = jax.vmap(reset_env, in_axes=(0, axes))(keys, params)
            return out, jax.tree.map(lambda _: True, out)
        ended = ended if ended_batched else jnp.broadcast_to(ended, (axis_size,))
        worlds = max(1, axis_size // ratio)
        made = jax.vmap(reset_env, in_axes=(0, None))(keys[:worlds], params)
        slot = (jnp.cumsum(ended.astype(jnp.int32)) - 1) % worlds  # the i-th ended env: world i
        out = jax.tree.map(lambda x: x[slot], made)
        return out, jax.tree.map(lambda _: True, out)

    return fresh


def make_task(task: str, episode_length: int | None = None, reset_ratio: int = 16
              ) -> tuple[CraftaxEnv, CraftaxParams]:
    """``craftax:<task>``: ``episode_length`` defaults to Craftax's own ``max_timesteps``."""
    key = (task, int(reset_ratio))
    if key not in _BUILT:
        env = CraftaxEnv(task, reset_ratio)
        env._make_args = key
        _BUILT[key] = env
    env = _BUILT[key]
    params = env.default_params
    if episode_length is not None:
        params = params.replace(episode_length=int(episode_length))
    return env, params


_BUILT: dict[tuple, CraftaxEnv] = {}  # built envs by make arguments (they hold no state)

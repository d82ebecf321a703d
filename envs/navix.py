"""Navix's MiniGrid envs in the jaxrl env protocol (the ``navix`` extra).

    env, params = envs.make("navix:Navix-DoorKey-5x5-v0")

Navix merges its time limit into its step type and resets inside ``step`` (with ``lax.cond``,
which a vmap turns into both branches). The adapter builds the env with Navix's limit out of
reach, steps it with Navix's transition alone (``_step``: no reset), and adds jaxrl's
protocol: ``terminated`` is Navix's termination (the goal reached, lava, ...), ``truncated`` is
``params.episode_length`` (Navix's own default, 100 steps), auto-reset with a fresh key and
``final_observation`` from `envs.core.Environment`. Observations are the task's own (Navix's
registered default, the full grid's symbolic ``[H, W, 3]`` codes), as float32.

Navix is imported by `task_names` and `make_task`, not by importing this module.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from envs.core import Environment, EqualByConstruction, cast_like, raw_key
from envs.spaces import Box, Discrete

_OUT_OF_REACH = 2**30  # Navix's own time limit, moved past any episode_length
_TERMINATION = 2  # navix.environments.environment.StepType.TERMINATION


def task_names() -> list[str]:
    """Every env Navix registers."""
    import navix

    return sorted(navix.registry())


@struct.dataclass
class NavixParams:
    episode_length: Any = 100  # the time limit (agent steps)


@struct.dataclass
class NavixState:
    timestep: Any  # Navix's Timestep (its state, step count, last observation)


class NavixEnv(EqualByConstruction, Environment):
    """A Navix env; see the module docstring. Static: close over it in ``jit``."""

    def __init__(self, task: str, episode_length: int = 100):
        import navix

        self.task, self.name = task, f"navix:{task}"
        self._env = navix.make(task, max_steps=_OUT_OF_REACH)
        self._default = NavixParams(episode_length=int(episode_length))
        space = self._env.observation_space
        self.obs_shape = tuple(int(d) for d in space.shape)
        self.obs_high = float(np.max(np.asarray(space.maximum)))
        self.num_actions = int(self._env.action_space.n)

    def __repr__(self) -> str:
        return f"NavixEnv({self.task!r})"

    @property
    def default_params(self) -> NavixParams:
        return self._default

    def observation_space(self, params: Any = None) -> Box:
        return Box(low=0.0, high=self.obs_high, shape=self.obs_shape)

    def action_space(self, params: Any = None) -> Discrete:
        return Discrete(self.num_actions)

    def reset_env(self, key: jax.Array, params: NavixParams):
        key = raw_key(key)
        timestep = self._env.reset(key)
        return jnp.asarray(timestep.observation, jnp.float32), NavixState(timestep)

    def step_env(self, key: jax.Array, state: NavixState, action: jax.Array,
                 params: NavixParams):
        del key  # Navix draws its randomness from the key in its state
        timestep = self._env._step(state.timestep, jnp.asarray(action, jnp.int32))
        timestep = cast_like(timestep, state.timestep)  # keep the carry's dtypes
        return (jnp.asarray(timestep.observation, jnp.float32), NavixState(timestep),
                jnp.asarray(timestep.reward, jnp.float32),
                timestep.step_type == _TERMINATION, timestep.t >= params.episode_length, {})


def make_task(task: str, episode_length: int = 100) -> tuple[NavixEnv, NavixParams]:
    """``navix:<task>``; ``episode_length`` is Navix's own default (100)."""
    if task not in _BUILT:
        env = NavixEnv(task)
        env._make_args = (task,)
        _BUILT[task] = env
    env = _BUILT[task]
    return env, env.default_params.replace(episode_length=int(episode_length))


_BUILT: dict[str, NavixEnv] = {}  # built envs by task (they hold no state)

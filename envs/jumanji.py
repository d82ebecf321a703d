"""Jumanji's single-agent tasks with discrete actions in the jaxrl env protocol (the ``jumanji``
extra).

    env, params = envs.make("jumanji:Snake-v1")

Jumanji's ``step`` does not reset and ends an episode dm_env-style (``discount`` 0 at a
terminal state), but most of its tasks end at their time limit the same way, as a terminal
state (Snake, Maze, SlidingTilePuzzle, ...): a value bootstrapped from there would be wrong. The
adapter builds the task with its limit out of reach and makes ``params.episode_length`` (the
task's own ``time_limit`` by default, or ``time_limit=`` / ``episode_length=``) jaxrl's
truncation; ``terminated`` is Jumanji's terminal state. Auto-reset and ``final_observation``
come from `envs.core.Environment`. A task without a time limit (Game2048 ends when no move is
left) has ``episode_length`` 100,000, never reached.

**Specs to spaces.** The observation (a NamedTuple of arrays, nested for some tasks) becomes one
flat float32 vector: every field but ``action_mask`` flattened in field order, then the mask
(1 allowed, 0 not) last; ``action_mask_size`` says how many entries it has (and the action
space's ``mask_size``, `envs.spaces.Discrete`): an on-policy algorithm's policy gives the masked
actions no probability (`jaxrl.parts.actor_critic.ActorCritic`), and the Q-learners act, explore and
bootstrap among the allowed actions only (`jaxrl.algos.q_learner`). An
action spec of one ``DiscreteArray`` is ``Discrete(n)``; a ``MultiDiscreteArray`` (Minesweeper's
row and column, Tetris' rotation and column) is ``Discrete(prod)``, unravelled for Jumanji.

Tasks whose data Jumanji fetches from the Hugging Face hub (Sokoban's levels) fail offline with
Jumanji's own error; multi-agent and continuous tasks are not adapted.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from envs.core import Environment, EqualByConstruction, cast_like, raw_key
from envs.spaces import Box, Discrete

#: The tasks with (multi-)discrete actions adapted here.
TASKS = ("Snake-v1", "Game2048-v1", "Maze-v0", "SlidingTilePuzzle-v0", "Minesweeper-v0",
         "Tetris-v0", "RubiksCube-v0", "RubiksCube-partly-scrambled-v0", "Sudoku-v0",
         "Sudoku-very-easy-v0", "GraphColoring-v1", "Knapsack-v1", "TSP-v1", "CVRP-v1",
         "JobShop-v0", "BinPack-v2", "Connector-v3", "Sokoban-v0")
_LAST = 2  # dm_env's StepType.LAST
_NO_LIMIT = 100_000  # episode_length of a task without a time limit (Game2048): never reached
_OUT_OF_REACH = 2**30  # a task's own time limit, moved past any episode_length


def task_names() -> list[str]:
    """The adapted tasks Jumanji registers."""
    import jumanji

    return [t for t in TASKS if t in jumanji.registered_environments()]


@struct.dataclass
class JumanjiParams:
    episode_length: Any = _NO_LIMIT  # the time limit (agent steps)


@struct.dataclass
class JumanjiState:
    state: Any  # Jumanji's State (its key inside)
    t: jax.Array  # [] int32 steps taken in this episode


def _fields(obs: Any) -> tuple[list[Any], Any]:
    """``(feature leaves in field order, the action mask or None)`` of a Jumanji observation."""
    items = obs._asdict() if hasattr(obs, "_asdict") else {"obs": obs}
    mask = items.pop("action_mask", None)
    return jax.tree.leaves(items), mask


class JumanjiEnv(EqualByConstruction, Environment):
    """A Jumanji task; see the module docstring. Static: close over it in ``jit``."""

    def __init__(self, task: str, **kwargs: Any):
        import jumanji

        self.task, self.name = task, f"jumanji:{task}"
        limit = getattr(jumanji.make(task, **kwargs), "time_limit", None)
        if limit:  # the task's own limit would end its episodes as terminal: out of reach
            kwargs = {**kwargs, "time_limit": _OUT_OF_REACH}
        self._env = jumanji.make(task, **kwargs)
        spec = self._env.action_spec
        self._nvec = tuple(int(n) for n in np.ravel(np.asarray(
            spec.num_values)))  # one entry for a DiscreteArray
        self.num_actions = int(np.prod(self._nvec))
        _, timestep = jax.eval_shape(self._env.reset, jax.ShapeDtypeStruct((2,), jnp.uint32))
        leaves, mask = _fields(timestep.observation)
        self.action_mask_size = int(np.prod(mask.shape)) if mask is not None else 0
        self.observation_size = sum(int(np.prod(x.shape)) for x in leaves) \
            + self.action_mask_size
        self._default = JumanjiParams(episode_length=int(limit) if limit else _NO_LIMIT)

    def __repr__(self) -> str:
        return f"JumanjiEnv({self.task!r})"

    @property
    def default_params(self) -> JumanjiParams:
        return self._default

    def observation_space(self, params: Any = None) -> Box:
        return Box(low=-np.inf, high=np.inf, shape=(self.observation_size,))

    def action_space(self, params: Any = None) -> Discrete:
        whole = self.action_mask_size == self.num_actions  # not a mask per component (JobShop)
        return Discrete(self.num_actions, mask_size=self.action_mask_size if whole else 0)

    def _obs(self, obs: Any) -> jax.Array:
        leaves, mask = _fields(obs)
        parts = [jnp.ravel(x).astype(jnp.float32) for x in leaves]
        if mask is not None:
            parts.append(jnp.ravel(mask).astype(jnp.float32))
        return jnp.concatenate(parts)

    def _action(self, action: jax.Array) -> jax.Array:
        action = jnp.asarray(action, jnp.int32)
        if len(self._nvec) == 1:
            return action
        return jnp.stack(jnp.unravel_index(action, self._nvec)).astype(jnp.int32)

    def reset_env(self, key: jax.Array, params: JumanjiParams):
        key = raw_key(key)
        state, timestep = self._env.reset(key)
        return self._obs(timestep.observation), JumanjiState(state, jnp.zeros((), jnp.int32))

    def step_env(self, key: jax.Array, state: JumanjiState, action: jax.Array,
                 params: JumanjiParams):
        del key  # Jumanji draws its randomness from the key in its state
        inner, timestep = self._env.step(state.state, self._action(action))
        inner = cast_like(inner, state.state)  # keep the carry's dtypes
        t = state.t + 1
        terminated = (timestep.step_type == _LAST) & (timestep.discount == 0)
        return (self._obs(timestep.observation), JumanjiState(inner, t),
                jnp.asarray(timestep.reward, jnp.float32), terminated,
                t >= params.episode_length, {})


def make_task(task: str, episode_length: int | None = None, time_limit: int | None = None,
              **kwargs: Any) -> tuple[JumanjiEnv, JumanjiParams]:
    """``jumanji:<task>``: ``episode_length`` (or Jumanji's name for it, ``time_limit``) is the
    time limit, the task's own by default; other keyword arguments go to Jumanji's
    constructor."""
    key = (task, tuple(sorted((k, repr(v)) for k, v in kwargs.items())))
    if key not in _BUILT:
        env = JumanjiEnv(task, **kwargs)
        env._make_args = key
        _BUILT[key] = env
    env = _BUILT[key]
    limit = episode_length if episode_length is not None else time_limit
    params = env.default_params
    return env, params if limit is None else params.replace(episode_length=int(limit))


_BUILT: dict[tuple, JumanjiEnv] = {}  # built envs by make arguments (they hold no state)

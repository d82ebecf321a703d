"""Goal-conditioned environments, the setting of Hindsight Experience Replay.

A goal env is an ordinary env of the protocol whose flat observation is three parts::

    [ observation (obs_size) | achieved goal (goal_size) | desired goal (goal_size) ]

so every algorithm trains on it unchanged, and a goal env also says how to read and rescore
that observation (what `jaxrl.parts.buffers.her` relabels with):

    env.goal_layout(params) -> GoalLayout            the three slices
    env.compute_reward(achieved, desired, params)    [...] float32, vectorized
    env.goal_reached(achieved, desired, params)      [...] bool
    env.terminates_on_success                        the episode ends when the goal is reached

`goal_env(env)` finds the goal env under wrappers (None when there is none). The reward of
both envs here is the HER paper's sparse one: 0 on reaching the goal, -1 on every other step;
an episode ends (terminated) on reaching it, or is truncated after ``max_steps_in_episode``
steps. A
greedy policy's return is then ``-(steps before the goal)``, and an episode succeeded exactly
when its return is above ``-max_steps`` (`succeeded`).

* ``goal:BitFlip`` (``n_bits=25``): the HER paper's bit-flipping task. The state is ``n`` bits,
  an action flips one, the goal is ``n`` random bits; ``max_steps_in_episode = n``. The
  observation part is empty: the achieved goal is the bits themselves.
* ``goal:PointReach``: a point mass in ``[-1, 1]^2`` pushed by a force ``a`` in ``[-1, 1]^2``
  (``v <- damping * v + step_size * a``, ``x <- x + v``; the walls stop it), to come within
  ``tolerance`` of a random goal in the same square; ``max_steps_in_episode = 50``. Its
  observation part is the velocity (scaled to about ``[-1, 1]``), its achieved goal the
  position.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
from flax import struct

from envs.core import Environment, wrapped_instance
from envs.spaces import Box, Discrete


@dataclasses.dataclass(frozen=True)
class GoalLayout:
    """Where the parts of a goal env's flat observation ``[..., obs_size + 2 * goal_size]``
    are."""

    obs_size: int
    goal_size: int

    def achieved(self, flat: jax.Array) -> jax.Array:
        return flat[..., self.obs_size:self.obs_size + self.goal_size]

    def desired(self, flat: jax.Array) -> jax.Array:
        return flat[..., self.obs_size + self.goal_size:]

    def with_desired(self, flat: jax.Array, goal: jax.Array) -> jax.Array:
        """``flat`` with its desired goal replaced by ``goal [..., goal_size]``."""
        return jnp.concatenate([flat[..., :self.obs_size + self.goal_size], goal], axis=-1)


class GoalEnv(Environment):
    """Base of goal-conditioned envs (see the module docstring)."""

    terminates_on_success: bool = True

    def goal_layout(self, params: Any) -> GoalLayout:
        raise NotImplementedError

    def step_limit(self, params: Any) -> int:
        """The most steps an episode has (it is truncated there)."""
        return int(params.max_steps_in_episode)

    def goal_reached(self, achieved: jax.Array, desired: jax.Array, params: Any) -> jax.Array:
        raise NotImplementedError

    def compute_reward(self, achieved: jax.Array, desired: jax.Array, params: Any) -> jax.Array:
        """The sparse reward: 0 where the goal is reached, -1 elsewhere."""
        return jnp.where(self.goal_reached(achieved, desired, params), 0.0, -1.0).astype(
            jnp.float32)

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and vars(other) == vars(self)

    def __hash__(self) -> int:
        return hash((type(self), tuple(sorted(vars(self).items()))))


def goal_env(env) -> GoalEnv | None:
    """The goal env ``env`` is or wraps (through ``.env``), or None."""
    return wrapped_instance(env, GoalEnv)


def succeeded(returns: jax.Array, max_steps: int) -> jax.Array:
    """Whether episodes of the sparse goal reward with these ``returns`` reached their goal."""
    return returns > -max_steps


@struct.dataclass
class GoalParams:
    max_steps_in_episode: int = 50
    step_size: float = 0.04  # PointReach: the velocity a full push adds per step
    damping: float = 0.8  # PointReach: the velocity kept from one step to the next
    tolerance: float = 0.1  # PointReach: how close to the goal counts as reaching it


@struct.dataclass
class GoalState:
    achieved: jax.Array  # [G] float32
    goal: jax.Array  # [G] float32
    time: jax.Array  # [] int32


@struct.dataclass
class PointState:
    position: jax.Array  # [2] float32, the achieved goal
    velocity: jax.Array  # [2] float32
    goal: jax.Array  # [2] float32
    time: jax.Array  # [] int32


class BitFlip(GoalEnv):
    """The HER paper's bit-flipping task with ``n_bits`` bits (see the module docstring)."""

    def __init__(self, n_bits: int = 25):
        if not isinstance(n_bits, int) or n_bits < 1:
            raise ValueError(f"n_bits must be a whole number >= 1, got {n_bits!r}")
        self.n_bits = n_bits
        self.name = f"BitFlip-{n_bits}"

    @property
    def default_params(self) -> GoalParams:
        return GoalParams(max_steps_in_episode=self.n_bits)

    def goal_layout(self, params) -> GoalLayout:
        return GoalLayout(0, self.n_bits)

    def goal_reached(self, achieved, desired, params):
        return jnp.all(achieved == desired, axis=-1)

    def observation_space(self, params) -> Box:
        return Box(low=0.0, high=1.0, shape=(2 * self.n_bits,))

    def action_space(self, params) -> Discrete:
        return Discrete(self.n_bits)

    def _obs(self, state: GoalState) -> jax.Array:
        return jnp.concatenate([state.achieved, state.goal])

    def reset_env(self, key, params):
        bits_key, goal_key = jax.random.split(key)
        bits = jax.random.bernoulli(bits_key, 0.5, (self.n_bits,)).astype(jnp.float32)
        goal = jax.random.bernoulli(goal_key, 0.5, (self.n_bits,)).astype(jnp.float32)
        state = GoalState(bits, goal, jnp.zeros((), jnp.int32))
        return self._obs(state), state

    def step_env(self, key, state: GoalState, action, params):
        bits = state.achieved.at[action].set(1.0 - state.achieved[action])
        state = GoalState(bits, state.goal, state.time + 1)
        reached = self.goal_reached(bits, state.goal, params)
        reward = self.compute_reward(bits, state.goal, params)
        truncated = state.time >= params.max_steps_in_episode
        return self._obs(state), state, reward, reached, truncated, {}


class PointReach(GoalEnv):
    """A point mass pushed to a random goal (see the module docstring)."""

    def __init__(self):
        self.name = "PointReach"

    @property
    def default_params(self) -> GoalParams:
        return GoalParams()

    def goal_layout(self, params) -> GoalLayout:
        return GoalLayout(2, 2)  # observation: the velocity; achieved goal: the position

    def goal_reached(self, achieved, desired, params):
        return jnp.linalg.norm(achieved - desired, axis=-1) <= params.tolerance

    def observation_space(self, params) -> Box:
        return Box(low=-1.0, high=1.0, shape=(6,))

    def action_space(self, params) -> Box:
        return Box(low=-1.0, high=1.0, shape=(2,))

    def _obs(self, state: PointState) -> jax.Array:
        return jnp.concatenate([state.velocity * 5.0, state.position, state.goal])

    def reset_env(self, key, params):
        pos_key, goal_key = jax.random.split(key)
        pos = jax.random.uniform(pos_key, (2,), minval=-1.0, maxval=1.0)
        goal = jax.random.uniform(goal_key, (2,), minval=-1.0, maxval=1.0)
        state = PointState(pos, jnp.zeros(2), goal, jnp.zeros((), jnp.int32))
        return self._obs(state), state

    def step_env(self, key, state: PointState, action, params):
        force = jnp.clip(jnp.asarray(action, jnp.float32), -1.0, 1.0)
        velocity = params.damping * state.velocity + params.step_size * force
        position = jnp.clip(state.position + velocity, -1.0, 1.0)
        velocity = jnp.where(jnp.abs(position) >= 1.0, 0.0, velocity)  # stopped by the walls
        state = PointState(position, velocity, state.goal, state.time + 1)
        reached = self.goal_reached(position, state.goal, params)
        reward = self.compute_reward(position, state.goal, params)
        truncated = state.time >= params.max_steps_in_episode
        return self._obs(state), state, reward, reached, truncated, {}


GOAL_ENVS = {"goal:BitFlip": BitFlip, "goal:PointReach": PointReach}


def make_goal_env(name: str, **kwargs) -> tuple[GoalEnv, GoalParams]:
    """``goal:BitFlip`` (``n_bits``, ``max_steps_in_episode``) or ``goal:PointReach``
    (``max_steps_in_episode``, ``step_size``, ``damping``, ``tolerance``): constructor options
    go to the env, the rest to its params."""
    cls = GOAL_ENVS[name]
    ctor = {k: kwargs.pop(k) for k in ("n_bits",) if k in kwargs and cls is BitFlip}
    env = cls(**ctor)
    params = env.default_params
    unknown = set(kwargs) - {f.name for f in dataclasses.fields(params)}
    if unknown:
        raise TypeError(f"unknown option(s) {', '.join(sorted(unknown))}")
    return env, params.replace(**kwargs)

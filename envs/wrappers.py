"""Episode statistics: returns and lengths of *completed* episodes only.

`EpisodeStatistics` wraps any env of the protocol and adds to ``info``:

* ``episode_return`` / ``episode_length``: the return and length of the episode that ended on
  this step; meaningful only where ``episode_done`` is true (0 elsewhere, never to be averaged
  blindly);
* ``episode_done``: ``terminated | truncated``.

An env whose training signal is not the game's (Atari: clipped rewards, a lost life marked
terminal) reports the game's own reward in ``info["true_reward"]`` and the game's end in
``info["game_over"]``; then returns and lengths are those of whole games, in the game's score.

`RewardScale` multiplies the training reward by a constant and keeps returns in the env's units;
`ObservationSubset` hides entries of the observation (a partially observed env);
`StickyActions` repeats the previous action with a probability (MinAtar's and the ALE's
stochasticity).

`completed_episode_summary` reduces those over a batch of steps to mean/std/min/max and a count,
with NaN (not a fake 0) when no episode finished.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
from flax import struct

from envs.core import Environment


@struct.dataclass
class StickyState:
    env_state: Any
    last_action: jax.Array  # [] int32 the action the env executed last (0 at an episode start)


@struct.dataclass
class EpisodeStatsState:
    env_state: Any
    episode_return: jax.Array  # [] float32 running return of the current episode
    episode_length: jax.Array  # [] int32 running length of the current episode


class Wrapper(Environment):
    """An env around another: the inner env's params, spaces and reset pass through, and two
    wrappers are equal when their types, inner envs and `options` are (envs are static
    arguments of jitted programs, so equality decides program reuse)."""

    def __init__(self, env: Environment):
        self.env = env
        self.name = getattr(env, "name", type(env).__name__)

    def options(self) -> tuple:
        """What besides the inner env makes this wrapper distinct (none by default)."""
        return ()

    def __getattr__(self, name: str):
        """A public attribute this wrapper lacks is the inner env's (an adapter's
        ``action_mask_size``, ``backend``, ...)."""
        if name.startswith("_") or name == "env":
            raise AttributeError(name)
        return getattr(self.env, name)

    def __hash__(self):
        return hash((type(self), self.env, self.options()))

    def __eq__(self, other):
        return (type(other) is type(self) and other.env == self.env
                and other.options() == self.options())

    @property
    def default_params(self):
        return self.env.default_params

    def observation_space(self, params=None):
        return self.env.observation_space(params)

    def action_space(self, params=None):
        return self.env.action_space(params)

    def reset(self, key, params=None):
        return self.env.reset(key, params)

    def inner_state(self, state):
        """The inner env's state within this wrapper's ``state`` (the same by default)."""
        return state


class EpisodeStatistics(Wrapper):
    """Tracks undiscounted return and length per episode; see the module docstring."""

    def inner_state(self, state):
        return state.env_state

    def reset(self, key, params=None):
        obs, env_state = self.env.reset(key, params)
        zero = jnp.zeros((), jnp.float32)
        return obs, EpisodeStatsState(env_state, zero, jnp.zeros((), jnp.int32))

    def step(self, key, state, action, params=None):
        obs, env_state, reward, terminated, truncated, info = self.env.step(
            key, state.env_state, action, params
        )
        done = info.get("game_over", jnp.logical_or(terminated, truncated))
        ret = state.episode_return + info.get("true_reward", reward)
        length = state.episode_length + 1
        info = {
            **info,
            "episode_return": jnp.where(done, ret, 0.0),
            "episode_length": jnp.where(done, length, 0),
            "episode_done": done,
        }
        state = EpisodeStatsState(
            env_state, jnp.where(done, 0.0, ret), jnp.where(done, 0, length).astype(jnp.int32)
        )
        return obs, state, reward, terminated, truncated, info


class RewardScale(Wrapper):
    """Multiplies the training reward by ``scale`` (a test of scale invariance: PopArt, reward
    normalization). Episode returns stay in the env's own units: the unscaled reward goes to
    ``info["true_reward"]`` unless the env already reports one (Atari's game score)."""

    def __init__(self, env: Environment, scale: float):
        super().__init__(env)
        self.scale = float(scale)

    def options(self) -> tuple:
        return (self.scale,)

    def step(self, key, state, action, params=None):
        obs, state, reward, terminated, truncated, info = self.env.step(key, state, action, params)
        info = {**info, "true_reward": info.get("true_reward", reward)}
        return obs, state, reward * self.scale, terminated, truncated, info


class ObservationSubset(Wrapper):
    """Keeps the entries ``indices`` of a flat ``Box`` observation (a partially observed
    version of the env: ``CartPole-v1`` with ``(0, 2)`` sees the cart's position and the pole's
    angle but neither velocity). ``info["final_observation"]`` is cut the same way."""

    def __init__(self, env: Environment, indices):
        super().__init__(env)
        self.indices = tuple(int(i) for i in indices)
        space = env.observation_space(env.default_params)
        if len(space.shape) != 1 or not self.indices or not all(
                0 <= i < space.shape[0] for i in self.indices):
            raise ValueError(f"observation_indices {list(self.indices)} do not index this env's "
                             f"observation of shape {list(space.shape)}")

    def options(self) -> tuple:
        return self.indices

    def observation_space(self, params=None):
        space = self.env.observation_space(params)
        keep = list(self.indices)
        return type(space)(space.low[keep], space.high[keep], (len(keep),))

    def _cut(self, obs):
        return obs[..., jnp.asarray(self.indices)]

    def reset(self, key, params=None):
        obs, state = self.env.reset(key, params)
        return self._cut(obs), state

    def step(self, key, state, action, params=None):
        obs, state, reward, terminated, truncated, info = self.env.step(key, state, action, params)
        info = {**info, "final_observation": self._cut(info["final_observation"])}
        return self._cut(obs), state, reward, terminated, truncated, info


def completed_episode_summary(info: dict, prefix: str = "episode_") -> dict[str, jax.Array]:
    """Statistics over the completed episodes in a batch of ``info`` dicts (any shape).

    Returns ``{prefix+"return_mean"|_std|_min|_max, prefix+"length_mean", prefix+"count"}``;
    every statistic is NaN when ``count == 0`` so "no episode finished" is never reported as 0.
    Where the env reports ``info["env_nonfinite"]`` (its physics state turned NaN or infinite:
    `envs.playground`), also ``"env_nonfinite_steps"``, how many such steps the batch holds,
    which the training loop's NaN guard reads; where the env has prepared starts
    (`envs.starts`), ``"env_reused_starts"``, how many episodes began from a start an earlier
    one had begun from.
    """
    done = info["episode_done"]
    count = jnp.sum(done)
    out = {f"{prefix}count": count.astype(jnp.float32)}
    for key in ("return", "length"):
        x = info[f"episode_{key}"].astype(jnp.float32)
        out.update(_masked_stats(x, done, f"{prefix}{key}"))
    if "env_nonfinite" in info:
        out["env_nonfinite_steps"] = jnp.sum(info["env_nonfinite"]).astype(jnp.float32)
    if "env_reused_start" in info:
        out["env_reused_starts"] = jnp.sum(info["env_reused_start"]).astype(jnp.float32)
    return out


def _masked_stats(x: jax.Array, mask: jax.Array, name: str) -> dict[str, jax.Array]:
    count = jnp.sum(mask)
    safe = jnp.maximum(count, 1)
    mean = jnp.sum(jnp.where(mask, x, 0.0)) / safe
    var = jnp.sum(jnp.where(mask, (x - mean) ** 2, 0.0)) / safe
    nan = jnp.float32(jnp.nan)
    has = count > 0
    return {
        f"{name}_mean": jnp.where(has, mean, nan),
        f"{name}_std": jnp.where(has, jnp.sqrt(var), nan),
        f"{name}_min": jnp.where(has, jnp.min(jnp.where(mask, x, jnp.inf)), nan),
        f"{name}_max": jnp.where(has, jnp.max(jnp.where(mask, x, -jnp.inf)), nan),
    }


class StickyActions(Wrapper):
    """With probability ``prob`` the env executes the action it executed last instead of the
    agent's (MinAtar's ``sticky_action_prob``, 0.1 by default there and in its paper; the ALE's
    ``repeat_action_probability``). The agent's own action is what it learns from; the last
    action is the no-op (0) at the start of every episode, as after the ALE's reset. Discrete
    actions only."""

    def __init__(self, env: Environment, prob: float):
        super().__init__(env)
        self.prob = float(prob)
        if not 0.0 <= self.prob < 1.0:
            raise ValueError(f"sticky_action_prob must be in [0, 1), got {prob!r}")
        if not hasattr(env.action_space(env.default_params), "n"):
            raise ValueError("sticky_action_prob needs discrete actions; this env's are "
                             f"{env.action_space(env.default_params)!r}")

    def options(self) -> tuple:
        return (self.prob,)

    def inner_state(self, state):
        return state.env_state

    def reset(self, key, params=None):
        obs, env_state = self.env.reset(key, params)
        return obs, StickyState(env_state, jnp.zeros((), jnp.int32))

    def step(self, key, state, action, params=None):
        stick_key, key = jax.random.split(key)
        action = jnp.asarray(action, jnp.int32)
        executed = jnp.where(jax.random.uniform(stick_key) < self.prob, state.last_action,
                             action)
        obs, env_state, reward, terminated, truncated, info = self.env.step(
            key, state.env_state, executed, params)
        ended = jnp.logical_or(terminated, truncated)
        last = jnp.where(ended, 0, executed).astype(jnp.int32)
        return obs, StickyState(env_state, last), reward, terminated, truncated, info

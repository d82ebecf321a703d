"""Prepared starts: an env's next episode start computed ahead, not at every step.

Under ``vmap`` an auto-reset is a ``select``: the env's reset is computed at *every* step of
every env and thrown away wherever the episode goes on. Where a reset is expensive (MJX and
brax compute the physics' forward kinematics; Jumanji, Navix and XLand-MiniGrid generate a
level) that is a large share of the step. `PreparedStarts` keeps, for each env, the start of
its next episode (``start_obs``, ``start_state``), drawn with a fresh key; a step that ends an
episode continues from it and marks it ``used``. `refresh_starts`, called once per step on the
whole batch of ``N`` envs (by ``jaxrl.parts.rollout.env_step``), draws new starts for ``K = ceil(N /
period)`` envs, those whose start was used first (in random order): the reset is computed ``K`` times per step
instead of ``N``.

Every episode still starts from a state drawn fresh for it, unless an env ends two episodes
before its start is drawn again (more than ``K`` episode ends per step on average over the
batch): then the second episode starts where the first did. ``info["env_reused_start"]``
marks such steps, so a run reports how many (``env_reused_starts``). ``period=1`` draws every
used start again at the next step, so a start is never reused.

Under `envs.core.first_episode_only` (evaluation) no next start is drawn and an ended episode is
kept (`envs.core.without_reset`): the program computes the reset once, for the first episode.
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
from flax import struct

from envs.core import auto_reset, resets_on_step, without_reset, wrapped_instance
from envs.wrappers import Wrapper

#: The default period: each step draws starts for an eighth of the envs.
DEFAULT_PERIOD = 8


@struct.dataclass
class PreparedStart:
    """One env's state (leaves ``[...]``, ``[N, ...]`` in a batch) with its next start.

    state: the running episode's state (the inner env's); start_obs, start_state: where the
    next episode begins; used: ``[]`` bool, the start has begun an episode since it was drawn.
    """

    state: Any
    start_obs: Any
    start_state: Any
    used: jax.Array


class PreparedStarts(Wrapper):
    """Auto-reset from a prepared start; see the module docstring. The inner env is an
    `envs.core.Environment` with ``reset_env`` / ``step_env`` (no auto-reset of its own)."""

    def __init__(self, env, period: int = DEFAULT_PERIOD):
        if not (isinstance(period, int) and period >= 1):
            raise ValueError(f"prepared_starts must be a whole number of steps >= 1, got "
                             f"{period!r}")
        super().__init__(env)
        self.period = period

    def options(self) -> tuple:
        return (self.period,)

    def per_step(self, num_envs: int) -> int:
        """How many of ``num_envs`` envs get a new start drawn at each step."""
        return max(1, math.ceil(num_envs / self.period))

    def inner_state(self, state: PreparedStart):
        return state.state

    def draw(self, key: jax.Array, params: Any) -> tuple[Any, Any]:
        """A fresh start ``(obs, state)``."""
        params = self.default_params if params is None else params
        with jax.named_scope("env_reset"):
            return self.env.reset_env(key, params)

    def reset(self, key, params=None):
        """The inner env's reset from ``key`` (the same first episode), and a start drawn
        for the next."""
        obs, state = self.draw(key, params)
        if not resets_on_step():  # no next episode: the first start stands in, never read
            return obs, PreparedStart(state, obs, state, jnp.zeros((), bool))
        start_obs, start_state = self.draw(jax.random.fold_in(key, 1), params)
        return obs, PreparedStart(state, start_obs, start_state, jnp.zeros((), bool))

    def step(self, key, state: PreparedStart, action, params=None):
        params = self.default_params if params is None else params
        with jax.named_scope("env_step"):
            obs, inner, reward, terminated, truncated, info = self.env.step_env(
                key, state.state, action, params)
        terminated = jnp.asarray(terminated, dtype=bool)
        truncated = jnp.asarray(truncated, dtype=bool)
        done = terminated | truncated
        if resets_on_step():
            obs, inner, reward, terminated, truncated, info = auto_reset(
                obs, inner, state.start_obs, state.start_state, reward, terminated, truncated,
                info)
        else:
            obs, inner, reward, terminated, truncated, info = without_reset(
                obs, inner, reward, terminated, truncated, info)
        info = {**info, "env_reused_start": done & state.used}
        return obs, state.replace(state=inner, used=state.used | done), reward, terminated, \
            truncated, info


def prepared_starts(env) -> PreparedStarts | None:
    """The `PreparedStarts` wrapper inside ``env`` (through ``.env``), or None."""
    return wrapped_instance(env, PreparedStarts)


def refresh_starts(key: jax.Array, env, params: Any, env_states: Any) -> Any:
    """Draw new starts for ``K`` of the ``N`` envs of ``env_states`` (a batch, leaves
    ``[N, ...]``, of ``env``'s states): the used ones first, in random order among them (no
    env waits on another's index). An env whose start was not used keeps it. ``env_states`` unchanged where ``env`` has no prepared
    starts."""
    wrapper = prepared_starts(env)
    if wrapper is None:
        return env_states

    def refresh(node):
        if not isinstance(node, PreparedStart):
            return node
        num_envs = node.used.shape[0]
        order_key, draw_key = jax.random.split(key)
        priority = node.used + 0.5 * jax.random.uniform(order_key, (num_envs,))
        _, idx = jax.lax.top_k(priority, wrapper.per_step(num_envs))
        obs, state = jax.vmap(wrapper.draw, in_axes=(0, None))(
            jax.random.split(draw_key, idx.shape[0]), params)
        renew = node.used[idx]

        def put(old, new):
            keep = renew.reshape(renew.shape + (1,) * (new.ndim - 1))
            return old.at[idx].set(jnp.where(keep, new, old[idx]))

        return node.replace(start_obs=jax.tree.map(put, node.start_obs, obs),
                            start_state=jax.tree.map(put, node.start_state, state),
                            used=node.used.at[idx].set(False))

    return jax.tree.map(refresh, env_states, is_leaf=lambda n: isinstance(n, PreparedStart))

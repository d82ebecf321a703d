"""Action scaling: actions of a `Box` space live in ``[-1, 1]`` inside the agent;
`to_env_action` rescales to the env's bounds (after clipping), so every algorithm sees the same
normalized action range, and `from_env_action` brings an env action (a demonstration's) back.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from envs.spaces import Box, Discrete, Space


def to_env_action(action_space: Space, action: jax.Array) -> jax.Array:
    """Map an agent action to the env: discrete as is; box from ``[-1, 1]`` (clipped) to bounds."""
    if isinstance(action_space, Discrete):
        return action.astype(action_space.dtype)
    if not isinstance(action_space, Box):
        raise TypeError(f"unsupported action space {action_space!r}")
    a = jnp.clip(action, -1.0, 1.0)
    if not action_space.bounded:
        return a
    low, high = jnp.asarray(action_space.low), jnp.asarray(action_space.high)
    return low + (a + 1.0) * 0.5 * (high - low)


def from_env_action(action_space: Space, action: jax.Array) -> jax.Array:
    """The agent action of an env action (`to_env_action`'s inverse on the env's bounds):
    discrete as int32; box bounds mapped to ``[-1, 1]`` (unbounded boxes as is)."""
    if isinstance(action_space, Discrete):
        return jnp.asarray(action).astype(jnp.int32)
    if not isinstance(action_space, Box):
        raise TypeError(f"unsupported action space {action_space!r}")
    a = jnp.asarray(action, jnp.float32)
    if not action_space.bounded:
        return a
    low, high = jnp.asarray(action_space.low), jnp.asarray(action_space.high)
    return jnp.clip(2.0 * (a - low) / (high - low) - 1.0, -1.0, 1.0)

"""Observation and action spaces: enough description for networks to attach the right heads.

A space is a small frozen description (not a pytree of arrays): `Discrete(n)` for integer
actions in ``[0, n)``, `Box(low, high, shape)` for real vectors. Networks read ``shape`` /
``n`` / ``low`` / ``high`` to build their input and output layers.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
from jax.typing import DTypeLike


@dataclasses.dataclass(frozen=True)
class Discrete:
    """Integers ``0 .. n-1`` (a scalar per step). ``mask_size = n``: the last ``n`` entries of
    the env's flat observation say which actions are allowed now (1) and which not (0), as
    Jumanji's tasks give them (`envs.jumanji`); 0: every action is always allowed."""

    n: int
    dtype: DTypeLike = jnp.int32
    mask_size: int = 0

    def __post_init__(self):
        if self.mask_size not in (0, self.n):
            raise ValueError(f"an action mask has one entry per action ({self.n}), got "
                             f"mask_size={self.mask_size}")

    def allowed(self, obs: jax.Array) -> jax.Array | None:
        """``[..., n]`` bool: the actions the mask at the end of flat observations ``obs [...,
        obs_dim]`` allows; every action where it allows none (a final observation: nothing is
        left to choose, and a value read there is never bootstrapped from); None without a
        mask."""
        if not self.mask_size:
            return None
        allowed = obs[..., -self.mask_size:] > 0.5
        return allowed | ~jnp.any(allowed, axis=-1, keepdims=True)

    @property
    def shape(self) -> tuple[int, ...]:
        return ()

    def sample(self, key: jax.Array) -> jax.Array:
        """Uniform random element, shape ``[]``."""
        return jax.random.randint(key, (), 0, self.n, dtype=self.dtype)

    def contains(self, x) -> bool:
        x = np.asarray(x)
        return x.shape == () and 0 <= int(x) < self.n


@dataclasses.dataclass(frozen=True)
class Box:
    """Real vectors in ``[low, high]`` with a fixed ``shape``. Bounds may be infinite."""

    low: object
    high: object
    shape: tuple[int, ...]
    dtype: DTypeLike = jnp.float32

    def __post_init__(self):
        object.__setattr__(self, "shape", tuple(int(s) for s in self.shape))
        low = np.broadcast_to(np.asarray(self.low, dtype=np.float32), self.shape)
        high = np.broadcast_to(np.asarray(self.high, dtype=np.float32), self.shape)
        if np.any(low > high):
            raise ValueError(f"Box low must be <= high, got low={low}, high={high}")
        object.__setattr__(self, "low", low)
        object.__setattr__(self, "high", high)

    def __hash__(self):
        return hash((self.shape, self.low.tobytes(), self.high.tobytes()))

    def __eq__(self, other):
        return (
            isinstance(other, Box)
            and self.shape == other.shape
            and np.array_equal(self.low, other.low)
            and np.array_equal(self.high, other.high)
        )

    @property
    def bounded(self) -> bool:
        return bool(np.all(np.isfinite(self.low)) and np.all(np.isfinite(self.high)))

    def sample(self, key: jax.Array) -> jax.Array:
        """Uniform sample in the box (standard normal on unbounded axes), shape ``self.shape``."""
        low = jnp.asarray(np.where(np.isfinite(self.low), self.low, -1.0))
        high = jnp.asarray(np.where(np.isfinite(self.high), self.high, 1.0))
        return jax.random.uniform(key, self.shape, minval=low, maxval=high).astype(self.dtype)

    def contains(self, x) -> bool:
        x = np.asarray(x)
        return x.shape == self.shape and bool(np.all(x >= self.low) and np.all(x <= self.high))


Space = Discrete | Box

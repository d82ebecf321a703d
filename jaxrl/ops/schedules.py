"""Linear schedules of a hyperparameter over env steps (learning-rate annealing, epsilon decay,
the importance-weight exponent of prioritized replay)."""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

__all__ = ["linear_schedule"]


def linear_schedule(start: float | jax.Array, end: float | jax.Array, step: ArrayLike,
                    horizon: ArrayLike) -> jax.Array:
    """``start`` at step 0, moving linearly to ``end`` at ``step = horizon`` and staying there:
    ``start + clip(step / max(horizon, 1), 0, 1) * (end - start)``.

    Args:
        start, end: scalars ``[]`` (Python floats or traced float32).
        step: ``[]`` the current step (e.g. env steps per seed, int32); an array of steps
            gives the schedule at each, elementwise.
        horizon: ``[]`` steps to reach ``end``; below 1 counts as 1 (``end`` from the first
            step on).

    Returns:
        float32 of ``step``'s shape (``[]`` for one step). ``linear_schedule(1.0, 0.0, step, horizon)`` is the factor
        ``1 - step / horizon`` (clipped to ``[0, 1]``) that anneals a learning rate to 0.
    """
    chex.assert_rank([start, end, horizon], 0)
    progress = jnp.clip(step / jnp.maximum(horizon, 1.0), 0.0, 1.0)
    value = start + progress * (end - start)
    chex.assert_shape(value, jnp.shape(step))
    return value

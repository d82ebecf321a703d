"""Polyak (exponential moving) averaging of parameter pytrees."""

from __future__ import annotations

from typing import TypeVar

import chex
import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

__all__ = ["polyak_update"]

PyTree = TypeVar("PyTree")


def polyak_update(target_params: PyTree, online_params: PyTree, tau: ArrayLike) -> PyTree:
    """``tau * online + (1 - tau) * target``, leaf by leaf.

    Args:
        target_params: pytree of arrays (the slowly moving copy).
        online_params: pytree with the same structure and leaf shapes.
        tau: scalar in ``[0, 1]`` (Python float or traced); ``tau = 1`` copies ``online``,
            ``tau = 0`` keeps ``target``.

    Returns:
        The new target pytree; every leaf keeps the dtype of the corresponding target leaf.
    """
    chex.assert_trees_all_equal_shapes(target_params, online_params)
    chex.assert_rank(tau, 0)

    def mix(target: jax.Array, online: jax.Array) -> jax.Array:
        target = jnp.asarray(target)
        tau_ = jnp.asarray(tau, dtype=target.dtype)
        return (tau_ * online + (1 - tau_) * target).astype(target.dtype)

    new_target = jax.tree.map(mix, target_params, online_params)
    chex.assert_trees_all_equal_shapes_and_dtypes(new_target, target_params)
    return new_target

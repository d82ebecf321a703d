"""Per-step metrics of a ``lax.scan`` summed in its carry, not stacked as its outputs.

Stacked as a scan's outputs and averaged after the loop, every metric costs an in-place update
of its stack at every step. On a GPU each is a kernel of its own, and a dynamic update the
compiler keeps apart from its neighbours also splits the loop body's command buffer (CUDA
graph) in two. Summed in the loop's carry as one float32 vector, the metrics cost one add a
step (experiments/gpu_hlo.py, benchmarks/gpu-hlo-cpu/NOTES.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
from jax.flatten_util import ravel_pytree


def as_float32(metrics: Any) -> Any:
    """Every leaf of ``metrics`` as float32 (the type their sums are kept in)."""
    return jax.tree.map(lambda m: jnp.asarray(m, jnp.float32), metrics)


def zero_metrics(metrics_of: Callable[[], Any]) -> tuple[jax.Array, Callable]:
    """The flat float32 zeros ``[K]`` of the metrics ``metrics_of()`` returns, and the function
    that turns such a vector back into their pytree (float32 leaves). ``metrics_of`` is traced
    for its output's shapes alone; it closes over what it reads (a key passed as an argument
    would count as used once more under JAX's key-reuse checker)."""
    shapes = jax.eval_shape(metrics_of)
    zeros = jax.tree.map(lambda s: jnp.zeros(s.shape, jnp.float32), shapes)
    flat, unravel = ravel_pytree(zeros)
    return flat, unravel


def sum_scan(step: Callable, carry: Any, xs: Any, sums: jax.Array) -> tuple[Any, jax.Array]:
    """``lax.scan(step, carry, xs)`` for ``step(carry, x) -> (carry, metrics)``, returning
    ``(carry, sums + the metrics summed over the steps)``, raveled as `zero_metrics`'s zeros
    ``[K]`` are, in place of the stacked metrics."""

    def summed(state, x):
        carry, sums = state
        carry, metrics = step(carry, x)
        return (carry, sums + ravel_pytree(as_float32(metrics))[0]), None

    (carry, sums), _ = jax.lax.scan(summed, (carry, sums), xs)
    return carry, sums

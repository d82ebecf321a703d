"""Orthogonal weight initialization without LAPACK.

`jax.nn.initializers.orthogonal` takes a QR factorization, which on the CPU backend is a LAPACK
custom call. Batched (``vmap`` over seeds) that call splits the batch over XLA's intra-op
thread pool *from a thread of that same pool* and waits; when every pool thread is inside
such a call at once (two cores, two independent layers), none is left to do the work and the
program never returns (jaxlib 0.10.2: ``lapack_sgeqrf_ffi`` -> ``ParallelBatchMap`` ->
``BlockingCounter::Wait`` on a ``tf_XLAEigen`` thread). Gram-Schmidt in plain XLA ops has no
custom call, so it cannot deadlock, and it gives the same distribution: for a Gaussian matrix
``A = QR`` with ``diag(R) > 0``, ``Q`` is Haar-distributed, and Gram-Schmidt computes exactly
that ``Q``.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp


def orthonormal_columns(a: jax.Array) -> jax.Array:
    """``[n, m] -> [n, m]`` (``n >= m``): the ``Q`` of ``a = QR`` with ``diag(R) > 0``, by
    modified Gram-Schmidt with one re-orthogonalization pass ("twice is enough")."""
    _, m = a.shape
    index = jnp.arange(m)

    def column(j, q):
        v = a[:, j]
        for _ in range(2):
            earlier = (index < j).astype(a.dtype)  # only the columns already done
            v = v - q @ (earlier * (q.T @ v))
        return q.at[:, j].set(v / jnp.linalg.norm(v))

    return jax.lax.fori_loop(0, m, column, jnp.zeros_like(a))


def orthogonal(scale: float = 1.0, dtype=jnp.float32):
    """A flax-style initializer ``init(key, shape, dtype) -> [*shape]``: the kernel viewed as a
    ``[prod(shape[:-1]), shape[-1]]`` matrix has orthonormal rows or columns (whichever are
    fewer), times ``scale``."""

    def init(key, shape, dtype=dtype):
        rows, cols = math.prod(shape[:-1]), shape[-1]
        a = jax.random.normal(key, (max(rows, cols), min(rows, cols)), jnp.float32)
        q = orthonormal_columns(a)
        q = q if rows >= cols else q.T
        return (scale * q).reshape(shape).astype(dtype)

    return init

"""Conjugate gradient for ``A x = b`` with ``A`` symmetric positive definite, given only as a
matrix-vector product (TRPO's natural gradient: ``A`` is the damped Fisher, never formed)."""

from __future__ import annotations

from collections.abc import Callable

import chex
import jax
import jax.numpy as jnp


def conjugate_gradient(matvec: Callable[[jax.Array], jax.Array], b: jax.Array, iters: int,
                       tol: float = 1e-10) -> tuple[jax.Array, jax.Array]:
    """Approximately solve ``A x = b`` for ``x [n]`` in at most ``iters`` iterations.

    ``matvec(v [n]) -> A v [n]``. Iteration stops (the state is frozen) once the squared residual
    ``|b - A x|^2`` drops below ``tol``, so the fixed trip count stays jit/vmap friendly.
    Returns ``(x [n], residual norm [])`` with the residual as tracked by the recursion.
    """
    chex.assert_rank(b, 1)

    def body(_, carry):
        x, r, p, rr = carry
        ap = matvec(p)
        chex.assert_equal_shape([ap, p])
        alpha = rr / jnp.maximum(jnp.dot(p, ap), 1e-30)
        x_new = x + alpha * p
        r_new = r - alpha * ap
        rr_new = jnp.dot(r_new, r_new)
        p_new = r_new + (rr_new / jnp.maximum(rr, 1e-30)) * p
        done = rr < tol
        keep = lambda old, new: jnp.where(done, old, new)
        return keep(x, x_new), keep(r, r_new), keep(p, p_new), keep(rr, rr_new)

    x0 = jnp.zeros_like(b)
    x, _, _, rr = jax.lax.fori_loop(0, iters, body, (x0, b, b, jnp.dot(b, b)))
    chex.assert_equal_shape([x, b])
    chex.assert_rank(rr, 0)
    return x, jnp.sqrt(rr)

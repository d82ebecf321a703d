"""Batched linear algebra lowers to XLA's own ops on the CPU, no LAPACK custom call
(`jaxrl.ops.cpu_linalg`: those can deadlock XLA's intra-op pool), and computes what LAPACK
does."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import scipy.linalg

from jaxrl.engine import programs  # noqa: F401  (importing the engine installs the lowerings)


def _batched_solves(a: jax.Array, b: jax.Array) -> tuple[jax.Array, jax.Array]:
    """``[n, k, k], [n, k] -> ([n, k] by Cholesky, [n, k] by LU)``."""
    cho = jax.vmap(lambda m, v: jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor(m), v))
    return cho(a, b), jax.vmap(jnp.linalg.solve)(a, b)


def _spd(n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    m = rng.normal(size=(n, k, k)).astype(np.float32)
    return m @ m.transpose(0, 2, 1) + k * np.eye(k, dtype=np.float32), rng.normal(
        size=(n, k)).astype(np.float32)


def test_a_cpu_program_holds_no_lapack_call():
    a, b = _spd(8, 5)
    text = jax.jit(_batched_solves).lower(a, b).as_text()
    assert not re.findall(r"custom_call @lapack_\w+", text)


def test_the_solutions_are_lapacks_to_float_rounding():
    a, b = _spd(64, 9)
    by_cholesky, by_lu = jax.jit(_batched_solves)(a, b)
    want = np.stack([scipy.linalg.solve(m.astype(np.float64), v) for m, v in zip(a, b)])
    np.testing.assert_allclose(np.asarray(by_cholesky), want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np.asarray(by_lu), want, rtol=1e-4, atol=1e-5)


def test_a_matrix_that_is_not_positive_definite_factors_to_nan():
    bad = np.array([[[1.0, 2.0], [2.0, 1.0]], [[4.0, 0.0], [0.0, 1.0]]], np.float32)
    factor = np.asarray(jax.jit(jax.vmap(jnp.linalg.cholesky))(bad))
    assert np.isnan(factor[0][np.tril_indices(2)]).all()  # LAPACK's lowering: all NaN
    np.testing.assert_allclose(factor[1], [[2.0, 0.0], [0.0, 1.0]])

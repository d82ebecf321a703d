"""Conjugate gradient (jaxrl/ops/cg.py) against an explicit solve: convergence on an SPD system, a
zero right-hand side, and the frozen state after early convergence."""

import jax.numpy as jnp
import numpy as np

from jaxrl.ops import conjugate_gradient


def test_conjugate_gradient_solves_spd_system():
    rng = np.random.default_rng(0)
    m = rng.normal(size=(12, 12))
    a = m @ m.T + 12 * np.eye(12)  # SPD, well conditioned
    b = rng.normal(size=12)
    x, residual = conjugate_gradient(lambda v: jnp.asarray(a, jnp.float32) @ v,
                                     jnp.asarray(b, jnp.float32), iters=12)
    np.testing.assert_allclose(np.asarray(x), np.linalg.solve(a, b), rtol=1e-3, atol=1e-4)
    assert float(residual) < 1e-3


def test_conjugate_gradient_zero_rhs_and_early_stop():
    x, residual = conjugate_gradient(lambda v: 2.0 * v, jnp.zeros(5), iters=10)
    assert np.all(np.asarray(x) == 0) and float(residual) == 0
    # A multiple of the identity is solved in one iteration, after which the state is frozen.
    x, residual = conjugate_gradient(lambda v: 4.0 * v, jnp.arange(1.0, 6.0), iters=10)
    np.testing.assert_allclose(np.asarray(x), np.arange(1.0, 6.0) / 4.0, rtol=1e-6)
    assert np.isfinite(float(residual))

"""`linear_schedule`, the one linear schedule behind LR annealing, epsilon decay and PER beta."""

import jax.numpy as jnp
import numpy as np

from jaxrl.ops import linear_schedule


def test_endpoints_midpoint_and_after_the_horizon():
    values = [float(linear_schedule(1.0, 0.05, jnp.int32(s), jnp.float32(100.0)))
              for s in (0, 50, 100, 1000)]
    np.testing.assert_allclose(values, [1.0, 0.525, 0.05, 0.05], rtol=1e-6)


def test_a_horizon_below_one_ends_at_the_first_step():
    assert float(linear_schedule(0.4, 1.0, jnp.int32(0), jnp.float32(0.0))) == np.float32(0.4)
    assert float(linear_schedule(0.4, 1.0, jnp.int32(1), jnp.float32(0.0))) == np.float32(1.0)


def test_annealing_factor_is_bitwise_the_clipped_one_minus_progress():
    steps = jnp.arange(0, 3000, 7, dtype=jnp.int32)
    horizon = jnp.float32(2048.0)
    factor = linear_schedule(1.0, 0.0, steps, horizon)
    reference = jnp.clip(1.0 - steps / jnp.maximum(horizon, 1.0), 0.0, 1.0)
    assert factor.dtype == jnp.float32 and factor.shape == steps.shape
    np.testing.assert_array_equal(np.asarray(factor), np.asarray(reference))

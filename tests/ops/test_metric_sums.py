"""`jaxrl.ops.metric_sums`: a scan's metrics summed in its carry equal the stacked sums."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxrl.ops.metric_sums import sum_scan, zero_metrics


def _step(carry, x):
    """A carry that counts, and metrics of three shapes and two dtypes."""
    metrics = {"loss": (x ** 2).sum() + carry, "hist": x[:2] * carry,
               "count": jnp.int32(3) * carry.astype(jnp.int32)}
    return carry + 1.0, metrics


def test_sums_continue_from_the_given_vector_and_unravel_to_the_metrics_tree():
    xs = jax.random.normal(jax.random.key(0), (5, 4))
    zeros, unravel = zero_metrics(lambda: _step(jnp.float32(1.0), xs[0])[1])
    assert zeros.shape == (4,) and zeros.dtype == jnp.float32  # loss 1 + hist 2 + count 1
    carry, sums = jax.jit(lambda c, s: sum_scan(_step, c, xs, s))(jnp.float32(1.0), zeros)
    assert float(carry) == 6.0  # five chained steps
    _, stacked = jax.lax.scan(_step, jnp.float32(1.0), xs)
    want = jax.tree.map(lambda v: v.astype(jnp.float32).sum(0), stacked)
    got = unravel(sums)
    assert jax.tree.structure(got) == jax.tree.structure(want)
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        assert g.dtype == jnp.float32 and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-6)
    # a second pass adds onto the first's sums (the epochs of `minibatch_sgd`)
    _, twice = sum_scan(_step, jnp.float32(1.0), xs, sums)
    np.testing.assert_allclose(twice, 2 * sums, rtol=1e-6)

"""PopArt's statistics and its output-preserving rescale: the value a head produces is the same
before and after a statistics update, for every input; the statistics track the targets."""

import jax
import jax.numpy as jnp
import numpy as np

from jaxrl.ops import popart


def test_outputs_are_preserved_under_a_statistics_update():
    rng = np.random.default_rng(0)
    features = rng.normal(size=(256, 16)).astype(np.float32)
    kernel = rng.normal(size=(16, 1)).astype(np.float32)
    bias = rng.normal(size=(1,)).astype(np.float32)
    stats = popart.init()
    for step in range(5):  # targets on a scale of 1,000 that drifts
        targets = (1000.0 * (1 + step) + 300.0 * rng.normal(size=(64,))).astype(np.float32)
        before = popart.denormalize(stats, features @ kernel + bias)
        new = popart.update(stats, targets, 0.3)
        kernel, bias = popart.preserve(kernel, bias, stats, new)
        after = popart.denormalize(new, features @ kernel + bias)
        np.testing.assert_allclose(after, before, rtol=1e-5, atol=1e-3)
        assert not np.isclose(float(popart.scale(new)), float(popart.scale(stats)))
        stats = new


def test_statistics_track_the_targets():
    targets = jnp.asarray(np.random.default_rng(1).normal(50.0, 7.0, size=(20_000,)),
                          jnp.float32)
    stats = popart.init()
    step = jax.jit(popart.update)
    for chunk in targets.reshape(100, 200):
        stats = step(stats, chunk, 0.1)
    assert abs(float(stats.mean) - 50.0) < 1.0
    assert abs(float(popart.scale(stats)) - 7.0) < 0.7
    x = jnp.array([43.0, 50.0, 57.0])
    np.testing.assert_allclose(popart.denormalize(stats, popart.normalize(stats, x)), x,
                               rtol=1e-6)


def test_a_constant_target_does_not_divide_by_zero():
    stats = popart.update(popart.init(), jnp.full((8,), 5.0), 1.0)
    assert float(popart.scale(stats)) > 0 and np.isfinite(float(popart.normalize(stats, 5.0)))

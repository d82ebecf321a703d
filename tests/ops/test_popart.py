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


def test_the_statistics_equal_the_moving_moments_of_the_paper():
    """The variance form is the paper's EMA of the first and second moments, rewritten: in
    float64 arithmetic on the same batches, mu and nu - mu^2 agree."""
    rng = np.random.default_rng(2)
    stats, mu, nu = popart.init(), 0.0, 1.0
    for step in range(50):
        x = rng.normal(10.0 * step, 3.0 + step, size=(64,))
        beta = 0.2
        stats = popart.update(stats, jnp.asarray(x, jnp.float32), beta)
        mu, nu = (1 - beta) * mu + beta * x.mean(), (1 - beta) * nu + beta * np.mean(x**2)
        np.testing.assert_allclose(float(stats.mean), mu, rtol=1e-5)
        np.testing.assert_allclose(float(stats.variance), nu - mu**2, rtol=1e-4)


def test_a_small_spread_on_large_targets_keeps_its_scale():
    """Targets of 100 +- 0.03 (a solved CartPole at gamma 0.99, bootstrapped through its time
    limit): the second-moment form cancelled in float32 and put sigma at its floor, 1e-4."""
    rng = np.random.default_rng(0)
    stats, step = popart.init(), jax.jit(popart.update)
    for _ in range(1000):
        stats = step(stats, jnp.asarray(100.0 + 0.03 * rng.normal(size=(512,)), jnp.float32),
                     0.03)
    assert abs(float(popart.scale(stats)) - 0.03) < 0.003

"""Running mean/variance (parallel update) and Polyak averaging."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxrl.ops import (
    RunningMeanStd,
    denormalize,
    normalize,
    polyak_update,
    running_stats_init,
    running_stats_update,
)

jit_update = jax.jit(running_stats_update)


def feed(stats, data, sizes):
    start = 0
    for size in sizes:
        stats = jit_update(stats, data[start : start + size])
        start += size
    assert start == len(data)
    return stats


def test_init_is_empty_and_normalize_is_identity():
    stats = running_stats_init((3,))
    assert isinstance(stats, RunningMeanStd)
    assert stats.mean.shape == stats.var.shape == (3,) and stats.count.shape == ()
    assert stats.count == 0.0 and stats.mean.dtype == stats.count.dtype == jnp.float32
    x = np.array([[1.0, -2.0, 3.0]], np.float32)
    np.testing.assert_allclose(normalize(stats, x), x, rtol=1e-6)
    assert running_stats_init(4).mean.shape == (4,)
    assert running_stats_init(()).mean.shape == ()


def test_single_batch_gives_its_population_statistics():
    data = np.random.default_rng(0).normal(3.0, 2.0, size=(50, 2)).astype(np.float32)
    stats = running_stats_update(running_stats_init((2,)), data)
    np.testing.assert_allclose(stats.mean, data.astype(np.float64).mean(0), rtol=1e-5)
    np.testing.assert_allclose(stats.var, data.astype(np.float64).var(0), rtol=1e-5)
    assert float(stats.count) == 50.0


@pytest.mark.parametrize("shape", [(), (3,), (2, 2)])
def test_chunked_updates_match_numpy_over_all_data(shape):
    rng = np.random.default_rng(1)
    sizes = [1, 7, 1, 64, 7, 1, 200, 1, 64]
    scale = rng.uniform(0.1, 5.0, size=shape)
    data = (rng.normal(size=(sum(sizes), *shape)) * scale + 2.0).astype(np.float32)
    stats = feed(running_stats_init(shape), data, sizes)
    expected = data.astype(np.float64)
    np.testing.assert_allclose(stats.mean, expected.mean(0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(stats.var, expected.var(0), rtol=1e-5)
    assert float(stats.count) == sum(sizes)


def test_first_update_of_size_one_is_safe():
    stats = running_stats_update(running_stats_init(()), np.array([5.0], np.float32))
    assert float(stats.mean) == 5.0 and float(stats.var) == 0.0
    assert np.isfinite(normalize(stats, 6.0, clip=10.0))


def test_large_offset_stays_accurate():
    rng = np.random.default_rng(2)
    data = (1e6 + rng.normal(size=(5000, 2))).astype(np.float32)
    stats = feed(running_stats_init((2,)), data, [100] * 50)
    expected = data.astype(np.float64)
    mean = np.asarray(stats.mean, np.float64)
    # float32 spacing at 1e6 is 0.0625: the mean is right to a few of those (rel. 2.5e-7) ...
    np.testing.assert_allclose(mean, expected.mean(0), rtol=0, atol=0.25)
    # ... and the variance is the second moment about that stored mean (what normalize uses),
    # accurate to 0.5%; a naive E[x^2] - E[x]^2 in float32 would be off by orders of magnitude.
    np.testing.assert_allclose(stats.var, ((expected - mean) ** 2).mean(0), rtol=5e-3)
    np.testing.assert_allclose(stats.var, expected.var(0), rtol=5e-2)
    z = normalize(stats, data)
    np.testing.assert_allclose(np.mean(np.square(z), 0), 1.0, rtol=5e-3)


def test_normalize_clip_and_denormalize_roundtrip():
    rng = np.random.default_rng(3)
    data = rng.normal(5.0, 3.0, size=(1000, 4)).astype(np.float32)
    stats = running_stats_update(running_stats_init((4,)), data)
    z = normalize(stats, data)
    np.testing.assert_allclose(np.mean(z, 0), 0.0, atol=1e-4)
    np.testing.assert_allclose(np.std(z, 0), 1.0, rtol=1e-4)
    np.testing.assert_allclose(denormalize(stats, z), data, rtol=1e-5, atol=1e-4)
    clipped = normalize(stats, data, clip=1.0)
    assert float(jnp.max(jnp.abs(clipped))) <= 1.0
    np.testing.assert_allclose(jnp.clip(z, -1.0, 1.0), clipped, rtol=1e-6)
    # Scale-only mode (reward scaling).
    scaled = normalize(stats, data, center=False)
    np.testing.assert_allclose(scaled, data / np.sqrt(np.asarray(stats.var) + 1e-8), rtol=1e-5)
    np.testing.assert_allclose(denormalize(stats, scaled, center=False), data, rtol=1e-5)


def test_stats_are_a_pytree_usable_in_scan_and_vmap():
    rng = np.random.default_rng(4)
    data = rng.normal(size=(3, 10, 8, 2)).astype(np.float32)  # [seeds, chunks, N, 2]

    def run(chunks):
        stats, _ = jax.lax.scan(
            lambda s, c: (running_stats_update(s, c), None), running_stats_init((2,)), chunks
        )
        return stats

    stats = jax.jit(jax.vmap(run))(data)
    assert stats.mean.shape == (3, 2)
    flat = data.reshape(3, 80, 2).astype(np.float64)
    np.testing.assert_allclose(stats.mean, flat.mean(1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(stats.var, flat.var(1), rtol=1e-5)


def test_update_rejects_wrong_shape():
    with pytest.raises(ValueError):
        running_stats_update(running_stats_init((3,)), np.zeros((4, 2), np.float32))


# --------------------------------------------------------------------------------------------
# Polyak averaging.
# --------------------------------------------------------------------------------------------


def test_polyak_update_over_pytrees():
    target = {"w": jnp.ones((2, 3)), "b": [jnp.zeros(3), jnp.full((), 4.0)]}
    online = {"w": jnp.full((2, 3), 3.0), "b": [jnp.ones(3), jnp.full((), 0.0)]}
    new = polyak_update(target, online, 0.25)
    np.testing.assert_allclose(new["w"], 0.25 * 3.0 + 0.75 * 1.0)
    np.testing.assert_allclose(new["b"][0], 0.25)
    np.testing.assert_allclose(new["b"][1], 3.0)
    assert jax.tree.structure(new) == jax.tree.structure(target)
    # tau = 1 copies the online params, tau = 0 keeps the target.
    jax.tree.map(np.testing.assert_allclose, polyak_update(target, online, 1.0), online)
    jax.tree.map(np.testing.assert_allclose, polyak_update(target, online, 0.0), target)


def test_polyak_tau_is_traced_and_vmappable():
    target = {"w": jnp.zeros(3)}
    online = {"w": jnp.ones(3)}
    taus = jnp.array([0.0, 0.005, 0.5, 1.0])
    new = jax.jit(jax.vmap(polyak_update, in_axes=(None, None, 0)))(target, online, taus)
    np.testing.assert_allclose(new["w"], np.broadcast_to(taus[:, None], (4, 3)), rtol=1e-6)
    assert new["w"].dtype == jnp.float32

"""ACER's trust-region step: the closed form solves its quadratic program, leaves a gradient
inside the region alone, and the categorical KL gradient is the autodiff one."""

import jax
import jax.numpy as jnp
import numpy as np

from jaxrl.ops.trust_region import categorical_kl_gradient, project_kl


def test_the_step_solves_the_projection():
    rng = np.random.default_rng(0)
    g = rng.normal(size=(64, 5)).astype(np.float32)
    k = rng.normal(size=(64, 5)).astype(np.float32)
    delta = 0.3
    z, scale = jax.jit(project_kl)(g, k, delta)
    z, scale = np.asarray(z), np.asarray(scale)
    dot = np.sum(k * z, axis=-1)
    binding = np.sum(k * g, axis=-1) > delta
    assert binding.any() and (~binding).any()
    np.testing.assert_allclose(z[~binding], g[~binding])  # inside the region: unchanged
    assert (scale[~binding] == 0).all() and (scale[binding] > 0).all()
    np.testing.assert_allclose(dot[binding], delta, rtol=1e-4, atol=1e-5)  # on its boundary
    # the closest feasible point: no random feasible point is nearer to g
    for i in np.flatnonzero(binding)[:8]:
        trial = g[i] + rng.normal(size=(2000, 5)).astype(np.float32) * 2
        feasible = trial[trial @ k[i] <= delta]
        assert np.min(np.linalg.norm(feasible - g[i], axis=1)) >= np.linalg.norm(z[i] - g[i])


def test_a_zero_kl_gradient_leaves_g():
    g = jnp.ones((3, 4))
    z, scale = project_kl(g, jnp.zeros((3, 4)), -1.0)
    np.testing.assert_array_equal(z, g)
    np.testing.assert_array_equal(scale, 0.0)


def test_categorical_kl_gradient_is_the_autodiff_gradient():
    rng = np.random.default_rng(1)
    logits = rng.normal(size=(6, 4)).astype(np.float32)
    avg = jax.nn.softmax(rng.normal(size=(6, 4)).astype(np.float32))

    def kl(logits):
        return jnp.sum(avg * (jnp.log(avg) - jax.nn.log_softmax(logits)))

    np.testing.assert_allclose(categorical_kl_gradient(logits, avg), jax.grad(kl)(logits),
                               rtol=1e-5, atol=1e-6)

"""Distributions against scipy, numerical integration and Monte-Carlo estimates."""

from __future__ import annotations

import functools
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import integrate, special, stats

from jaxrl.ops import Categorical, DiagGaussian, TanhGaussian

N_MC = 200_000


def key(seed: int = 0) -> jax.Array:
    return jax.random.key(seed)


def replicate(dist, n: int = N_MC):
    """The same distribution ``n`` times along a new leading axis (one draw each per sample)."""
    return jax.tree.map(lambda x: jnp.broadcast_to(x, (n, *jnp.shape(x))), dist)


@functools.partial(jax.jit, static_argnames="n")
def evaluate(dist, actions, other=None, k=None, n=N_MC):
    """What the tests read from ``dist``, in one compiled program (keeps the suite fast)."""
    out = {"log_prob": dist.log_prob(actions), "mode": dist.mode()}
    if not isinstance(dist, TanhGaussian):
        out["entropy"] = dist.entropy()
    if other is not None:
        out["kl"] = dist.kl(other)
    if k is not None:
        out["samples"], out["log_p"] = replicate(dist, n).sample_and_log_prob(k)
        out["log_p_again"] = replicate(dist, n).log_prob(out["samples"])
        if other is not None:
            out["log_q"] = replicate(other, n).log_prob(out["samples"])
    return out


def assert_mc_close(samples, expected, n_sigma=5.0):
    """Monte-Carlo mean of ``samples`` (axis 0) is within ``n_sigma`` standard errors."""
    samples = np.asarray(samples, np.float64)
    stderr = samples.std(0) / math.sqrt(len(samples)) + 1e-6
    np.testing.assert_array_less(np.abs(samples.mean(0) - expected), n_sigma * stderr)


# --------------------------------------------------------------------------------------------
# Categorical
# --------------------------------------------------------------------------------------------

LOGITS = np.random.default_rng(0).normal(size=(3, 5)).astype(np.float32) * 2.0
LOGITS_Q = np.random.default_rng(1).normal(size=(3, 5)).astype(np.float32)


def np_softmax(logits):
    z = np.exp(logits - logits.max(-1, keepdims=True))
    return z / z.sum(-1, keepdims=True)


def test_categorical_against_scipy_and_monte_carlo():
    p_dist, q_dist = Categorical(jnp.asarray(LOGITS)), Categorical(jnp.asarray(LOGITS_Q))
    p, q = np_softmax(LOGITS.astype(np.float64)), np_softmax(LOGITS_Q.astype(np.float64))
    actions = np.array([0, 4, 2])
    out = evaluate(p_dist, actions, q_dist, key(2))
    np.testing.assert_allclose(out["log_prob"], np.log(p[np.arange(3), actions]), rtol=1e-5)
    np.testing.assert_allclose(p_dist.probs, p, rtol=1e-5)
    np.testing.assert_allclose(out["entropy"], stats.entropy(p, axis=-1), rtol=1e-5)
    np.testing.assert_array_equal(out["mode"], LOGITS.argmax(-1))
    assert out["mode"].dtype == jnp.int32
    assert p_dist.max_entropy == pytest.approx(math.log(5))
    # Samples follow the probabilities.
    samples = np.asarray(out["samples"])
    assert samples.shape == (N_MC, 3) and samples.dtype == np.int32
    freqs = np.stack([np.bincount(samples[:, i], minlength=5) / len(samples) for i in range(3)])
    np.testing.assert_allclose(freqs, p, atol=0.01)
    np.testing.assert_allclose(out["log_p"], out["log_p_again"])
    # KL: closed form against scipy and against a Monte-Carlo estimate.
    np.testing.assert_allclose(out["kl"], stats.entropy(p, q, axis=-1), rtol=1e-4)
    assert_mc_close(out["log_p"] - out["log_q"], np.asarray(out["kl"]))
    np.testing.assert_allclose(evaluate(p_dist, actions, p_dist)["kl"], 0.0, atol=1e-6)


def test_categorical_uniform_entropy_is_max_entropy():
    uniform = Categorical(jnp.zeros(5))
    assert float(uniform.entropy()) == pytest.approx(uniform.max_entropy, rel=1e-6)


def test_categorical_masked_logits_are_safe():
    logits = jnp.array([[0.5, -jnp.inf, 1.0, -jnp.inf], [0.0, 0.0, 0.0, -jnp.inf]])
    same_support = jnp.where(jnp.isinf(logits), logits, 0.0)

    @jax.jit
    def check(lg):
        dist = Categorical(lg)
        kl_and_grad = jax.value_and_grad(lambda x: dist.kl(Categorical(x)).sum())
        entropy_and_grad = jax.value_and_grad(lambda x: Categorical(x).entropy().sum())
        return dist.entropy(), kl_and_grad(same_support), entropy_and_grad(lg)[1]

    entropy, (kl, kl_grad), entropy_grad = check(logits)
    p0 = np_softmax(np.array([0.5, 1.0]))
    np.testing.assert_allclose(entropy, [stats.entropy(p0), math.log(3)], rtol=1e-5)
    assert np.isfinite(kl) and np.all(np.isfinite(kl_grad)) and np.all(np.isfinite(entropy_grad))
    # Mass where the other distribution has none: infinite KL.
    assert np.isinf(Categorical(logits[0]).kl(Categorical(jnp.array([0.0, 0.0, -jnp.inf, 0.0]))))
    samples = np.asarray(replicate(Categorical(logits), 2000).sample(key(3)))
    assert not np.any(np.isin(samples[:, 0], [1, 3]))
    assert not np.any(samples[:, 1] == 3)


# --------------------------------------------------------------------------------------------
# DiagGaussian
# --------------------------------------------------------------------------------------------

MEAN = np.array([[0.5, -1.0], [2.0, 0.0], [0.0, 3.0]], np.float32)
LOG_STD = np.array([[0.0, -0.5], [0.3, -1.0], [-0.2, 0.4]], np.float32)
MEAN_Q = np.array([[0.0, -0.5], [1.0, 0.5], [0.3, 2.0]], np.float32)
LOG_STD_Q = np.array([[0.2, 0.0], [0.0, -0.5], [0.1, 0.3]], np.float32)


def test_diag_gaussian_against_scipy_and_monte_carlo():
    p_dist = DiagGaussian(jnp.asarray(MEAN), jnp.asarray(LOG_STD))
    q_dist = DiagGaussian(jnp.asarray(MEAN_Q), jnp.asarray(LOG_STD_Q))
    actions = np.random.default_rng(4).normal(size=MEAN.shape).astype(np.float32)
    out = evaluate(p_dist, actions, q_dist, key(5))
    expected = stats.norm.logpdf(actions, MEAN, np.exp(LOG_STD)).sum(-1)
    np.testing.assert_allclose(out["log_prob"], expected, rtol=1e-5)
    expected_entropy = stats.norm.entropy(MEAN, np.exp(LOG_STD)).sum(-1)
    np.testing.assert_allclose(out["entropy"], expected_entropy, rtol=1e-5)
    np.testing.assert_array_equal(out["mode"], MEAN)
    # Samples: mean and std; their log-probs; KL closed form against Monte Carlo.
    assert_mc_close(out["samples"], MEAN)
    np.testing.assert_allclose(np.std(np.asarray(out["samples"]), 0), np.exp(LOG_STD), rtol=1e-2)
    np.testing.assert_allclose(out["log_p"], out["log_p_again"], rtol=1e-5, atol=1e-5)
    assert_mc_close(out["log_p"] - out["log_q"], np.asarray(out["kl"]))
    np.testing.assert_allclose(evaluate(p_dist, actions, p_dist)["kl"], 0.0, atol=1e-6)


def test_diag_gaussian_state_independent_log_std_broadcasts():
    shared = DiagGaussian(jnp.asarray(MEAN), jnp.asarray(LOG_STD[0]))
    actions = np.random.default_rng(4).normal(size=MEAN.shape).astype(np.float32)
    out = evaluate(shared, actions)
    expected = stats.norm.logpdf(actions, MEAN, np.exp(LOG_STD[0])).sum(-1)
    np.testing.assert_allclose(out["log_prob"], expected, rtol=1e-5)
    assert out["entropy"].shape == (3,) and shared.sample(key()).shape == (3, 2)


def test_diag_gaussian_sample_is_reparameterized():
    grad = jax.grad(lambda m: DiagGaussian(m, jnp.zeros(2)).sample(key()).sum())(jnp.zeros(2))
    np.testing.assert_allclose(grad, 1.0)


# --------------------------------------------------------------------------------------------
# TanhGaussian
# --------------------------------------------------------------------------------------------


def tanh_density_integral(mean, log_std):
    """Integral over (-1, 1) of exp(log_prob(a)), on an a-grid that is dense near +-1."""
    dist = TanhGaussian(jnp.asarray([mean], jnp.float32), jnp.asarray([log_std], jnp.float32))
    u = np.linspace(-7.0, 7.0, 20001)
    a = np.tanh(u)
    density = np.exp(np.asarray(evaluate(replicate(dist, len(a)), a[:, None])["log_prob"]))
    return np.trapezoid(density, a)


@pytest.mark.parametrize(
    "mean, log_std", [(0.0, 0.0), (0.3, math.log(0.8)), (1.5, 0.0), (-0.5, -1.5)]
)
def test_tanh_gaussian_density_integrates_to_one(mean, log_std):
    assert tanh_density_integral(mean, log_std) == pytest.approx(1.0, abs=2e-3)


def test_tanh_gaussian_log_prob_is_change_of_variables():
    mean = np.array([0.2, -0.7, 1.0], np.float32)
    log_std = np.array([-0.3, 0.1, 0.5], np.float32)
    dist = TanhGaussian(jnp.asarray(mean), jnp.asarray(log_std))
    actions = np.array([0.3, -0.95, 0.99], np.float32)
    u = np.arctanh(actions.astype(np.float64))
    expected = (stats.norm.logpdf(u, mean, np.exp(log_std)) - np.log1p(-np.square(actions))).sum()
    out = evaluate(dist, actions)
    np.testing.assert_allclose(out["log_prob"], expected, rtol=1e-4)
    np.testing.assert_allclose(out["mode"], np.tanh(mean), rtol=1e-6)
    # Boundary actions are clipped: finite, very unlikely.
    assert np.isfinite(float(dist.log_prob(np.array([1.0, -1.0, 1.0], np.float32))))


def test_tanh_gaussian_sample_and_log_prob():
    dist = TanhGaussian(jnp.array([0.3, -1.0]), jnp.array([-0.5, 0.2]))
    out = evaluate(dist, jnp.zeros(2), k=key(7))
    actions, log_prob = np.asarray(out["samples"]), np.asarray(out["log_p"])
    assert actions.shape == (N_MC, 2) and log_prob.shape == (N_MC,)
    assert np.all(np.abs(actions) <= 1.0)
    # Same log-density as log_prob of the returned action (via atanh), away from saturation.
    ok = np.all(np.abs(actions) < 0.99, axis=-1)
    np.testing.assert_allclose(log_prob[ok], np.asarray(out["log_p_again"])[ok], atol=2e-3)
    # E[tanh(u)] by quadrature.
    for i, (m, s) in enumerate([(0.3, math.exp(-0.5)), (-1.0, math.exp(0.2))]):
        expected, _ = integrate.quad(
            lambda x, m=m, s=s: math.tanh(x) * stats.norm.pdf(x, m, s), -20, 20
        )
        assert_mc_close(actions[:, i], expected)
    np.testing.assert_array_equal(dist.sample(key(7)), dist.sample(key(7)))  # pure in the key


def test_tanh_gaussian_entropy_estimate_matches_quadrature():
    m, s = 0.4, 0.7
    dist = TanhGaussian(jnp.array([m]), jnp.array([math.log(s)]))
    # H(a) = H(u) + E[log(1 - tanh(u)^2)].
    correction, _ = integrate.quad(
        lambda x: stats.norm.pdf(x, m, s) * -2.0 * math.log(math.cosh(x)), -12, 12
    )
    expected = stats.norm.entropy(m, s) + correction
    estimates = replicate(dist).entropy_estimate(key(8))
    assert_mc_close(estimates, expected)
    with pytest.raises(NotImplementedError):
        dist.entropy()


def test_tanh_gaussian_is_stable_when_saturated():
    dist = TanhGaussian(jnp.array([12.0, -12.0]), jnp.array([-3.0, -3.0]))
    actions, log_prob = dist.sample_and_log_prob(key(9))
    np.testing.assert_allclose(np.abs(actions), 1.0)  # tanh saturates in float32
    u = np.asarray(dist.mean + jnp.exp(dist.log_std) * jax.random.normal(key(9), (2,)), np.float64)
    # log(1 - tanh(u)^2) = -2 log cosh(u), evaluated in float64.
    naive_in_64 = (
        stats.norm.logpdf(u, [12.0, -12.0], math.exp(-3.0)) + 2.0 * np.log(np.cosh(u))
    ).sum()
    assert np.isfinite(float(log_prob))
    np.testing.assert_allclose(log_prob, naive_in_64, rtol=1e-4)
    grads = jax.grad(lambda m: TanhGaussian(m, jnp.zeros(2)).sample_and_log_prob(key())[1])(
        jnp.array([12.0, -12.0])
    )
    assert np.all(np.isfinite(grads))


# --------------------------------------------------------------------------------------------
# Pytree behaviour
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "make",
    [
        lambda: Categorical(jnp.asarray(LOGITS)),
        lambda: DiagGaussian(jnp.asarray(MEAN), jnp.asarray(LOG_STD)),
        lambda: TanhGaussian(jnp.asarray(MEAN), jnp.asarray(LOG_STD)),
    ],
)
def test_distributions_are_pytrees_for_jit_and_vmap(make):
    dist = make()
    assert len(jax.tree.leaves(dist)) in (1, 2)

    @jax.jit
    def act(d, k):
        a, lp = d.sample_and_log_prob(k)
        return a, lp, d.mode()

    a, lp, mode = act(dist, key())
    assert lp.shape == (3,) and a.shape == mode.shape
    # vmap over the leading batch axis of the parameters gives the same log-probs.
    per_row = jax.vmap(lambda d, x: d.log_prob(x))(dist, a)
    np.testing.assert_allclose(per_row, dist.log_prob(a), rtol=1e-5)


def test_log_softmax_reference_is_consistent():
    # Guards the hand-written softmax used above against scipy's.
    np.testing.assert_allclose(
        np_softmax(LOGITS.astype(np.float64)),
        special.softmax(LOGITS.astype(np.float64), axis=-1),
        rtol=1e-12,
    )

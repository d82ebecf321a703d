"""The Ornstein-Uhlenbeck exploration noise (`jaxrl.ops.noise`) against its closed forms:
stationary variance 1, autocorrelation rho^k, the variance a chain started at 0 reaches
(1 - rho^(2t)), and fresh draws where an episode ended."""

import jax
import jax.numpy as jnp
import numpy as np

from jaxrl.ops import noise

CHAINS = 20_000  # independent processes: a correlation's standard error is ~1/sqrt(CHAINS)
TOL = 4.0 / np.sqrt(CHAINS)


def _run(x0, rho, steps, key):
    """``[steps + 1, CHAINS]`` the chains' path from ``x0``."""
    def step(x, k):
        x = noise.ou_step(x, k, rho)
        return x, x

    _, path = jax.lax.scan(step, x0, jax.random.split(key, steps))
    return np.concatenate([np.asarray(x0)[None], np.asarray(path)])


def test_correlation_is_the_exact_ou_transition():
    assert np.isclose(float(noise.ou_correlation(0.15, 0.01)), np.exp(-0.0015))
    assert float(noise.ou_correlation(0.0, 0.01)) == 1.0


def test_stationary_variance_and_autocorrelation_match_the_closed_form():
    rho = 0.9
    x0 = noise.ou_init(jax.random.key(0), (CHAINS,))
    path = _run(x0, rho, 40, jax.random.key(1))
    # every step keeps N(0, 1): mean 0, variance 1
    np.testing.assert_allclose(path.mean(axis=1), 0.0, atol=TOL)
    np.testing.assert_allclose(path.var(axis=1), 1.0, atol=6 * TOL)
    # corr(x_t, x_{t+k}) = rho^k, whatever t
    for t, k in ((0, 1), (0, 5), (10, 20), (5, 35)):
        corr = np.mean(path[t] * path[t + k])
        assert abs(corr - rho**k) < TOL, (t, k, corr, rho**k)


def test_a_chain_started_at_zero_reaches_the_stationary_variance_as_the_closed_form_says():
    rho = 0.95
    path = _run(jnp.zeros((CHAINS,)), rho, 30, jax.random.key(2))
    for t in (1, 5, 30):
        expected = 1.0 - rho ** (2 * t)
        assert abs(path[t].var() - expected) < 6 * TOL, (t, path[t].var(), expected)


def test_white_noise_at_rho_zero():
    path = _run(noise.ou_init(jax.random.key(3), (CHAINS,)), 0.0, 3, jax.random.key(4))
    assert abs(np.mean(path[1] * path[2])) < TOL


def test_reset_draws_afresh_where_the_episode_ended_and_keeps_the_rest():
    x = noise.ou_init(jax.random.key(5), (CHAINS, 2))
    done = jnp.arange(CHAINS) % 2 == 0
    y = np.asarray(noise.ou_reset(x, jax.random.key(6), done))
    x = np.asarray(x)
    np.testing.assert_array_equal(y[1::2], x[1::2])  # episodes still running keep their noise
    fresh = y[0::2]
    assert not np.any(fresh == x[0::2])
    # the restarted processes are stationary draws, independent of where they were
    assert abs(fresh.var() - 1.0) < 8 * TOL
    assert abs(np.mean(fresh * x[0::2])) < 2 * TOL

"""C51's categorical projection and QR-DQN's quantile Huber loss (jaxrl/ops/distributional.py),
against distributions and losses worked by hand and against the paper's floor/ceil loop."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxrl.ops import (
    categorical_projection,
    categorical_support,
    huber,
    quantile_huber_loss,
    quantile_midpoints,
)

SUPPORT = categorical_support(-2.0, 2.0, 5)  # [-2, -1, 0, 1, 2], dz = 1


def project(probs, reward, discount):
    return np.asarray(categorical_projection(jnp.asarray([probs], jnp.float32),
                                             jnp.asarray([reward], jnp.float32),
                                             jnp.asarray([discount], jnp.float32), SUPPORT))[0]


def test_support_is_evenly_spaced_from_v_min_to_v_max():
    np.testing.assert_allclose(SUPPORT, [-2.0, -1.0, 0.0, 1.0, 2.0])
    with pytest.raises(ValueError):
        categorical_support(0.0, 1.0, 1)


@pytest.mark.parametrize(("probs", "reward", "discount", "expected"), [
    # all mass at z = 0 moved to 0.5: split half and half between 0 and 1
    ([0, 0, 1, 0, 0], 0.5, 1.0, [0, 0, 0.5, 0.5, 0]),
    # every atom lands exactly on a support point (Tz = z + 1); the top one, at 3, is clipped
    # onto v_max = 2 and joins the atom that landed there
    ([0.2] * 5, 1.0, 1.0, [0, 0.2, 0.2, 0.2, 0.4]),
    # Tz = -3 + 0.5 z in [-4, -2]: everything clipped onto v_min
    ([0.1, 0.2, 0.3, 0.4, 0.0], -3.0, 0.5, [1, 0, 0, 0, 0]),
    # terminal (discount 0): the distribution collapses to the reward, 0.25 -> 3/4 on 0, 1/4 on 1
    ([0.1, 0.2, 0.3, 0.4, 0.0], 0.25, 0.0, [0, 0, 0.75, 0.25, 0]),
    # Tz = 0.5 + 0.5 z = [-0.5, 0, 0.5, 1, 1.5]: 0.1 split over -1 and 0, 0.2 onto 0, 0.3 split
    # over 0 and 1, 0.4 onto 1
    ([0.1, 0.2, 0.3, 0.4, 0.0], 0.5, 0.5, [0, 0.05, 0.4, 0.55, 0]),
])
def test_projection_of_known_distributions(probs, reward, discount, expected):
    np.testing.assert_allclose(project(probs, reward, discount), expected, atol=1e-6)


def floor_ceil_projection(probs, rewards, discounts, support):
    """The paper's Algorithm 1, a loop over atoms (l == u: the whole mass on that atom)."""
    v_min, v_max, dz = support[0], support[-1], support[1] - support[0]
    out = np.zeros_like(probs)
    for b in range(probs.shape[0]):
        for j, z in enumerate(support):
            tz = np.clip(rewards[b] + discounts[b] * z, v_min, v_max)
            pos = min((tz - v_min) / dz, len(support) - 1)
            low, up = int(np.floor(pos)), int(np.ceil(pos))
            if low == up:
                out[b, low] += probs[b, j]
            else:
                out[b, low] += probs[b, j] * (up - pos)
                out[b, up] += probs[b, j] * (pos - low)
    return out


def test_projection_equals_the_papers_loop_on_random_inputs():
    keys = jax.random.split(jax.random.key(0), 3)
    support = np.linspace(-10.0, 10.0, 51)
    probs = np.asarray(jax.nn.softmax(jax.random.normal(keys[0], (64, 51)) * 2), np.float64)
    rewards = np.asarray(jax.random.uniform(keys[1], (64,), minval=-4, maxval=4), np.float64)
    # terminal every fourth, else gamma^n for n = 1..3 (n-step transitions)
    discounts = np.where(np.arange(64) % 4 == 0, 0.0, 0.99 ** (1 + np.arange(64) % 3))
    got = categorical_projection(probs.astype(np.float32), rewards.astype(np.float32),
                                 discounts.astype(np.float32), support.astype(np.float32))
    want = floor_ceil_projection(probs, rewards, discounts, support)
    np.testing.assert_allclose(np.asarray(got), want, atol=1e-5)
    np.testing.assert_allclose(np.asarray(got).sum(axis=1), 1.0, atol=1e-5)


def test_projection_keeps_the_mean_when_nothing_is_clipped():
    probs = jax.nn.softmax(jax.random.normal(jax.random.key(1), (8, 5)))
    rewards, discounts = jnp.full((8,), 0.3), jnp.full((8,), 0.5)  # Tz in [-0.7, 1.3]
    projected = categorical_projection(probs, rewards, discounts, SUPPORT)
    np.testing.assert_allclose(projected @ SUPPORT, rewards + discounts * (probs @ SUPPORT),
                               atol=1e-5)


def test_quantile_midpoints():
    np.testing.assert_allclose(quantile_midpoints(4), [0.125, 0.375, 0.625, 0.875])


def test_huber():
    np.testing.assert_allclose(huber(jnp.array([-3.0, -0.5, 0.0, 2.0]), 1.0),
                               [2.5, 0.125, 0.0, 1.5])
    np.testing.assert_allclose(huber(jnp.array([3.0, 2.0]), 2.0), [4.0, 2.0])


@pytest.mark.parametrize(("kappa", "expected"), [
    # quantiles theta = [0, 1] at tau = [1/4, 3/4], targets [0.5, 3]; u_ij = T_j - theta_i:
    # i = 0: u = [0.5, 3], weight 1/4 each: 1/4 (0.125 + 2.5) / 2 = 0.328125
    # i = 1: u = [-0.5, 2], weights 1/4 and 3/4: (1/4 0.125 + 3/4 1.5) / 2 = 0.578125
    (1.0, 0.328125 + 0.578125),
    # kappa 2 (Huber divided by kappa): huber_2(3) = 4, huber_2(2) = 2
    # i = 0: 1/4 (0.125 + 4) / 2 / 2 = 0.2578125; i = 1: (1/4 0.125 + 3/4 2) / 2 / 2 = 0.3828125
    (2.0, 0.2578125 + 0.3828125),
])
def test_quantile_huber_loss_hand_computed(kappa, expected):
    loss = quantile_huber_loss(jnp.array([[0.0, 1.0]]), jnp.array([[0.5, 3.0]]),
                               quantile_midpoints(2), kappa)
    assert loss.shape == (1,)
    assert float(loss[0]) == pytest.approx(expected, rel=1e-6)


def test_quantile_regression_finds_the_quantiles_of_the_targets():
    """Gradient descent on the loss moves each theta_i to the tau_i-quantile of the target
    samples (0, 1, ..., 99): for tau = 1/8, 3/8, 5/8, 7/8, near 12.5, 37.5, 62.5, 87.5."""
    targets = jnp.arange(100.0)[None]
    taus = quantile_midpoints(4)
    grad = jax.jit(jax.grad(lambda q: quantile_huber_loss(q, targets, taus, 1.0).sum()))
    theta = jnp.zeros((1, 4))
    for _ in range(4000):
        theta = theta - 2.0 * grad(theta)
    np.testing.assert_allclose(theta[0], [12.5, 37.5, 62.5, 87.5], atol=1.0)


def test_quantile_huber_loss_takes_each_samples_own_fractions():
    """IQN's fractions ``[B, N]``: each row's loss is the loss at that row's fractions alone,
    the same as the shared-fraction form row by row (and rows with other fractions differ)."""
    quantiles = jnp.array([[0.0, 1.0], [2.0, -1.0]])
    targets = jnp.array([[0.5, 3.0], [1.0, 0.0]])
    taus = jnp.array([[0.25, 0.75], [0.1, 0.6]])
    per_sample = quantile_huber_loss(quantiles, targets, taus, 1.0)
    for b in range(2):
        alone = quantile_huber_loss(quantiles[b:b + 1], targets[b:b + 1], taus[b], 1.0)
        assert float(per_sample[b]) == pytest.approx(float(alone[0]), rel=1e-6)
    swapped = quantile_huber_loss(quantiles, targets, taus[::-1], 1.0)
    assert not np.allclose(per_sample, swapped)

"""Distributional RL targets and losses: C51's categorical projection (Bellemare et al., 2017)
and QR-DQN's quantile Huber loss (Dabney et al., 2018).

Batch-major: ``[B, ...]`` with one row per sampled transition. A transition's target is
``reward + discount * Z(next_obs)`` with ``discount = gamma^n (1 - terminated)`` from the
n-step window (`jaxrl.parts.buffers.nstep`), so a terminal transition's target collapses to its
reward and a truncated one bootstraps from its final observation. ``v_min``, ``v_max`` and
``kappa`` may be traced scalars; the numbers of atoms and quantiles are static (shapes).
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

__all__ = ["categorical_projection", "categorical_support", "huber", "quantile_huber_loss",
           "quantile_midpoints"]


def categorical_support(v_min: ArrayLike, v_max: ArrayLike, num_atoms: int) -> jax.Array:
    """``[K]`` the fixed support ``z_i = v_min + i (v_max - v_min) / (K - 1)``, ``K = num_atoms``
    (a static int >= 2)."""
    if num_atoms < 2:
        raise ValueError(f"a categorical support needs at least 2 atoms, got {num_atoms}")
    return jnp.linspace(jnp.asarray(v_min, jnp.float32), jnp.asarray(v_max, jnp.float32),
                        num_atoms)


def categorical_projection(next_probs: ArrayLike, rewards: ArrayLike, discounts: ArrayLike,
                           support: ArrayLike) -> jax.Array:
    """Project the target distribution onto the fixed support (C51's ``Phi T Z``).

    Atom ``j`` of the next state's distribution moves to ``Tz_j = clip(r + discount * z_j,
    v_min, v_max)`` with its probability ``p_j``, and that mass is split between the two support
    points around ``Tz_j`` in proportion to closeness:

    ``m_i = sum_j clip(1 - |Tz_j - z_i| / dz, 0, 1) p_j``, ``dz = z_1 - z_0``

    (the same split as the paper's floor/ceil loop, with an atom that lands exactly on a support
    point given wholly to that point). Mass beyond the support's edges lands on the edge atoms;
    a terminal transition (``discount = 0``) puts all its mass around the reward.

    Args:
        next_probs: ``[B, K]`` probabilities of the next state's distribution (the target
            network's at the selected action); rows sum to 1.
        rewards: ``[B]`` (n-step) rewards.
        discounts: ``[B]`` ``gamma^n (1 - terminated)``.
        support: ``[K]`` evenly spaced atoms (`categorical_support`).

    Returns:
        ``[B, K]`` the projected probabilities (rows sum to 1); no gradient is stopped here.
    """
    next_probs, support = jnp.asarray(next_probs), jnp.asarray(support)
    rewards, discounts = jnp.asarray(rewards), jnp.asarray(discounts)
    chex.assert_rank([next_probs, rewards, discounts, support], [2, 1, 1, 1])
    chex.assert_equal_shape([rewards, discounts])
    chex.assert_equal_shape_prefix([next_probs, rewards], 1)
    chex.assert_equal_shape_suffix([next_probs, support], 1)
    delta = support[1] - support[0]
    moved = jnp.clip(rewards[:, None] + discounts[:, None] * support[None, :], support[0],
                     support[-1])  # [B, K] Tz_j
    weight = jnp.clip(1.0 - jnp.abs(moved[:, None, :] - support[None, :, None]) / delta, 0.0,
                      1.0)  # [B, K_i, K_j]
    return jnp.einsum("bij,bj->bi", weight, next_probs)


def quantile_midpoints(num_quantiles: int) -> jax.Array:
    """``[N]`` the quantile fractions QR-DQN learns: ``tau_i = (2i - 1) / (2N)``, i = 1..N."""
    return (jnp.arange(num_quantiles, dtype=jnp.float32) + 0.5) / num_quantiles


def huber(u: ArrayLike, kappa: ArrayLike = 1.0) -> jax.Array:
    """Elementwise ``0.5 u^2`` where ``|u| <= kappa``, else ``kappa (|u| - 0.5 kappa)``."""
    u = jnp.asarray(u)
    abs_u = jnp.abs(u)
    return jnp.where(abs_u <= kappa, 0.5 * jnp.square(u), kappa * (abs_u - 0.5 * kappa))


def quantile_huber_loss(quantiles: ArrayLike, targets: ArrayLike, taus: ArrayLike,
                        kappa: ArrayLike = 1.0) -> jax.Array:
    """QR-DQN's loss per sample: ``sum_i mean_j rho_kappa(tau_i, T_j - theta_i)`` with

    ``rho_kappa(tau, u) = |tau - 1{u < 0}| * huber(u, kappa) / kappa``

    (Dabney et al. 2018, eq. 10: summed over the online quantiles ``i``, averaged over the
    target samples ``j``; IQN's loss, Dabney et al. 2018b eq. 3, with fractions sampled per
    sample).

    Args:
        quantiles: ``[B, N]`` the online quantiles ``theta_i`` of the taken action.
        targets: ``[B, M]`` the target samples ``T_j = r + discount * theta'_j`` (no gradient
            flows into them: stop it before calling).
        taus: the quantile fractions of ``quantiles``: ``[N]`` shared by the batch
            (QR-DQN's `quantile_midpoints`) or ``[B, N]`` per sample (IQN's draws).
        kappa: the Huber threshold (> 0).

    Returns:
        ``[B]`` the loss of each sample.
    """
    quantiles, targets, taus = jnp.asarray(quantiles), jnp.asarray(targets), jnp.asarray(taus)
    chex.assert_rank([quantiles, targets], [2, 2])
    chex.assert_rank(taus, {1, 2})
    chex.assert_equal_shape_prefix([quantiles, targets], 1)
    taus = jnp.broadcast_to(taus, quantiles.shape)  # [B, N]
    u = targets[:, None, :] - quantiles[:, :, None]  # [B, N_i, M_j]
    weight = jnp.abs(taus[:, :, None] - (u < 0).astype(u.dtype))
    rho = weight * huber(u, kappa) / kappa
    return rho.mean(axis=2).sum(axis=1)

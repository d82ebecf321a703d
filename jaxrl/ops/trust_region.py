"""ACER's efficient trust region (Wang et al., 2017, section 3.3) on the statistics of a policy.

ACER does not constrain the parameters' step: it adjusts, per sample, the gradient ``g`` of the
objective with respect to the policy's distribution statistics ``phi`` (a categorical's logits,
a Gaussian's mean), so that the linearized KL from an average policy stays within ``delta``::

    minimize_z  0.5 ||g - z||^2   subject to   k . z <= delta,
    k = d KL(pi_avg || pi_phi) / d phi
    z* = g - max(0, (k . g - delta) / ||k||^2) k                (closed form)

and backpropagates ``z*`` through the network instead of ``g``. With ``k . g <= delta`` the
gradient is unchanged.

    z, scale = project_kl(g, k, delta)          # g, k: [..., D]; z: [..., D], scale: [...]

For a categorical policy, ``k = softmax(phi) - p_avg`` (`categorical_kl_gradient`). Pure,
jittable and vmappable; ``delta`` may be traced.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

__all__ = ["categorical_kl_gradient", "project_kl"]


def project_kl(g: ArrayLike, k: ArrayLike, delta: ArrayLike) -> tuple[jax.Array, jax.Array]:
    """The trust-region step for per-sample gradients ``g`` ``[..., D]`` and KL gradients ``k``
    ``[..., D]``: ``(z* [..., D], scale [...])``, where ``scale = max(0, (k.g - delta) /
    ||k||^2)`` is how much of ``k`` was taken out (0 where the constraint does not bind; a
    zero ``k`` leaves ``g`` as it is)."""
    g, k = jnp.asarray(g), jnp.asarray(k)
    chex.assert_equal_shape([g, k])
    chex.assert_rank(delta, 0)
    excess = jnp.sum(k * g, axis=-1) - delta
    norm2 = jnp.sum(k * k, axis=-1)
    scale = jnp.where(norm2 > 0, jnp.maximum(0.0, excess) / jnp.where(norm2 > 0, norm2, 1.0),
                      0.0)
    return g - scale[..., None] * k, scale


def categorical_kl_gradient(logits: ArrayLike, average_probs: ArrayLike) -> jax.Array:
    """``d KL(p_avg || softmax(logits)) / d logits = softmax(logits) - p_avg`` ``[..., A]``."""
    logits = jnp.asarray(logits)
    chex.assert_equal_shape([logits, jnp.asarray(average_probs)])
    return jax.nn.softmax(logits, axis=-1) - average_probs

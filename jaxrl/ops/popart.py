"""PopArt (van Hasselt et al., 2016): adaptive normalization of value targets that preserves
the value network's outputs when the statistics change.

The value head predicts a normalized value ``v``; the value is ``sigma * v + mu``, with ``mu``
and ``sigma`` running statistics of the targets. When a batch of targets moves the statistics
to ``(mu', sigma')``, the head's last linear layer ``v = w . h + b`` is rescaled so that
``sigma' * v' + mu' = sigma * v + mu`` for every input ("preserving outputs precisely"):

    w' = w * sigma / sigma'        b' = (sigma * b + mu - mu') / sigma'

and the head then learns the normalized targets ``(G - mu') / sigma'`` ("adaptively rescaling
targets"). The statistics are exponential moving averages of the first and second moments with
step ``beta``.

    stats = init()
    new = update(stats, targets, beta)                    # targets: any shape
    kernel, bias = preserve(kernel, bias, stats, new)     # the head's last layer
    v = denormalize(new, head_output)                     # the value

Pure, jittable and vmappable; ``beta`` may be traced.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
from flax import struct
from jax.typing import ArrayLike

__all__ = ["PopArtStats", "denormalize", "init", "normalize", "preserve", "scale", "update"]

MIN_VARIANCE = 1e-8  # sigma never falls below 1e-4 (a constant target would divide by 0)


@struct.dataclass
class PopArtStats:
    """``mean`` and ``second`` (the mean square) of the targets, ``[]`` float32 each."""

    mean: jax.Array
    second: jax.Array


def init() -> PopArtStats:
    """``mu = 0, sigma = 1``: the identity until the first update."""
    return PopArtStats(mean=jnp.float32(0.0), second=jnp.float32(1.0))


def scale(stats: PopArtStats) -> jax.Array:
    """``[]`` ``sigma = sqrt(max(second - mean^2, MIN_VARIANCE))``."""
    return jnp.sqrt(jnp.maximum(stats.second - jnp.square(stats.mean), MIN_VARIANCE))


def update(stats: PopArtStats, targets: ArrayLike, beta: ArrayLike) -> PopArtStats:
    """Move both moments a step ``beta`` towards the batch's: ``m <- (1 - beta) m + beta
    mean(x)``, ``s <- (1 - beta) s + beta mean(x^2)``."""
    targets = jnp.asarray(targets, jnp.float32)
    chex.assert_rank(beta, 0)
    mean = jnp.asarray((1 - beta) * stats.mean + beta * jnp.mean(targets), jnp.float32)
    second = jnp.asarray((1 - beta) * stats.second + beta * jnp.mean(jnp.square(targets)),
                         jnp.float32)
    return PopArtStats(mean=mean, second=second)


def preserve(kernel: ArrayLike, bias: ArrayLike, old: PopArtStats, new: PopArtStats
             ) -> tuple[jax.Array, jax.Array]:
    """The last linear layer (``kernel [F, 1]``, ``bias [1]``) rescaled so that the
    denormalized output under ``new`` equals the one under ``old`` for every input."""
    sigma, sigma_new = scale(old), scale(new)
    kernel, bias = jnp.asarray(kernel), jnp.asarray(bias)
    return kernel * sigma / sigma_new, (sigma * bias + old.mean - new.mean) / sigma_new


def normalize(stats: PopArtStats, x: ArrayLike) -> jax.Array:
    """``(x - mu) / sigma``: the head's regression target for a return ``x``."""
    return (jnp.asarray(x) - stats.mean) / scale(stats)


def denormalize(stats: PopArtStats, v: ArrayLike) -> jax.Array:
    """``sigma * v + mu``: the value for the head's output ``v``."""
    return scale(stats) * jnp.asarray(v) + stats.mean

"""PopArt (van Hasselt et al., 2016): adaptive normalization of value targets that preserves
the value network's outputs when the statistics change.

The value head predicts a normalized value ``v``; the value is ``sigma * v + mu``, with ``mu``
and ``sigma`` running statistics of the targets. When a batch of targets moves the statistics
to ``(mu', sigma')``, the head's last linear layer ``v = w . h + b`` is rescaled so that
``sigma' * v' + mu' = sigma * v + mu`` for every input ("preserving outputs precisely"):

    w' = w * sigma / sigma'        b' = (sigma * b + mu - mu') / sigma'

and the head then learns the normalized targets ``(G - mu') / sigma'`` ("adaptively rescaling
targets"). The statistics are exponential moving averages of the targets' mean and variance with
step ``beta``: the moving distribution is a mixture, weight ``1 - beta`` on the old one and
``beta`` on the batch, and its variance is kept as such. The paper's form, a moving second
moment ``nu`` and ``sigma^2 = nu - mu^2``, is the same in exact arithmetic, but in float32 it
cancels once the targets' spread is small beside their size: targets of 100 +- 0.03 (a solved
CartPole at gamma 0.99) gave ``nu - mu^2 < 0``, so sigma fell to its floor of 1e-4 and the
normalized value loss grew by 10^5.

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
    """``mean`` and ``variance`` of the targets, ``[]`` float32 each."""

    mean: jax.Array
    variance: jax.Array


def init() -> PopArtStats:
    """``mu = 0, sigma = 1``: the identity until the first update."""
    return PopArtStats(mean=jnp.float32(0.0), variance=jnp.float32(1.0))


def scale(stats: PopArtStats) -> jax.Array:
    """``[]`` ``sigma = sqrt(max(variance, MIN_VARIANCE))``."""
    return jnp.sqrt(jnp.maximum(stats.variance, MIN_VARIANCE))


def update(stats: PopArtStats, targets: ArrayLike, beta: ArrayLike) -> PopArtStats:
    """A step ``beta`` towards the batch ``x``: with ``d = mean(x) - mu``,

        mu  <- mu + beta d
        var <- (1 - beta) (var + beta d^2) + beta mean((x - mean(x))^2)

    the mean and variance of the mixture of the old statistics (weight ``1 - beta``) and the
    batch (weight ``beta``): the EMAs of the first two moments, without their cancellation."""
    targets = jnp.asarray(targets, jnp.float32)
    chex.assert_rank(beta, 0)
    batch_mean = jnp.mean(targets)
    batch_variance = jnp.mean(jnp.square(targets - batch_mean))
    d = batch_mean - stats.mean
    mean = jnp.asarray(stats.mean + beta * d, jnp.float32)
    variance = jnp.asarray((1 - beta) * (stats.variance + beta * jnp.square(d))
                           + beta * batch_variance, jnp.float32)
    return PopArtStats(mean=mean, variance=variance)


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

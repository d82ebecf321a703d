"""Running mean and variance (observation / reward normalization as agent state).

Convention: ``count`` starts at exactly 0 (no epsilon pseudo-count), with ``mean = 0`` and
``var = 1`` as placeholders. Consequences:

- before any update, :func:`normalize` is the identity (up to ``eps``);
- after updates the statistics are *exactly* the population mean and variance (``ddof = 0``)
  of all data seen, with no prior mixed in;
- the combination rule is safe at ``count = 0``: the running term is weighted by ``count`` so
  the first batch's statistics are taken as they are (a batch always has ``N >= 1``).

Updates use Chan et al.'s parallel combination of the batch's mean and ``M2`` with the running
ones. The batch statistics are themselves computed on data shifted by its first row, so data
with a large offset (e.g. mean 1e6, std 1 in float32) keeps an accurate variance.
"""

from __future__ import annotations

from collections.abc import Sequence

import chex
import flax.struct
import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

__all__ = [
    "RunningMeanStd",
    "denormalize",
    "normalize",
    "running_stats_init",
    "running_stats_update",
]


@flax.struct.dataclass
class RunningMeanStd:
    """Running statistics of a stream of arrays of shape ``shape``.

    Attributes:
        mean: ``[*shape]`` float32 mean of all data seen (0 before any update).
        var: ``[*shape]`` float32 population variance (ddof 0) of all data seen (1 before any
            update).
        count: ``[]`` float32 number of samples seen (starts at exactly 0).
    """

    mean: jax.Array
    var: jax.Array
    count: jax.Array


def _check_stats(stats: RunningMeanStd) -> None:
    """``mean`` and ``var`` share one shape; ``count`` is a scalar."""
    chex.assert_equal_shape([stats.mean, stats.var])
    chex.assert_rank(stats.count, 0)


def running_stats_init(
    shape: int | Sequence[int] = (), dtype: jnp.dtype = jnp.float32
) -> RunningMeanStd:
    """Empty statistics: ``mean = 0``, ``var = 1``, ``count = 0``.

    Args:
        shape: shape of one sample (e.g. the observation shape); ``()`` for scalars.
        dtype: float dtype of ``mean``, ``var`` and ``count``.

    Returns:
        A :class:`RunningMeanStd` with ``mean, var: [*shape]`` and ``count: []``.
    """
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return RunningMeanStd(
        mean=jnp.zeros(shape, dtype),
        var=jnp.ones(shape, dtype),
        count=jnp.zeros((), dtype),
    )


def running_stats_update(stats: RunningMeanStd, batch: ArrayLike) -> RunningMeanStd:
    """Folds a batch of samples into the running statistics (Chan et al. parallel update).

    Args:
        stats: current statistics with ``mean, var: [*shape]``.
        batch: ``[N, *shape]`` samples, ``N >= 1`` (static). To fold a ``[T, B, *shape]`` rollout,
            reshape it to ``[T * B, *shape]`` first.

    Returns:
        Updated :class:`RunningMeanStd` equal to the statistics of all data seen so far.
    """
    _check_stats(stats)
    dtype = stats.mean.dtype
    batch = jnp.asarray(batch, dtype=dtype)
    if batch.ndim != stats.mean.ndim + 1 or batch.shape[1:] != stats.mean.shape:
        raise ValueError(f"batch must have shape [N, *{stats.mean.shape}], got {batch.shape}")
    batch_count = jnp.asarray(batch.shape[0], dtype)
    # Reduce data shifted by one of its samples, so the sums are of small numbers; and form
    # delta = batch_mean - mean without rounding batch_mean to the (coarse, at large offsets)
    # grid of representable values first.
    pivot = batch[0]
    shifted_mean = jnp.mean(batch - pivot, axis=0)
    batch_var = jnp.mean(jnp.square(batch - pivot - shifted_mean), axis=0)

    total = stats.count + batch_count
    delta = (pivot - stats.mean) + shifted_mean
    new_mean = stats.mean + delta * (batch_count / total)
    m2 = (
        stats.var * stats.count
        + batch_var * batch_count
        + jnp.square(delta) * (stats.count * batch_count / total)
    )
    out = RunningMeanStd(mean=new_mean, var=m2 / total, count=total)
    chex.assert_trees_all_equal_shapes_and_dtypes(out, stats)
    return out


def normalize(
    stats: RunningMeanStd,
    x: ArrayLike,
    clip: float | jax.Array | None = None,
    eps: float = 1e-8,
    center: bool = True,
) -> jax.Array:
    """``(x - mean) / sqrt(var + eps)``, optionally clipped to ``[-clip, clip]``.

    Args:
        stats: statistics with ``mean, var: [*shape]``.
        x: ``[..., *shape]`` values (leading dims broadcast).
        clip: optional bound (Python float or traced scalar); None for no clipping.
        eps: added to the variance.
        center: if False, only scale (``x / sqrt(var + eps)``), as in reward scaling.

    Returns:
        Normalized ``x``, same shape.
    """
    x = jnp.asarray(x)
    _check_stats(stats)
    chex.assert_shape(x, (..., *stats.mean.shape))
    shape = x.shape
    if center:
        x = x - stats.mean
    out = x / jnp.sqrt(stats.var + eps)
    if clip is not None:
        out = jnp.clip(out, -clip, clip)
    chex.assert_shape(out, shape)
    return out


def denormalize(
    stats: RunningMeanStd, x: ArrayLike, eps: float = 1e-8, center: bool = True
) -> jax.Array:
    """Inverse of :func:`normalize` without clipping: ``x * sqrt(var + eps) + mean``.

    Args:
        stats: statistics with ``mean, var: [*shape]``.
        x: ``[..., *shape]`` normalized values.
        eps: must match the ``eps`` used to normalize.
        center: if False, only rescale (no mean added).

    Returns:
        ``x`` in the original units, same shape.
    """
    x = jnp.asarray(x)
    _check_stats(stats)
    chex.assert_shape(x, (..., *stats.mean.shape))
    out = x * jnp.sqrt(stats.var + eps)
    if center:
        out = out + stats.mean
    chex.assert_shape(out, x.shape)
    return out

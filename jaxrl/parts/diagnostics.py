"""Diagnostics computed inside jit (reading 004: a metric you don't log is a bug you can't see).

Verbosity levels (static config field ``verbosity``):

* ``basic``: episode stats, losses, entropy, approx KL, clip fraction, residual variance,
  gradient global norm, learning rate, env steps;
* ``debug``: + value / target / advantage / reward distributions (mean, std, min, max),
  update norm;
* ``full``: + gradient abs-max and mean-square, per-parameter-group gradient norms.

Host-side, `first_non_finite` finds the first metric that went NaN/Inf so the driver can stop
with a message that names it.
"""

from __future__ import annotations

from collections.abc import Mapping

import jax
import jax.numpy as jnp
import numpy as np

from jaxrl.parts.metric_names import nan_allowed

LEVELS = ("basic", "debug", "full")


def level_at_least(verbosity: str, level: str) -> bool:
    return LEVELS.index(verbosity) >= LEVELS.index(level)


def describe(x: jax.Array, name: str) -> dict[str, jax.Array]:
    """``{name_mean, name_std, name_min, name_max}`` over all elements of ``x``."""
    x = x.astype(jnp.float32)
    return {f"{name}_mean": x.mean(), f"{name}_std": x.std(), f"{name}_min": x.min(),
            f"{name}_max": x.max()}


def global_norm(tree) -> jax.Array:
    return jnp.sqrt(sum(jnp.sum(jnp.square(x)) for x in jax.tree.leaves(tree)))


def gradient_stats(grads, updates, verbosity: str) -> dict[str, jax.Array]:
    """Global norm of the gradient (and of the applied update, and more at ``full``)."""
    out = {"grad_norm": global_norm(grads)}
    if level_at_least(verbosity, "debug"):
        out["update_norm"] = global_norm(updates)
    if level_at_least(verbosity, "full"):
        leaves = jax.tree.leaves(grads)
        size = sum(x.size for x in leaves)
        out["grad_abs_max"] = jnp.max(jnp.stack([jnp.max(jnp.abs(x)) for x in leaves]))
        out["grad_mean_square"] = sum(jnp.sum(jnp.square(x)) for x in leaves) / size
    return out


def residual_variance(predictions: jax.Array, targets: jax.Array) -> jax.Array:
    """``Var[target - prediction] / Var[target]`` (= 1 - explained variance); NaN if Var = 0."""
    var_t = jnp.var(targets)
    return jnp.where(var_t > 1e-12, jnp.var(targets - predictions) / jnp.maximum(var_t, 1e-12),
                     jnp.nan)


def first_env_fault(metrics: Mapping[str, np.ndarray]) -> tuple[int, int] | None:
    """``(seed, update_index)`` of the first update whose env reported a non-finite physics
    state (``env_nonfinite_steps > 0``; ``[seeds, updates]``), else None."""
    steps = metrics.get("env_nonfinite_steps")
    if steps is None:
        return None
    seeds, updates = np.nonzero(np.asarray(steps).reshape(np.shape(steps)[0], -1) > 0)
    if not len(seeds):
        return None
    order = np.lexsort((seeds, updates))[0]
    return int(seeds[order]), int(updates[order])


def first_non_finite(metrics: Mapping[str, np.ndarray]) -> tuple[str, int, int] | None:
    """Host side: ``(metric, seed, update_index)`` of the first non-finite entry, else None.

    ``metrics`` maps names to ``[seeds, updates]`` arrays. Metrics that are NaN by design when
    there is nothing to measure (no finished episode, no evaluation or replayed update yet,
    constant value targets: `jaxrl.parts.metric_names.nan_allowed`) are skipped. "First" is the
    earliest update, then the lowest seed.
    """
    first = None
    for name, value in metrics.items():
        if nan_allowed(name):
            continue
        arr = np.asarray(value)
        if arr.dtype.kind != "f":
            continue
        bad = ~np.isfinite(arr.reshape(arr.shape[0], -1))
        if bad.any():
            seeds, updates = np.nonzero(bad)
            order = np.lexsort((seeds, updates))[0]
            cand = (int(updates[order]), int(seeds[order]), name)
            if first is None or cand < first:
                first = cand
    if first is None:
        return None
    update, seed, name = first
    return name, seed, update

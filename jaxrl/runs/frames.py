"""Metric frames: host-side metric chunks and evaluations as long pandas DataFrames.

Pure numpy/pandas (no JAX), so the run store can rebuild them without loading the engine.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

EVAL_COLUMNS = ["seed", "update", "env_steps", "eval_return", "eval_return_std"]


def metrics_frame(chunks: list[dict]) -> pd.DataFrame:
    """``[{name: [seeds, K]}]`` -> long DataFrame with columns seed, update, <metrics>."""
    if not chunks:
        return pd.DataFrame(columns=["seed", "update"])
    names = list(chunks[0])
    stacked = {n: np.concatenate([np.asarray(c[n], dtype=np.float64) for c in chunks], axis=1)
               for n in names}
    seeds, updates = stacked[names[0]].shape
    frame = {"seed": np.repeat(np.arange(seeds), updates),
             "update": np.tile(np.arange(updates), seeds)}
    frame.update({n: v.reshape(-1) for n, v in stacked.items()})
    return pd.DataFrame(frame)


def finished_mean(returns: np.ndarray, axis: int | None = None, stat=np.nanmean) -> np.ndarray:
    """``stat`` (the mean, or ``np.nanstd``) over finished evaluation episodes (NaN ones,
    unfinished, left out), NaN where none finished, without numpy's "Mean of empty slice"
    warning: a policy that never ends a game (one that never presses FIRE in Breakout) is a
    result, not an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return stat(returns, axis=axis)


def eval_frame(evals: list, steps_per_update: int) -> pd.DataFrame:
    """``[(updates done, [seeds, episodes])]`` -> one row per (evaluation, seed): the mean and
    std of that seed's evaluation episodes (NaN episodes, unfinished, left out)."""
    rows = []
    for updates, returns in evals:
        for s, per_seed in enumerate(returns):
            rows.append({"seed": s, "update": updates - 1, "env_steps": updates * steps_per_update,
                         "eval_return": float(finished_mean(per_seed)),
                         "eval_return_std": float(finished_mean(per_seed, stat=np.nanstd))})
    return pd.DataFrame(rows, columns=EVAL_COLUMNS)

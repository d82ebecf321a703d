"""How a benchmark number is measured, per seed: the definitions that published references use.

A reference figure is only comparable when ours is computed the same way. Each run stores, per
seed, what these definitions need (``run.json``: ``final_eval_return`` and
``train_return_last100``), and a benchmark entry names the one its reference used:

* ``final_eval``: the mean undiscounted return of the final deterministic evaluation (one
  whole episode in each of ``eval_episodes`` fresh envs, after the last update); a run with the
  engine option ``eval_sample`` evaluates the policy's sampled actions instead (Navix's and
  rejax's baselines evaluate so), and a bench entry that sets it says so in its config;
* ``train_last100``: the mean return of the last 100 training episodes the seed completed
  (over all its envs), as OpenAI baselines' ``eprewmean`` (reading 002's tables) and most
  "episodic return at the end of training" figures.

The run store keeps one row per update with the mean and the count of the episodes that ended
in it, so the last 100 are taken from the newest updates backwards: whole updates while they fit,
then the part of the oldest one still needed at that update's mean (exact whenever the updates
involved are taken whole).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

MEASURES: dict[str, str] = {
    "final_eval": "mean return of the final deterministic evaluation episodes",
    "train_last100": "mean return of the last 100 training episodes",
}
LAST_EPISODES = 100


def last_episodes_mean(returns_mean: np.ndarray, counts: np.ndarray,
                       n: int = LAST_EPISODES) -> float:
    """Mean return of the last ``n`` episodes from per-update ``returns_mean`` ``[U]`` (NaN
    where none ended) and ``counts`` ``[U]``. Fewer than ``n`` episodes in all: their mean;
    none: NaN."""
    returns_mean = np.asarray(returns_mean, dtype=float)
    counts = np.nan_to_num(np.asarray(counts, dtype=float))
    total, weight = 0.0, 0.0
    for mean, count in zip(returns_mean[::-1], counts[::-1]):
        if count <= 0 or not np.isfinite(mean):
            continue
        take = min(count, n - weight)
        total += take * mean
        weight += take
        if weight >= n:
            break
    return total / weight if weight > 0 else float("nan")


def train_return_last100(metrics: pd.DataFrame, seeds: int) -> np.ndarray:
    """``[seeds]`` `last_episodes_mean` of each seed from a metrics frame (columns seed, update,
    ``episode_return_mean``, ``episode_count``); NaN for a seed with no finished episode."""
    out = np.full(seeds, np.nan)
    if metrics.empty or "episode_count" not in metrics:
        return out
    for seed, rows in metrics.sort_values("update").groupby("seed"):
        if 0 <= int(seed) < seeds:
            out[int(seed)] = last_episodes_mean(rows["episode_return_mean"].to_numpy(),
                                                rows["episode_count"].to_numpy())
    return out


def per_seed(meta: dict, measure: str) -> np.ndarray:
    """The per-seed values of ``measure`` stored in a run's ``run.json`` (NaN where missing)."""
    if measure not in MEASURES:
        raise ValueError(f"unknown measure {measure!r}; choose one of {', '.join(MEASURES)}")
    key = {"final_eval": "final_eval_return", "train_last100": "train_return_last100"}[measure]
    values = meta.get(key) or []
    return np.array([np.nan if v is None else float(v) for v in values], dtype=float)

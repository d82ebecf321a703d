"""Learning curves with a band over seeds (IQM with its bootstrap CI by default, or mean ± std).
x axis in env steps per seed."""

from __future__ import annotations

import numpy as np
import pandas as pd

from jaxrl import stats

MAX_POINTS = 60


def curve_band(frame: pd.DataFrame, metric: str, band: str = "iqm", reps: int = 500,
               seed: int = 0, x: str = "env_steps") -> pd.DataFrame:
    """Per x point: center and band over seeds. ``frame`` has columns seed, ``x``, ``metric``.
    ``band="iqm"``: IQM and its 95% percentile-bootstrap CI; ``"mean"``: mean ± std."""
    table = frame.pivot_table(index=x, columns="seed", values=metric, aggfunc="mean").sort_index()
    if len(table) > MAX_POINTS:  # thin the x axis evenly, always keeping the last point
        idx = np.unique(np.linspace(0, len(table) - 1, MAX_POINTS).round().astype(int))
        table = table.iloc[idx]
    rows = []
    for xv, values in table.iterrows():
        v = values.to_numpy(dtype=float)
        v = v[np.isfinite(v)]
        if v.size == 0:
            continue
        if band == "iqm":
            center = stats.iqm(v)
            low, high = stats.bootstrap_ci(v, statistic="iqm", reps=reps, seed=seed) if v.size > 1 else (center, center)
        else:
            center, spread = float(np.mean(v)), float(np.std(v))
            low, high = center - spread, center + spread
        rows.append({x: xv, "center": center, "low": low, "high": high, "n": v.size})
    return pd.DataFrame(rows, columns=[x, "center", "low", "high", "n"])


def plot_runs(curves: dict[str, pd.DataFrame], metric: str, title: str, path: str | None = None,
              band: str = "iqm", ax=None):
    """One line per run (label -> metrics frame), shaded band over seeds. Saves PNG if ``path``."""
    own = ax is None
    if own and path is not None:  # a file: build the figure without pyplot (any backend)
        from matplotlib.figure import Figure

        fig = Figure(figsize=(7, 4.2), dpi=110)
        ax = fig.subplots()
    elif own:  # interactive (notebooks): pyplot shows it inline
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7, 4.2), dpi=110)
    for label, frame in curves.items():
        c = curve_band(frame, metric, band=band)
        if c.empty:
            continue
        line, = ax.plot(c.iloc[:, 0], c["center"], label=f"{label} (n={int(c['n'].max())})")
        ax.fill_between(c.iloc[:, 0], c["low"], c["high"], alpha=0.25, color=line.get_color())
    ax.set_xlabel("env steps per seed")
    ax.set_ylabel(metric + (" (IQM, 95% bootstrap CI)" if band == "iqm" else " (mean ± std)"))
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if curves:
        ax.legend(fontsize=8)
    if own:
        fig.tight_layout()
        if path is not None:
            fig.savefig(path)
    return ax

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
              band: str = "iqm", ax=None, empty: str | None = None):
    """One line per run (label -> metrics frame), shaded band over seeds. Saves PNG if ``path``.
    When no run has a finite ``metric`` the panel says ``empty`` (default: no finite values of
    ``metric``) in its middle, and has no legend."""
    own = ax is None
    if own and path is not None:  # a file: build the figure without pyplot (any backend)
        from matplotlib.figure import Figure

        fig = Figure(figsize=(7, 4.2), dpi=110)
        ax = fig.subplots()
    elif own:  # interactive (notebooks): pyplot shows it inline
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7, 4.2), dpi=110)
    drawn = 0
    for label, frame in curves.items():
        c = curve_band(frame, metric, band=band)
        if c.empty:
            continue
        drawn += 1
        line, = ax.plot(c.iloc[:, 0], c["center"], label=f"{label} (n={int(c['n'].max())})")
        ax.fill_between(c.iloc[:, 0], c["low"], c["high"], alpha=0.25, color=line.get_color())
    ax.set_xlabel("env steps per seed")
    ax.set_ylabel(metric + (" (IQM, 95% bootstrap CI)" if band == "iqm" else " (mean ± std)"))
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if drawn:
        ax.legend(fontsize=8)
    else:  # a legend of no lines is matplotlib's "No artists with labels" warning
        empty_note(ax, empty or f"no finite values of {metric}")
    if own:
        fig.tight_layout()
        if path is not None:
            fig.savefig(path)
    return ax


def empty_note(ax, text: str) -> None:
    """``text`` in the middle of a panel that has nothing to draw."""
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", fontsize=9,
            color="0.35", wrap=True)


class LiveCurve:
    """A learning curve that redraws itself in a notebook as a run goes: pass it as
    ``on_chunk`` to `jaxrl.train` (or call it with each chunk's record). After every chunk it
    plots ``metric``'s median over seeds with the min-max range, against env steps per seed,
    in place (one output, updated). Outside a notebook it only collects: ``.frame()`` gives
    the points so far."""

    def __init__(self, metric: str = "episode_return_mean", title: str = ""):
        self.metric, self.title = metric, title
        self._rows: list[dict] = []
        self._handle = None

    def __call__(self, record: dict) -> None:
        metrics = record["metrics"]
        steps = np.asarray(metrics["env_steps"])[0]  # [K]: every seed steps alike
        values = np.asarray(metrics[self.metric], dtype=float)  # [seeds, K]
        for k, x in enumerate(steps):
            v = values[:, k][np.isfinite(values[:, k])]
            if v.size:
                self._rows.append({"env_steps": float(x), "median": float(np.median(v)),
                                   "low": float(v.min()), "high": float(v.max())})
        self._draw()

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self._rows, columns=["env_steps", "median", "low", "high"])

    def _draw(self) -> None:
        try:
            from IPython import get_ipython
            from IPython.display import display
        except ImportError:
            return
        if get_ipython() is None or not self._rows:
            return
        from matplotlib.figure import Figure

        fig = Figure(figsize=(6, 3.2), dpi=100)
        ax = fig.subplots()
        f = self.frame()
        ax.plot(f["env_steps"], f["median"], label="median over seeds")
        ax.fill_between(f["env_steps"], f["low"], f["high"], alpha=0.25, label="min-max")
        ax.set_xlabel("env steps per seed")
        ax.set_ylabel(self.metric)
        ax.set_title(self.title or f"{self.metric} so far")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        if self._handle is None:
            self._handle = display(fig, display_id=True)
        else:
            self._handle.update(fig)

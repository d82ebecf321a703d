"""A benchmark's figure: one panel per env that ran, each entry's IQM curve over seeds with its
95% CI band in one colour per algorithm (the same in every panel), and each reference as a
horizontal line in its algorithm's colour, every reference of a panel with its own dash style.
Curves are read from the run store: evaluation returns (``final_eval``) or the running mean of
the last 100 training episodes (``train_last100``)."""

from __future__ import annotations

import textwrap
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from jaxrl.measures import LAST_EPISODES, last_episodes_mean
from jaxrl.runs.bench_markdown import _fmt
from jaxrl.runs.plots import curve_band
from jaxrl.runs.store import RunStore, valid_run_id


def rolling_last_episodes(means: np.ndarray, counts: np.ndarray,
                          n: int = LAST_EPISODES) -> np.ndarray:
    """``[U]``: at every update, the mean return of the last ``n`` episodes so far."""
    return np.array([last_episodes_mean(means[:u + 1], counts[:u + 1], n)
                     for u in range(len(means))])


def entry_curve(store: RunStore, meta: dict, measure: str) -> pd.DataFrame:
    """Columns seed, env_steps, value: evaluation returns (``final_eval``) or the running mean
    of the last 100 training episodes (``train_last100``)."""
    folder = Path(store.root) / valid_run_id(meta["run_id"])
    if measure == "final_eval" and not (folder / "evaluations.parquet").is_file():
        return pd.DataFrame(columns=["seed", "env_steps", "value"])  # still running, or failed
    try:
        if measure == "final_eval":
            frame = pd.read_parquet(folder / "evaluations.parquet")
            return frame.rename(columns={"eval_return": "value"})[["seed", "env_steps", "value"]]
        files = sorted((folder / "metrics").glob("chunk-*.parquet"))
        frame = pd.concat([pd.read_parquet(f, columns=["seed", "update", "env_steps",
                                                       "episode_return_mean", "episode_count"])
                           for f in files])
    except (OSError, ValueError, KeyError) as err:  # a damaged file costs this curve only
        warnings.warn(f"no curve for run {meta['run_id']}: {err}", stacklevel=2)
        return pd.DataFrame(columns=["seed", "env_steps", "value"])
    parts = []
    for seed, rows in frame.sort_values("update").groupby("seed"):
        value = rolling_last_episodes(rows["episode_return_mean"].to_numpy(float),
                                      rows["episode_count"].to_numpy(float))
        parts.append(pd.DataFrame({"seed": seed, "env_steps": rows["env_steps"].to_numpy(),
                                   "value": value}))
    return pd.concat(parts) if parts else pd.DataFrame(columns=["seed", "env_steps", "value"])


MIN_BAND_SEEDS = 3  # fewer seeds get their IQM line alone: no band called a CI


def _curve_label(name: str, seeds: int, status: str | None) -> str:
    """``ppo (n=8)``; a run that did not finish says so: ``ppo (n=8, interrupted)``."""
    state = "" if status in (None, "finished") else f", {status}"
    return f"{name} (n={seeds}{state})"


def _draw_interval(ax, c: pd.DataFrame, colour: str) -> None:
    """A curve's CI (``c``: env_steps, center, low, high) as a band, with error bars where
    there are only a few evaluations (a band needs a line)."""
    if len(c) < 12:
        x, y = c["env_steps"].to_numpy(float), c["center"].to_numpy(float)
        below = y - c["low"].to_numpy(float)
        ax.errorbar(x, y, yerr=np.stack([below, c["high"].to_numpy(float) - y]), fmt="none",
                    capsize=3, color=colour, lw=1)
    ax.fill_between(c["env_steps"], c["low"], c["high"], alpha=0.2, color=colour, lw=0)


REFERENCE_DASHES = ["--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)), (0, (8, 3)), (0, (1, 3))]


def _label(row: dict) -> str:
    """What a curve is called: the entry's name before its env (``ppo-3M``), else its algo."""
    head = str(row["entry"]).split("/")[0]
    return head if head and head != row["env"] else str(row["algo"])


def _short_steps(steps) -> str:
    """``4.1k``, ``100k``, ``10M`` steps."""
    x = float(steps)
    for size, unit in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= size:
            return f"{x / size:.3g}{unit}"
    return f"{x:.0f}"


def _steps_unit(rows: list[dict]) -> str:
    """The x axis counts agent steps (one action per env per step); under a frame skip
    (Atari's 4) that is not frames, and the label says so."""
    skips = {int(r.get("frames_per_step") or 1) for r in rows}
    if skips == {1}:
        return "env steps per seed"
    return "agent steps per seed (" + ", ".join(f"x{k} = frames" for k in sorted(skips - {1})) + ")"


def plot(store: RunStore, runs: dict[str, dict], report: dict, path: Path) -> None:
    """One panel per env that ran: each entry's IQM curve with its 95% CI band, in one colour per
    algorithm (the same in every panel), and its reference as a horizontal line in that colour,
    each reference of a panel with its own dash style; every line once in the panel's legend.
    A smoke run's figure draws no references (nothing is compared). ``runs``: ``{entry name:
    run.json}`` (`bench_report.bench_runs`)."""
    from matplotlib.figure import Figure

    smoke = report.get("budget_scale", 1.0) != 1.0
    envs = list(dict.fromkeys(r["env"] for r in report["entries"]))
    ran = [env for env in envs if any(r["env"] == env and r["entry"] in runs
                                      for r in report["entries"])]
    envs = ran or envs  # panels of references alone say nothing: only envs that ran
    labels = list(dict.fromkeys(_label(r) for r in report["entries"]))
    palette = [f"C{i}" for i in range(10)] + ["#8c564b", "#17becf", "#bcbd22", "#393b79"]
    colour = {name: palette[i % len(palette)] for i, name in enumerate(labels)}
    cols = min(3, len(envs))
    rows_n = -(-len(envs) // cols)
    fig = Figure(figsize=(5.2 * cols, 3.8 * rows_n + 0.6), dpi=100)
    axes = np.atleast_1d(fig.subplots(rows_n, cols)).ravel()
    for ax, env in zip(axes, envs):
        panel = [r for r in report["entries"] if r["env"] == env]
        panel = [r for r in panel if r["entry"] in runs] or panel  # no lines of entries not run
        dashes = iter(REFERENCE_DASHES * 4)
        for row in panel:
            name, meta = _label(row), runs.get(row["entry"])
            if meta is not None:
                c = curve_band(entry_curve(store, meta, row["measure"]), "value", reps=300)
                if not c.empty:
                    seeds = int(c["n"].max())
                    ax.plot(c["env_steps"], c["center"], color=colour[name], lw=1.6,
                            marker="o" if len(c) < 12 else None, ms=4,  # a few evaluations
                            label=_curve_label(name, seeds, meta.get("status")))
                    if seeds >= MIN_BAND_SEEDS:  # a "CI" of 2 seeds is their range: none
                        _draw_interval(ax, c, colour[name])
            if row["reference"] is not None and not smoke:
                budget = row.get("reference_budget")
                at = f" at {_short_steps(budget)}" if budget is not None else ""
                ax.axhline(row["reference"], ls=next(dashes), lw=1.2, color=colour[name],
                           label=f"{name} reference {_fmt(row['reference'])}{at}")
        ax.set_title(textwrap.shorten(env, 40, placeholder="…"), fontsize=10)
        ax.set_xlabel(_steps_unit(panel), fontsize=8)
        ax.set_ylabel(f"return (IQM; 95% CI from {MIN_BAND_SEEDS} seeds)", fontsize=8)
        ax.set_xlim(left=0)
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=6.5)
    for ax in axes[len(envs):]:
        ax.set_visible(False)
    title = f"{report['title']} ({report['bench_id']})" + (
        f", budget x{report['budget_scale']:g}: a smoke run" if smoke else "")
    width = max(40, int(5.2 * cols * 12))  # characters that fit the figure at 11 pt
    fig.suptitle("\n".join(textwrap.wrap(title, width)), fontsize=11)
    fig.tight_layout()
    fig.savefig(path)

"""A benchmark's figure, drawn from its report alone (``results.json``), so a committed report
can always be redrawn: one panel per env with something to draw, each entry's IQM curve over
seeds with its 95% CI band (from `MIN_BAND_SEEDS` seeds) in one colour per algorithm (the same in
every panel), and each reference as a horizontal line in its algorithm's colour, every reference
of a panel with its own dash style and its value in the legend, and an entry's random-policy
floor (``floor``) as a grey dotted line; each legend sits under its panel, so that it covers no
data.

A row's curve (``row["curve"]``, `curve_record`) is read from the run store when the report is
written: evaluation returns (``final_eval``) or the running mean of the last 100 training
episodes (``train_last100``), per seed, thinned to `CURVE_POINTS`. A row written before reports
kept curves (its store was not kept) is drawn as its per-seed final values at the steps it ran.
`figure_spec` is what a figure shows, as data: the rules a committed figure must keep are
checked on it, and its digest is written into the PNG (`figure_digest`, `png_digest`)."""

from __future__ import annotations

import hashlib
import json
import struct
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from jaxrl import stats
from jaxrl.measures import LAST_EPISODES, last_episodes_mean
from jaxrl.runs.integrity import chunk_files
from jaxrl.runs.plots import curve_band
from jaxrl.runs.store import RunStore, valid_run_id
from jaxrl.studies.bench.markdown import _fmt

CURVE_POINTS = 120  # a stored curve keeps at most this many steps, always the last
MIN_BAND_SEEDS = 3  # fewer seeds get their IQM line alone: no band called a CI
DIGEST_KEY = "jaxrl-figure"  # the PNG text chunk that carries `figure_digest`
REFERENCE_DASHES = ["--", ":", "-.", (0, (5, 1, 1, 1, 1, 1)), (0, (8, 3)), (0, (1, 3))]
PALETTE = [f"C{i}" for i in range(10)] + ["#8c564b", "#17becf", "#bcbd22", "#393b79"]


# -- curves from the store ----------------------------------------------------------------------
def rolling_last_episodes(means: np.ndarray, counts: np.ndarray,
                          n: int = LAST_EPISODES) -> np.ndarray:
    """``[U]``: at every update, the mean return of the last ``n`` episodes so far."""
    return np.array([last_episodes_mean(means[:u + 1], counts[:u + 1], n)
                     for u in range(len(means))])


def entry_curve(store: RunStore, meta: dict, measure: str) -> pd.DataFrame:
    """Columns seed, env_steps, value: evaluation returns (``final_eval``) or the running mean
    of the last 100 training episodes (``train_last100``)."""
    empty = pd.DataFrame(columns=["seed", "env_steps", "value"])
    folder = Path(store.root) / valid_run_id(meta["run_id"])
    if measure == "final_eval" and not (folder / "evaluations.parquet").is_file():
        return empty  # still running, or failed
    try:
        if measure == "final_eval":
            frame = pd.read_parquet(folder / "evaluations.parquet")
            return frame.rename(columns={"eval_return": "value"})[["seed", "env_steps", "value"]]
        files = chunk_files(folder)
        frame = pd.concat([pd.read_parquet(f, columns=["seed", "update", "env_steps",
                                                       "episode_return_mean", "episode_count"])
                           for f in files])
    except (OSError, ValueError, KeyError) as err:  # a damaged file costs this curve only
        warnings.warn(f"no curve for run {meta['run_id']}: {err}", stacklevel=2)
        return empty
    parts = []
    for seed, rows in frame.sort_values("update").groupby("seed"):
        value = rolling_last_episodes(rows["episode_return_mean"].to_numpy(float),
                                      rows["episode_count"].to_numpy(float))
        parts.append(pd.DataFrame({"seed": seed, "env_steps": rows["env_steps"].to_numpy(),
                                   "value": value}))
    return pd.concat(parts) if parts else empty


def curve_record(frame: pd.DataFrame) -> dict | None:
    """A curve as the report keeps it: ``{"env_steps": [K], "seeds": [S], "values": [S][K]}``
    (None for a missing value), at most `CURVE_POINTS` steps, evenly thinned, the last always
    kept; None when there is nothing to keep."""
    if frame.empty:
        return None
    table = frame.pivot_table(index="env_steps", columns="seed", values="value",
                              aggfunc="mean").sort_index()
    if table.empty:  # no value at any step (no episode ended in a short run): nothing to draw
        return None
    if len(table) > CURVE_POINTS:
        idx = np.unique(np.linspace(0, len(table) - 1, CURVE_POINTS).round().astype(int))
        table = table.iloc[idx]
    values = [[None if not np.isfinite(v) else float(f"{v:.6g}") for v in table[s].to_numpy(float)]
              for s in table.columns]
    return {"env_steps": [int(x) for x in table.index], "seeds": [int(s) for s in table.columns],
            "values": values}


def curve_frame(curve: dict) -> pd.DataFrame:
    """The long frame (seed, env_steps, value) of a `curve_record`."""
    return pd.DataFrame([{"seed": s, "env_steps": x, "value": np.nan if v is None else v}
                         for s, vs in zip(curve["seeds"], curve["values"])
                         for x, v in zip(curve["env_steps"], vs)])


# -- what the figure shows ----------------------------------------------------------------------
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


def _curve_label(name: str, row: dict, seeds: int, kind: str) -> str:
    """``ppo (n=8)``; a run that did not finish, or stopped short of its budget, says so:
    ``ppo (n=8, interrupted at 1.2M of 2.5M steps)``; final values alone say that too."""
    notes = []
    status = row.get("status")
    ran, asked = row.get("total_steps"), row.get("requested_steps")
    short = ran is not None and asked is not None and float(ran) < 0.99 * float(asked)
    if status not in (None, "finished"):
        notes.append(str(status) + (f" at {_short_steps(ran)} of {_short_steps(asked)} steps"
                                    if short else ""))
    elif short:
        notes.append(f"{_short_steps(ran)} of {_short_steps(asked)} steps")
    if kind == "final":
        notes.append("final values per seed; its curve was not kept")
    return f"{name} (n={seeds}{''.join(', ' + n for n in notes)})"


def _drawable(row: dict) -> str | None:
    """``"curve"`` for a row with a kept curve, ``"final"`` for final values alone, else None
    (a curve of no steps, as reports before `curve_record` left out empty ones kept, is none)."""
    if (row.get("curve") or {}).get("env_steps"):
        return "curve"
    if any(v is not None for v in row.get("per_seed") or []):
        return "final"
    return None


def _floors(rows: list[dict]) -> list[dict]:
    """A panel's random-policy floors (an entry's ``floor``), each value once: ``{"label":
    "random policy 0.02", "value": 0.02}``."""
    values = dict.fromkeys(float(r["floor"]["value"]) for r in rows if r.get("floor"))
    return [{"label": f"random policy {_fmt(v, 3 if abs(v) < 1 else 1)}", "value": v}
            for v in values]


def figure_spec(report: dict) -> dict:
    """What the figure shows, as data: its title and, per panel (an env with something to
    draw), its layout (``curves`` over env steps, or ``strip``: one column per entry where no
    entry kept a curve), each line's label, colour, kind (``curve`` or ``final``), seeds and whether it has a
    band, and each reference's label, value, colour and dash. A smoke run draws no references
    (nothing is compared)."""
    smoke = report.get("budget_scale", 1.0) != 1.0
    rows = report["entries"]
    labels = list(dict.fromkeys(_label(r) for r in rows if _drawable(r)))  # colours: drawn only
    colour = {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(labels)}
    panels = []
    for env in dict.fromkeys(r["env"] for r in rows):
        drawn = [r for r in rows if r["env"] == env and _drawable(r)]
        if not drawn:
            continue  # a panel of references alone says nothing
        lines, refs = [], []
        dashes = iter(REFERENCE_DASHES * 4)
        for row in drawn:
            name, kind = _label(row), _drawable(row)
            seeds = (len(row["curve"]["seeds"]) if kind == "curve"
                     else sum(v is not None for v in row["per_seed"]))
            lines.append({"entry": row["entry"], "label": _curve_label(name, row, seeds, kind),
                          "colour": colour[name], "kind": kind, "seeds": seeds,
                          "band": kind == "curve" and seeds >= MIN_BAND_SEEDS})
            if row.get("reference") is not None and not smoke:
                budget = row.get("reference_budget")
                at = f" at {_short_steps(budget)}" if budget is not None else ""
                refs.append({"entry": row["entry"],
                             "label": f"{name} reference {_fmt(row['reference'])}{at}",
                             "value": float(row["reference"]), "colour": colour[name],
                             "dash": next(dashes)})
        strip = all(ln["kind"] == "final" for ln in lines)
        panels.append({"env": env, "layout": "strip" if strip else "curves",
                       "x_label": ("final values per seed, at the steps each entry ran" if strip
                                   else _steps_unit(drawn)),
                       "lines": lines, "references": refs, "floors": _floors(drawn)})
    title = f"{report['title']} ({report['bench_id']})" + (
        f", budget x{report['budget_scale']:g}: a smoke run" if smoke else "")
    drawn = [r for r in rows if _drawable(r)]
    if any(r.get("status") not in (None, "finished") for r in drawn):
        title += "; runs that did not finish are marked in the legends"
    return {"title": title, "panels": panels}


def figure_digest(report: dict) -> str:
    """A digest of the figure `plot` draws from ``report``: its spec and every curve's data."""
    curves = {r["entry"]: (r.get("curve"), r.get("per_seed"), r.get("total_steps"))
              for r in report["entries"] if _drawable(r)}
    blob = json.dumps([figure_spec(report), curves], sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def png_digest(path: str | Path) -> str | None:
    """The `figure_digest` a PNG written by `plot` carries (its ``tEXt`` chunk), else None."""
    data = Path(path).read_bytes()
    at = 8  # after the signature
    while at + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        if kind == b"tEXt":
            key, _, value = data[at + 8:at + 8 + length].partition(b"\0")
            if key.decode("latin-1") == DIGEST_KEY:
                return value.decode("latin-1")
        if kind == b"IEND":
            break
        at += 12 + length
    return None


# -- drawing ------------------------------------------------------------------------------------
def _draw_interval(ax, c: pd.DataFrame, colour: str) -> None:
    """A curve's CI (``c``: env_steps, center, low, high) as a band, with error bars where
    there are only a few evaluations (a band needs a line)."""
    if len(c) < 12:
        x, y = c["env_steps"].to_numpy(float), c["center"].to_numpy(float)
        below = y - c["low"].to_numpy(float)
        ax.errorbar(x, y, yerr=np.stack([below, c["high"].to_numpy(float) - y]), fmt="none",
                    capsize=3, color=colour, lw=1)
    ax.fill_between(c["env_steps"], c["low"], c["high"], alpha=0.2, color=colour, lw=0)


def _draw_line(ax, line: dict, row: dict, slot: float = 0.0) -> None:
    """One entry: its IQM curve (band where `line["band"]`), or its per-seed final values as
    crosses at the steps it ran with their IQM as a bar, moved sideways by ``slot`` (a share of
    the steps) so that the final values of a panel's entries stand apart."""
    colour = line["colour"]
    if line["kind"] == "final":
        values = np.array([v for v in row["per_seed"] if v is not None], float)
        x = float(row["total_steps"]) * (1.0 + slot)
        spread = 0.004 * float(row["total_steps"]) * np.linspace(-1, 1, values.size)
        ax.scatter(x + spread, values, color=colour, marker="x", s=22, label=line["label"],
                   zorder=3)
        ax.hlines(stats.iqm(values), x - 0.012 * x, x + 0.012 * x, color=colour, lw=2.2)
        return
    c = curve_band(curve_frame(row["curve"]), "value", reps=300)
    ax.plot(c["env_steps"], c["center"], color=colour, lw=1.6,
            marker="o" if len(c) < 12 else None, ms=4, label=line["label"])
    if line["band"]:
        _draw_interval(ax, c, colour)


def _draw_floors(ax, panel: dict) -> None:
    """The random policy's return across the panel: grey, dotted."""
    for floor in panel.get("floors", []):
        ax.axhline(floor["value"], ls=(0, (1, 2)), lw=1.4, color="0.45", label=floor["label"])


def _draw_curves(ax, panel: dict, rows: dict[str, dict]) -> None:
    """A panel over env steps: curves, the final values of entries that kept none beside them,
    and each reference across the panel."""
    finals = [ln["entry"] for ln in panel["lines"] if ln["kind"] == "final"]
    for line in panel["lines"]:
        k = finals.index(line["entry"]) if line["entry"] in finals else 0
        _draw_line(ax, line, rows[line["entry"]], slot=0.035 * (k - (len(finals) - 1) / 2))
    for ref in panel["references"]:
        ax.axhline(ref["value"], ls=ref["dash"], lw=1.2, color=ref["colour"], label=ref["label"])
    _draw_floors(ax, panel)
    ax.set_xlim(0, 1.08 * max(float(rows[ln["entry"]]["total_steps"]) for ln in panel["lines"]))


def _draw_strip(ax, panel: dict, rows: dict[str, dict]) -> None:
    """A panel of final values alone: one column per entry, its seeds as crosses and their IQM
    as a bar, its reference as a dashed bar across the column."""
    for k, line in enumerate(panel["lines"]):
        values = np.array([v for v in rows[line["entry"]]["per_seed"] if v is not None], float)
        ax.scatter(k + 0.12 * np.linspace(-1, 1, values.size), values, color=line["colour"],
                   marker="x", s=22, label=line["label"], zorder=3)
        ax.plot([k - 0.25, k + 0.25], [stats.iqm(values)] * 2, color=line["colour"], lw=2.2)
    column = {line["entry"]: k for k, line in enumerate(panel["lines"])}
    for ref in panel["references"]:
        k = column[ref["entry"]]
        ax.plot([k - 0.45, k + 0.45], [ref["value"]] * 2, color=ref["colour"], ls=ref["dash"],
                lw=1.2, label=ref["label"])
    _draw_floors(ax, panel)
    ax.set_xticks(range(len(panel["lines"])),
                  [line["label"].split(" (")[0] for line in panel["lines"]], fontsize=7)
    ax.set_xlim(-0.6, len(panel["lines"]) - 0.4)


LEGEND_COLUMNS = 1
LEGEND_ROW_INCHES = 0.13  # a legend row at 6.5 pt, under its panel
LEGEND_DROP_INCHES = 0.42  # from the panel's bottom edge to its legend: clear of the tick
#                            labels, the x label and an axis offset ("1e6") at 7-8 pt


def _legend_rows(panel: dict) -> int:
    """The rows a panel's legend takes under it: its lines and references in `LEGEND_COLUMNS`."""
    items = len(panel["lines"]) + len(panel["references"]) + len(panel.get("floors", []))
    return -(-items // LEGEND_COLUMNS)


def plot(report: dict, path: str | Path) -> None:
    """Draw `figure_spec` of ``report`` from its rows alone (`draw`) and save it to ``path``
    (PNG) with `figure_digest` in the file."""
    draw(report).savefig(path, format="png", metadata={DIGEST_KEY: figure_digest(report)})


def draw(report: dict):
    """The matplotlib ``Figure`` of `figure_spec` of ``report``, drawn from its rows alone. A
    report with nothing to draw gets a figure that says so."""
    from matplotlib.figure import Figure
    from matplotlib.transforms import ScaledTranslation

    spec = figure_spec(report)
    rows = {r["entry"]: r for r in report["entries"]}
    panels = spec["panels"]
    cols = max(1, min(3, len(panels)))
    rows_n = max(1, -(-len(panels) // cols))
    legend_rows = max([_legend_rows(p) for p in panels] or [0])
    fig = Figure(figsize=(5.2 * cols, (3.8 + LEGEND_ROW_INCHES * legend_rows) * rows_n + 0.6),
                 dpi=100)
    axes = np.atleast_1d(fig.subplots(rows_n, cols)).ravel()
    for ax, panel in zip(axes, panels):
        if panel["layout"] == "strip":
            _draw_strip(ax, panel, rows)
        else:
            _draw_curves(ax, panel, rows)
        ax.set_title(textwrap.shorten(panel["env"], 40, placeholder="…"), fontsize=10)
        ax.set_xlabel(panel["x_label"], fontsize=8)
        ax.set_ylabel("return (per seed; bar: their IQM)" if panel["layout"] == "strip"
                      else f"return (IQM; 95% CI at {MIN_BAND_SEEDS}+ seeds)", fontsize=8)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6.5, loc="upper center", bbox_to_anchor=(0.5, 0),
                  bbox_transform=ax.transAxes + ScaledTranslation(0, -LEGEND_DROP_INCHES,
                                                                  fig.dpi_scale_trans),
                  ncol=LEGEND_COLUMNS, frameon=False)  # under the x label: covers no data
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    if not panels:
        fig.text(0.5, 0.5, "no entry has run yet", ha="center", va="center")
    width = max(40, int(5.2 * cols * 12))  # characters that fit the figure at 11 pt
    title = textwrap.wrap(spec["title"], width)
    fig.suptitle("\n".join(title), fontsize=11)
    height = fig.get_size_inches()[1]
    fig.tight_layout(rect=(0, 0, 1, 1 - (0.15 + 0.2 * len(title)) / height))  # title clear
    return fig

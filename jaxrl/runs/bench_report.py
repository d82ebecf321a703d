"""A benchmark's report, rebuilt from the run store: per entry IQM [95% CI] over seeds of the
measure its reference uses, the reference beside it and a verdict; one figure with a panel per
env (every algorithm's IQM curve with its CI band, the reference dashed).

A bench lives in the store as ``benches/<bench_id>/bench.json`` (the manifest: suite, entries,
references, budget scale) plus the runs that carry its ``bench_id``; the report files
(``report.md``, ``results.json``, ``curves.png``) are written next to the manifest. Nothing here
imports the training engine: a report can be rebuilt on any machine that has the store.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import shutil
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from jaxrl import stats
from jaxrl.measures import LAST_EPISODES, MEASURES, last_episodes_mean, per_seed
from jaxrl.runs.plots import curve_band
from jaxrl.runs.report import compile_text, frames_text
from jaxrl.runs.store import (
    RunStore,
    StoreError,
    atomic_write_text,
    json_default,
    valid_run_id,
)

CONFIDENCE = 0.95
BOOTSTRAP_REPS = 2000


def bench_dir(store: RunStore, bench_id: str) -> Path:
    """Where bench ``bench_id`` lives in the store (a name, never a path: `valid_run_id`)."""
    return Path(store.root) / "benches" / valid_run_id(bench_id, "bench id")


def write_manifest(store: RunStore, bench_id: str, manifest: dict) -> None:
    folder = bench_dir(store, bench_id)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "bench.json"
    created = _now()
    if path.is_file():
        with contextlib.suppress(OSError, json.JSONDecodeError):
            created = json.loads(path.read_text()).get("created_at", created)
    atomic_write_text(path, json.dumps({**manifest, "created_at": created}, indent=2,
                                       default=json_default))


def load_manifest(store: RunStore, bench_id: str) -> dict:
    path = bench_dir(store, bench_id) / "bench.json"
    if not path.is_file():
        known = sorted(p.name for p in (Path(store.root) / "benches").glob("*")
                       if (p / "bench.json").is_file())
        raise StoreError(f"no bench {bench_id!r} in {str(store.root)!r}"
                         + (f"; benches: {', '.join(known)}" if known else ""))
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise StoreError(f"bench manifest {str(path)!r} is unreadable ({err})") from None


def spec_key(spec: dict) -> str:
    """A digest of what an entry runs: ``{algo, env, total_steps, seeds, seed, config,
    env_kwargs, eval_episodes}`` (JSON-normalized, so tuples and lists agree)."""
    fields = ("algo", "env", "total_steps", "seeds", "seed", "config", "env_kwargs",
              "eval_episodes")
    normal = json.loads(json.dumps({k: spec.get(k) for k in fields}, default=str))
    normal["algo"] = str(normal["algo"]).lower()
    return hashlib.sha1(json.dumps(normal, sort_keys=True).encode()).hexdigest()[:12]


def run_spec_key(meta: dict) -> str | None:
    """`spec_key` of a stored run, from the request its ``group.spec`` recorded."""
    spec = (meta.get("group") or {}).get("spec")
    if not spec or len(spec.get("configs") or []) != 1:
        return None
    return spec_key({**spec, "config": spec["configs"][0]})


def bench_runs(store: RunStore, bench_id: str) -> dict[str, dict]:
    """``{entry name: run.json}``: for each entry of the bench's manifest, the runs launched by
    a bench (any bench) with exactly that entry's request (`spec_key`), the newest finished one
    first, else the newest of any status. So an entry finished once is never trained again,
    even after other entries of its suite changed. A damaged ``run.json`` is skipped with a
    warning."""
    manifest = load_manifest(store, bench_id)
    names: dict[str, list[str]] = {}  # key -> entries (two entries may ask for the same run,
    for e in manifest["entries"]:       # e.g. 1M and 3M budgets scaled down to one update)
        key = e.get("key") or spec_key({**e, "seed": manifest.get("seed", 0)})  # early: no keys
        names.setdefault(key, []).append(e["name"])
    chosen: dict[str, dict] = {}
    for folder in store.run_dirs():
        try:
            meta = store.load(folder.name)
        except StoreError as err:
            warnings.warn(f"skipping run {folder.name}: unreadable run.json ({err})", stacklevel=2)
            continue
        if not meta.get("bench_id") or run_spec_key(meta) not in names:
            continue
        rank = (meta.get("status") == "finished", meta.get("started_at") or "", meta["run_id"])
        for name in names[run_spec_key(meta)]:
            current = chosen.get(name)
            if current is None or rank > (current.get("status") == "finished",
                                          current.get("started_at") or "", current["run_id"]):
                chosen[name] = meta
    return chosen


def finished_entries(store: RunStore, bench_id: str) -> dict[str, str]:
    """``{entry name: run id}`` of the entries this bench has finished."""
    return {name: meta["run_id"] for name, meta in bench_runs(store, bench_id).items()
            if meta.get("status") == "finished"}


# -- the numbers --------------------------------------------------------------------------------
MIN_SEEDS = stats.MIN_SEEDS_FOR_VERDICT
BUDGET_TOLERANCE = 0.05  # a budget within 5% of the reference's (whole updates) is the same
SUITES_DIR = Path(__file__).resolve().parents[2] / "experiments" / "benchmarks"
VERDICTS = ("reference inside CI", "above reference", "below reference")


def budget_share(steps: float, budget: float | None) -> float:
    """The run's requested steps over the reference's budget (1.0 when it has none)."""
    return 1.0 if budget is None or not float(budget) > 0 else float(steps) / float(budget)


def budget_text(share: float | None) -> str:
    """``at 10x its budget`` / ``at 0.25x its budget``; empty within `BUDGET_TOLERANCE` of the
    reference's budget (or with no budget to compare)."""
    if share is None or not np.isfinite(share) or abs(share - 1.0) <= BUDGET_TOLERANCE:
        return ""
    return f"at {share:.2g}x its budget"


def verdict(reference: float, low: float, high: float, share: float = 1.0) -> str:
    """Where the reference lies against our interval of the mean, and the budget ratio when
    ours differs from the reference's by more than 5% either way (a run at 10x the
    reference's budget is no more like-for-like than one at a quarter of it)."""
    if not np.isfinite(low) or not np.isfinite(high):
        return "no result"
    if low > reference:
        where = "above reference"
    elif high < reference:
        where = "below reference"
    else:
        where = "reference inside CI"
    flag = budget_text(share)
    return f"{where} {flag}" if flag else where


def _wall_seconds(meta: dict) -> float | None:
    try:
        start = _dt.datetime.fromisoformat(meta["started_at"])
        end = _dt.datetime.fromisoformat(meta["ended_at"])
    except (KeyError, TypeError, ValueError):
        return None
    return (end - start).total_seconds()


def judge(row: dict, smoke: bool = False) -> dict:
    """Fill a row's numbers from its ``per_seed`` values and reference: IQM with its percentile
    bootstrap CI (descriptive), the mean with its bootstrap-t interval (the verdict's), the
    budget share, and the verdict. No verdict on a smoke run, nor below `MIN_SEEDS` finite
    per-seed values ("too few seeds for a verdict"): at 2 to 7 seeds no interval carries one
    (see `stats.bootstrap_t_ci`)."""
    values = np.array([np.nan if v is None else float(v) for v in row.get("per_seed") or []])
    finite = values[np.isfinite(values)]
    row.update(n_finite=int(finite.size), iqm=None, ci_low=None, ci_high=None, mean=None,
               mean_ci_low=None, mean_ci_high=None)
    row["budget_share"] = (None if row.get("reference_budget") is None
                           else budget_share(row["requested_steps"], row["reference_budget"]))
    if row.get("run_id") is None:
        row["verdict"] = "not run"
        return row
    if finite.size:
        summary = stats.summarize(finite, confidence=CONFIDENCE, reps=BOOTSTRAP_REPS)
        row.update(iqm=summary["iqm"], ci_low=summary["iqm_ci_low"],
                   ci_high=summary["iqm_ci_high"], mean=summary["mean"])
    if finite.size >= 2:
        low, high = stats.bootstrap_t_ci(finite, CONFIDENCE, BOOTSTRAP_REPS)
        row.update(mean_ci_low=low, mean_ci_high=high)
    if not finite.size:
        row["verdict"] = "no result"
    elif smoke:
        row["verdict"] = "smoke run: no verdict"
    elif row.get("reference") is None:
        row["verdict"] = "no reference"
    elif finite.size < MIN_SEEDS:
        row["verdict"] = f"too few seeds for a verdict ({finite.size} of {MIN_SEEDS})"
    else:
        row["verdict"] = verdict(row["reference"], row["mean_ci_low"], row["mean_ci_high"],
                                 row["budget_share"] if row["budget_share"] is not None else 1.0)
    if row.get("status") != "finished":
        row["verdict"] = f"{row.get('status')}: {row['verdict']}"
    return row


def entry_result(entry: dict, meta: dict | None, smoke: bool = False) -> dict:
    """One entry's row: its measure per seed, IQM [CI], mean [CI], the reference, verdict,
    timings, and what the entry asked to run (config, env kwargs, evaluation episodes)."""
    reference = entry.get("reference") or {}
    measure = reference.get("measure", "final_eval")
    row = {"entry": entry["name"], "algo": entry["algo"], "env": entry["env"],
           "total_steps": entry["total_steps"], "seeds": entry["seeds"], "measure": measure,
           "reference": reference.get("value"), "reference_source": reference.get("source"),
           "reference_budget": reference.get("budget"), "reference_note": reference.get("note"),
           "reference_budget_at_run": entry.get("reference_budget_at_run",
                                                reference.get("budget")),
           "status": "not run", "run_id": None, "per_seed": [], "wall_seconds": None,
           "compile_seconds": None, "compile_source": None, "run_seconds": None,
           "env_steps_per_second": None, "devices": None, "device_kind": None,
           "git_commit": None, "git_dirty": None, "requested_steps": entry["total_steps"],
           "frames_per_step": 1, "config": entry.get("config"),
           "env_kwargs": entry.get("env_kwargs"), "eval_episodes": entry.get("eval_episodes")}
    if meta is not None:
        values = per_seed(meta, measure)
        row.update(status=meta.get("status"), run_id=meta["run_id"],
                   per_seed=[None if not np.isfinite(v) else float(v) for v in values],
                   wall_seconds=_wall_seconds(meta), compile_seconds=meta.get("compile_seconds"),
                   compile_source=meta.get("compile_source", "compiled"),
                   run_seconds=meta.get("run_seconds"),
                   env_steps_per_second=meta.get("env_steps_per_second"),
                   devices=meta.get("devices"), device_kind=meta.get("device_kind"),
                   git_commit=meta.get("git_commit"), git_dirty=meta.get("git_dirty"),
                   total_steps=meta.get("total_steps_per_seed", entry["total_steps"]),
                   frames_per_step=int(meta.get("frames_per_step") or 1))
    return judge(row, smoke)


def _suite_file(suite: str | None, suite_path: str | None, by_name: bool = False) -> Path | None:
    named = str(SUITES_DIR / f"{suite}.yaml") if suite else None
    for candidate in ((named, suite_path) if by_name else (suite_path, named)):
        if candidate and Path(candidate).is_file():
            return Path(candidate)
    return None


def suite_entries(suite: str | None, suite_path: str | None = None,
                  by_name: bool = False) -> dict[str, dict] | None:
    """``{entry name: entry}`` of the suite file as it is today (by path, else by name under
    ``experiments/benchmarks/``; ``by_name``: the other way round, for a results file that
    may come from another machine), with the suite's defaults for seeds and evaluation
    episodes filled in (as `jaxrl.benchmarks.load_suite` does); None if there is no readable
    file."""
    path = _suite_file(suite, suite_path, by_name)
    if path is None:
        return None
    try:
        raw = yaml.safe_load(path.read_text())
        out = {}
        for e in raw["entries"]:
            if not isinstance(e, dict):
                continue
            name = str(e.get("name") or f"{str(e['algo']).lower()}/{e['env']}")
            out[name] = {**e, "name": name, "seeds": e.get("seeds", raw.get("seeds", 4)),
                         "eval_episodes": e.get("eval_episodes", raw.get("eval_episodes", 16)),
                         "config": e.get("config") or {}, "env_kwargs": e.get("env_kwargs")}
        return out
    except (OSError, TypeError, KeyError, AttributeError, yaml.YAMLError):
        return None


def current_references(manifest: dict) -> dict[str, dict]:
    """``{entry name: reference}`` from the suite file the bench came from, if it is still
    there and readable: a reference corrected after the runs (its source, its value) shows in
    a rebuilt report. The bench id does not depend on references, so the runs stay valid."""
    entries = suite_entries(manifest.get("suite"), manifest.get("suite_path")) or {}
    return {name: e["reference"] for name, e in entries.items()
            if isinstance(e.get("reference"), dict)}


def _same(a, b) -> bool:
    normal = lambda x: json.dumps(x if x is not None else {}, sort_keys=True, default=str)
    return normal(a) == normal(b)


def stale_reasons(rows: list[dict], suite: dict[str, dict] | None, budget_scale: float) -> list[str]:
    """Why a report no longer shows what its suite file asks for today; empty when it does.

    "Stale" is checked entry by entry, for the entries that ran, against today's suite file:
    the entry is gone from it; its budget changed (the run's requested steps are not the
    suite's ``total_steps`` times the bench's budget scale; at a scale below 1 a budget raised
    to one update is accepted); at full scale, its seeds changed; its config overrides, env
    kwargs or evaluation episodes changed (where the report recorded them); or the reference
    budget the runs were made against differs from the suite's reference budget now. Not
    checked: the presets (algorithm defaults) behind the overrides, which only the engine
    knows."""
    if suite is None:
        return ["its suite file is gone or unreadable, so nothing here can be checked"]
    reasons = []
    for r in rows:
        if r.get("run_id") is None:
            continue
        name = r["entry"]
        now = suite.get(name)
        if now is None:
            reasons.append(f"{name}: no longer in the suite")
            continue
        want = float(now["total_steps"]) * float(budget_scale)
        asked = float(r["requested_steps"])
        if r.get("requested_steps_recorded", True) is False:  # the steps run: whole updates
            changed = abs(asked / want - 1.0) > BUDGET_TOLERANCE
        else:
            changed = asked != round(want) if budget_scale == 1.0 else asked < round(want)
        if changed:
            reasons.append(f"{name}: ran {asked:,.0f} steps per seed; the suite now asks for "
                           f"{want:,.0f}")
        if budget_scale == 1.0 and int(r["seeds"]) != int(now["seeds"]):
            reasons.append(f"{name}: ran {r['seeds']} seeds; the suite now asks for "
                           f"{now['seeds']}")
        for key in ("config", "env_kwargs", "eval_episodes"):
            if key in r and r[key] is not None and not _same(r[key], now.get(key)):
                reasons.append(f"{name}: its {key} is not the suite's now ({r[key]} vs "
                               f"{now.get(key)})")
        then = r.get("reference_budget_at_run")
        ref_now = (now.get("reference") or {}).get("budget")
        if then is not None and ref_now is not None and float(then) != float(ref_now):
            reasons.append(f"{name}: the reference budget was {float(then):,.0f} steps when it "
                           f"ran; the suite's reference now says {float(ref_now):,.0f}")
    return reasons


def _summary_fields(rows: list[dict]) -> dict:
    ran = [r for r in rows if r["run_id"]]
    return {"devices": sorted({f"{r['devices']} ({r['device_kind']})" for r in ran
                               if r["devices"]}),  # a run still going has written none yet
            "git_commits": sorted({r["git_commit"] for r in ran if r["git_commit"]}),
            "git_dirty": any(r["git_dirty"] for r in ran)}


def results(store: RunStore, bench_id: str) -> dict:
    """Everything the report shows, as one JSON-able dict."""
    manifest = load_manifest(store, bench_id)
    runs = bench_runs(store, bench_id)
    fresh = current_references(manifest)
    scale = float(manifest.get("budget_scale", 1.0))
    entries = [{**e, "reference": fresh.get(e["name"], e.get("reference")),
                "reference_budget_at_run": (e.get("reference") or {}).get("budget")}
               for e in manifest["entries"]]
    rows = [entry_result(e, runs.get(e["name"]), smoke=scale != 1.0) for e in entries]
    suite = suite_entries(manifest.get("suite"), manifest.get("suite_path"))
    return {"bench_id": bench_id, "suite": manifest.get("suite"),
            "suite_path": manifest.get("suite_path"), "title": manifest.get("title"),
            "note": manifest.get("note"), "budget_scale": scale,
            "created_at": manifest.get("created_at"), "report_written_at": _now(),
            "source": "store", **_summary_fields(rows),
            "stale": stale_reasons(rows, suite, scale),
            "confidence": CONFIDENCE, "bootstrap_reps": BOOTSTRAP_REPS,
            "verdict_method": stats.verdict_method(CONFIDENCE, BOOTSTRAP_REPS),
            "entries": rows}


def results_from_json(path: str | Path) -> dict:
    """A report rebuilt from a committed ``results.json`` alone (its run store was not kept):
    the per-seed values as recorded, judged by today's rules against today's references from
    the suite file, and checked for staleness (`stale_reasons`). The figure cannot be redrawn
    without the store; the report says so. Rows written before the report recorded the frame
    skip get Atari's 4."""
    path = Path(path)
    try:
        old = json.loads(path.read_text())
        old_rows = old["entries"]
    except (OSError, json.JSONDecodeError, KeyError, TypeError) as err:
        raise StoreError(f"{str(path)!r} is not a bench results.json ({err})") from None
    scale = float(old.get("budget_scale", 1.0))
    suite = suite_entries(old.get("suite"), old.get("suite_path"), by_name=True)
    rows = []
    for r in old_rows:
        now = (suite or {}).get(r["entry"]) or {}
        ref = now.get("reference") if isinstance(now.get("reference"), dict) else None
        row = {**r, "reference_budget_at_run": r.get("reference_budget_at_run",
                                                     r.get("reference_budget"))}
        if ref is not None:
            row.update(reference=float(ref["value"]), reference_source=ref.get("source"),
                       reference_budget=ref.get("budget"), reference_note=ref.get("note"),
                       measure=ref.get("measure", row.get("measure")))
        if "requested_steps" not in r:  # written before it was recorded: the steps run
            row.update(requested_steps=r["total_steps"], requested_steps_recorded=False)
        if "frames_per_step" not in r:
            row["frames_per_step"] = 4 if str(r["env"]).startswith("atari:") else 1
        rows.append(judge(row, smoke=scale != 1.0))
    keep = {k: old.get(k) for k in ("bench_id", "suite", "suite_path", "title", "note",
                                    "created_at",
                                    "devices", "git_commits", "git_dirty")}
    return {**keep, "budget_scale": scale, "report_written_at": _now(),
            "source": "results.json",
            "first_written_at": old.get("first_written_at", old.get("report_written_at")),
            "stale": stale_reasons(rows, suite, scale),
            "confidence": CONFIDENCE, "bootstrap_reps": BOOTSTRAP_REPS,
            "verdict_method": stats.verdict_method(CONFIDENCE, BOOTSTRAP_REPS),
            "entries": rows}


def entry_table(store: RunStore, bench_id: str) -> pd.DataFrame:
    cols = ["entry", "seeds", "total_steps", "measure", "iqm", "ci_low", "ci_high",
            "reference", "verdict", "wall_seconds", "compile_seconds", "env_steps_per_second",
            "devices", "status", "run_id"]
    return pd.DataFrame([{c: r[c] for c in cols} for r in results(store, bench_id)["entries"]],
                        columns=cols)


# -- curves -------------------------------------------------------------------------------------
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


def plot(store: RunStore, bench_id: str, report: dict, path: Path) -> None:
    """One panel per env that ran: each entry's IQM curve with its 95% CI band, in one colour per
    algorithm (the same in every panel), and its reference as a horizontal line in that colour,
    each reference of a panel with its own dash style; every line once in the panel's legend.
    A smoke run's figure draws no references (nothing is compared)."""
    from matplotlib.figure import Figure

    runs = bench_runs(store, bench_id)
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
        dashes = iter(REFERENCE_DASHES * 4)
        for row in panel:
            name, meta = _label(row), runs.get(row["entry"])
            if meta is not None:
                c = curve_band(entry_curve(store, meta, row["measure"]), "value", reps=300)
                if not c.empty:
                    ax.plot(c["env_steps"], c["center"], color=colour[name], lw=1.6,
                            label=f"{name} (n={int(c['n'].max())})")
                    ax.fill_between(c["env_steps"], c["low"], c["high"], alpha=0.2,
                                    color=colour[name], lw=0)
            if row["reference"] is not None and not smoke:
                budget = row.get("reference_budget")
                at = f" at {_short_steps(budget)}" if budget is not None else ""
                ax.axhline(row["reference"], ls=next(dashes), lw=1.2, color=colour[name],
                           label=f"{name} reference {_fmt(row['reference'])}{at}")
        ax.set_title(textwrap.shorten(env, 40, placeholder="…"), fontsize=10)
        ax.set_xlabel(_steps_unit(panel), fontsize=8)
        ax.set_ylabel("return (IQM, 95% CI)", fontsize=8)
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


# -- the report ---------------------------------------------------------------------------------
def _fmt(x, digits: int = 1) -> str:
    if x is None or (isinstance(x, float) and not np.isfinite(x)):
        return "–"
    return f"{0.0 if round(x, digits) == 0 else x:,.{digits}f}"  # no "-0.0"


def _ours(r: dict) -> tuple[str, str]:
    """The table's two cells of our numbers: mean [bootstrap-t CI] and IQM [bootstrap CI]; with
    fewer than `MIN_SEEDS` finite seeds, the per-seed values and the plain IQM instead."""
    if r.get("iqm") is None:
        return "–", "–"
    if r.get("n_finite", 0) < MIN_SEEDS:
        values = ", ".join(_fmt(v) for v in r["per_seed"])
        return f"per seed: {values}", _fmt(r["iqm"])
    return (f"{_fmt(r['mean'])} [{_fmt(r['mean_ci_low'])}, {_fmt(r['mean_ci_high'])}]",
            f"{_fmt(r['iqm'])} [{_fmt(r['ci_low'])}, {_fmt(r['ci_high'])}]")


def banner(report: dict) -> list[str]:
    """Lines under the title of a report that is not, or cannot be, rebuilt from its runs."""
    lines = []
    if report.get("source") == "results.json":
        lines += [f"> Re-rendered on {report['report_written_at'][:10]} from this folder's "
                  "`results.json` (first written "
                  f"{(report.get('first_written_at') or '?')[:10]}) by `jaxrl runs bench "
                  "--from-results`: its run store was not committed, so the per-seed values are "
                  "as recorded and judged by today's rules against today's references. "
                  + ("" if any("config" in r for r in report["entries"]) else
                     "It does not record the entries' config overrides, so only their budgets, "
                     "seeds and reference budgets were checked against today's suite. ")
                  + "`curves.png` is the figure drawn when it was first written (it cannot be "
                  "redrawn without the store).", ""]
    if report.get("stale"):
        lines += ["> **Stale: this report no longer matches its suite file** "
                  f"(`experiments/benchmarks/{report.get('suite')}.yaml`), so it is no result "
                  "for that suite as it stands:", ">"]
        lines += [f"> * {reason}" for reason in report["stale"]]
        if report.get("source") == "results.json":
            lines += [">", "> Its figure shows the references, budgets and labels of the day it "
                      "was drawn."]
        lines.append("")
    return lines


def markdown(report: dict) -> str:
    scale = report.get("budget_scale", 1.0)
    smoke = scale != 1.0
    title = report["title"] + (f" (budget x{scale:g}: a smoke run, not a result)" if smoke else "")
    lines = [f"# {title}", "", *banner(report)]
    if report.get("note"):
        lines += [report["note"], ""]
    method = report.get("verdict_method") or stats.verdict_method(report["confidence"],
                                                                  report["bootstrap_reps"])
    lines += [f"Bench `{report['bench_id']}` (suite `{report['suite']}`); devices: "
              f"{', '.join(report['devices']) or '–'}; commit "
              f"{', '.join(c[:10] for c in report['git_commits']) or '–'}"
              + (" (with uncommitted changes: each run's code.diff in the store has them)"
                 if report.get("git_dirty") else "") + "; report written "
              f"{report['report_written_at']}.", "",
              "Ours, of the measure the reference uses ("
              + "; ".join(f"`{k}` = {v}" for k, v in MEASURES.items()) + "): the mean with "
              f"its interval, from which the verdict is read ({method}); and the IQM "
              f"(interquartile mean) with a "
              f"{int(report['confidence'] * 100)}% percentile-bootstrap CI "
              f"({report['bootstrap_reps']} resamples), descriptive only: at a few seeds a "
              "percentile bootstrap is about the range of the seeds. Fewer than "
              f"{MIN_SEEDS} seeds: the per-seed values, and no verdict."
              + (" A smoke run (budget scaled down) gives no verdict." if smoke else
                 " A budget more than 5% away from the reference's is flagged with its ratio."),
              ""]
    if smoke:
        head = ["entry", "steps/seed", "seeds", "measure", "ours: mean [95% CI]",
                "IQM [95% CI]", "reference"]
    else:
        head = ["entry", "steps/seed", "budget vs reference's", "seeds", "measure",
                "ours: mean [95% CI]", "IQM [95% CI]", "reference", "verdict"]
    head += ["wall s", "compile s", "env-steps/s", "devices"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in report["entries"]:
        mean_cell, iqm_cell = _ours(r)
        share = r.get("budget_share")
        steps = f"{r['total_steps']:,}" + frames_text(r['total_steps'], r.get("frames_per_step"))
        cells = [r["entry"], steps]
        if not smoke:
            cells.append("–" if share is None else
                         (f"{share:.2g}x" if budget_text(share) else "same"))
        cells += [str(r["seeds"]), r["measure"], mean_cell, iqm_cell, _fmt(r["reference"])]
        if not smoke:
            cells.append(r["verdict"] + (" (see note)" if r.get("reference_note") and
                                         r["verdict"].startswith(VERDICTS[1:]) else ""))
        cells += [_fmt(r["wall_seconds"], 0), compile_text(r), _fmt(r["env_steps_per_second"], 0),
                  r["devices"] or "–"]
        lines.append("| " + " | ".join(cells) + " |")
    ran = [r for r in report["entries"] if r["run_id"]]
    walls = [r["wall_seconds"] for r in ran if r["wall_seconds"] is not None]
    summary = (f"{len(ran)} of {len(report['entries'])} entries run, {sum(walls) / 60:.1f} min "
               "of wall time in all (compiles included)")
    if not smoke:
        verdicts = [r["verdict"].split(": ")[-1] for r in ran]
        counts = {v: sum(x.startswith(v) for x in verdicts) for v in VERDICTS}
        few = sum(x.startswith("too few seeds") for x in verdicts)
        flagged = [r.get("budget_share") for r in ran if budget_text(r.get("budget_share"))]
        summary += (f"; verdicts: reference inside the CI {counts['reference inside CI']}, "
                    f"above {counts['above reference']}, below {counts['below reference']}; "
                    f"too few seeds for a verdict: {few}; at more than the reference's budget: "
                    f"{sum(s > 1 for s in flagged)}, at less: {sum(s < 1 for s in flagged)}")
    lines += ["", summary + ".", "", "Per seed:", ""]
    for r in report["entries"]:
        if r["per_seed"]:
            values = ", ".join(_fmt(v) for v in r["per_seed"])
            lines.append(f"* {r['entry']} ({r['measure']}): {values} (run `{r['run_id']}`)")
    lines += ["", "References:", ""]
    for r in report["entries"]:
        if r["reference"] is not None:
            budget = (f", at {float(r['reference_budget']):,.0f} env steps"
                      + frames_text(r["reference_budget"], r.get("frames_per_step"))
                      if r.get("reference_budget") is not None else "")
            ratio = budget_text(r.get("budget_share"))
            ratio = f"; ours is {ratio.removeprefix('at ')}" if ratio and not smoke else ""
            note = f" {r['reference_note']}" if r.get("reference_note") else ""
            lines.append(f"* {r['entry']}: {_fmt(r['reference'])} ({r['measure']}{budget}"
                         f"{ratio}): {r['reference_source']}.{note}")
    lines += ["", "![curves](curves.png)", ""]
    return "\n".join(lines)


def write(store: RunStore, bench_id: str, out: str | None = None) -> Path:
    """Write ``report.md``, ``results.json`` and ``curves.png`` for the bench (into its folder
    in the store, and into ``out`` if given). Returns the folder in the store."""
    report = results(store, bench_id)
    folder = bench_dir(store, bench_id)
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_text(folder / "results.json", json.dumps(report, indent=2, default=json_default))
    atomic_write_text(folder / "report.md", markdown(report))
    plot(store, bench_id, report, folder / "curves.png")
    if out is not None:
        target = Path(out)
        target.mkdir(parents=True, exist_ok=True)
        for name in ("report.md", "results.json", "curves.png"):
            shutil.copyfile(folder / name, target / name)
    return folder


def write_from_results(path: str | Path, out: str | None = None) -> Path:
    """Rewrite ``report.md`` and ``results.json`` from a committed ``results.json`` alone
    (`results_from_json`), in its folder or in ``out``; ``curves.png`` is left as it is.
    Returns the folder written."""
    report = results_from_json(path)
    target = Path(out) if out is not None else Path(path).parent
    target.mkdir(parents=True, exist_ok=True)
    atomic_write_text(target / "results.json", json.dumps(report, indent=2, default=json_default))
    atomic_write_text(target / "report.md", markdown(report))
    return target


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")

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
def verdict(reference: float, low: float, high: float, share: float = 1.0) -> str:
    """Where the reference lies against our CI; a run given less than the reference's budget
    (``share`` < 1: a scaled-down bench) says so, since it is then no like-for-like test."""
    if not np.isfinite(low) or not np.isfinite(high):
        return "no result"
    if low > reference:
        where = "above reference"
    elif high < reference:
        where = "below reference"
    else:
        where = "reference inside CI"
    return where if share >= 1.0 else f"{where} at {100 * share:.3g}% of its budget"


def budget_share(steps: float, budget: float | None) -> float:
    """The run's requested steps over the reference's budget (1.0 when it has none)."""
    return 1.0 if budget is None or not float(budget) > 0 else float(steps) / float(budget)


def _wall_seconds(meta: dict) -> float | None:
    try:
        start = _dt.datetime.fromisoformat(meta["started_at"])
        end = _dt.datetime.fromisoformat(meta["ended_at"])
    except (KeyError, TypeError, ValueError):
        return None
    return (end - start).total_seconds()


def entry_result(entry: dict, meta: dict | None) -> dict:
    """One entry's row: its measure per seed, IQM [CI], the reference, verdict, timings."""
    reference = entry.get("reference") or {}
    measure = reference.get("measure", "final_eval")
    row = {"entry": entry["name"], "algo": entry["algo"], "env": entry["env"],
           "total_steps": entry["total_steps"], "seeds": entry["seeds"], "measure": measure,
           "reference": reference.get("value"), "reference_source": reference.get("source"),
           "reference_budget": reference.get("budget"), "reference_note": reference.get("note"),
           "status": "not run", "run_id": None, "per_seed": [], "iqm": None, "ci_low": None,
           "ci_high": None, "mean": None, "verdict": "not run", "wall_seconds": None,
           "compile_seconds": None, "compile_source": None, "run_seconds": None, "env_steps_per_second": None,
           "devices": None, "device_kind": None, "git_commit": None, "git_dirty": None,
           "requested_steps": entry["total_steps"], "frames_per_step": 1}
    if meta is None:
        return row
    values = per_seed(meta, measure)
    finite = values[np.isfinite(values)]
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
    if finite.size:
        summary = stats.summarize(finite, confidence=CONFIDENCE, reps=BOOTSTRAP_REPS)
        row.update(iqm=summary["iqm"], ci_low=summary["iqm_ci_low"],
                   ci_high=summary["iqm_ci_high"], mean=summary["mean"])
        share = budget_share(row["requested_steps"], row["reference_budget"])
        row["verdict"] = ("no reference" if row["reference"] is None
                          else verdict(row["reference"], row["ci_low"], row["ci_high"], share))
    else:
        row["verdict"] = "no result"
    if meta.get("status") != "finished":
        row["verdict"] = f"{meta.get('status')}: {row['verdict']}"
    return row


def current_references(manifest: dict) -> dict[str, dict]:
    """``{entry name: reference}`` from the suite file the bench came from, if it is still
    there and readable: a reference corrected after the runs (its source, its value) shows in
    a rebuilt report. The bench id does not depend on references, so the runs stay valid."""
    try:
        raw = yaml.safe_load(Path(manifest.get("suite_path", "")).read_text())
        entries = raw["entries"]
        return {str(e.get("name") or f"{str(e['algo']).lower()}/{e['env']}"): e["reference"]
                for e in entries if isinstance(e, dict) and isinstance(e.get("reference"), dict)}
    except (OSError, TypeError, KeyError, AttributeError, yaml.YAMLError):
        return {}


def results(store: RunStore, bench_id: str) -> dict:
    """Everything the report shows, as one JSON-able dict."""
    manifest = load_manifest(store, bench_id)
    runs = bench_runs(store, bench_id)
    fresh = current_references(manifest)
    entries = [{**e, "reference": fresh.get(e["name"], e.get("reference"))}
               for e in manifest["entries"]]
    rows = [entry_result(e, runs.get(e["name"])) for e in entries]
    ran = [r for r in rows if r["run_id"]]
    return {"bench_id": bench_id, "suite": manifest.get("suite"), "title": manifest.get("title"),
            "note": manifest.get("note"), "budget_scale": manifest.get("budget_scale", 1.0),
            "created_at": manifest.get("created_at"), "report_written_at": _now(),
            # a run still going has not written its devices yet
            "devices": sorted({f"{r['devices']} ({r['device_kind']})" for r in ran
                               if r["devices"]}),
            "git_commits": sorted({r["git_commit"] for r in ran if r["git_commit"]}),
            "git_dirty": any(r["git_dirty"] for r in ran),
            "confidence": CONFIDENCE, "bootstrap_reps": BOOTSTRAP_REPS, "entries": rows}


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


def plot(store: RunStore, bench_id: str, report: dict, path: Path) -> None:
    """One panel per env: each entry's IQM curve with its 95% CI band, references dashed."""
    from matplotlib.figure import Figure

    runs = bench_runs(store, bench_id)
    envs = list(dict.fromkeys(r["env"] for r in report["entries"]))
    cols = min(3, len(envs))
    rows_n = -(-len(envs) // cols)
    fig = Figure(figsize=(5.2 * cols, 3.6 * rows_n), dpi=100)
    axes = np.atleast_1d(fig.subplots(rows_n, cols)).ravel()
    for ax, env in zip(axes, envs):
        for row in (r for r in report["entries"] if r["env"] == env):
            meta = runs.get(row["entry"])
            line = None
            if meta is not None:
                c = curve_band(entry_curve(store, meta, row["measure"]), "value", reps=300)
                if not c.empty:
                    line, = ax.plot(c["env_steps"], c["center"],
                                    label=f"{row['algo']} (n={int(c['n'].max())})")
                    ax.fill_between(c["env_steps"], c["low"], c["high"], alpha=0.2,
                                    color=line.get_color())
            if row["reference"] is not None:
                ax.axhline(row["reference"], ls="--", lw=1,
                           color=line.get_color() if line is not None else "gray",
                           label=f"{row['algo']} reference")
        ax.set_title(env, fontsize=10)
        ax.set_xlabel("env steps per seed")
        ax.set_ylabel("return (IQM, 95% CI)")
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
    for ax in axes[len(envs):]:
        ax.set_visible(False)
    fig.suptitle(f"{report['title']} ({report['bench_id']})", fontsize=11)
    fig.tight_layout()
    fig.savefig(path)


# -- the report ---------------------------------------------------------------------------------
def _fmt(x, digits: int = 1) -> str:
    if x is None or (isinstance(x, float) and not np.isfinite(x)):
        return "–"
    return f"{0.0 if round(x, digits) == 0 else x:,.{digits}f}"  # no "-0.0"


def markdown(report: dict) -> str:
    scale = report.get("budget_scale", 1.0)
    title = report["title"] + (f" (budget x{scale:g}: a smoke run, not a result)"
                               if scale != 1.0 else "")
    lines = [f"# {title}", ""]
    if report.get("note"):
        lines += [report["note"], ""]
    lines += [f"Bench `{report['bench_id']}` (suite `{report['suite']}`); devices: "
              f"{', '.join(report['devices']) or '–'}; commit "
              f"{', '.join(c[:10] for c in report['git_commits']) or '–'}"
              + (" (with uncommitted changes: each run's code.diff in the store has them)"
                 if report.get("git_dirty") else "") + "; report written "
              f"{report['report_written_at']}.", "",
              f"Ours: IQM over seeds with a {int(report['confidence'] * 100)}% stratified-"
              f"bootstrap CI ({report['bootstrap_reps']} resamples) of the measure the reference "
              "uses: " + "; ".join(f"`{k}` = {v}" for k, v in MEASURES.items()) + ".", "",
              "| entry | steps/seed | seeds | measure | ours: IQM [95% CI] | reference | verdict "
              "| wall s | compile s | env-steps/s | devices |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in report["entries"]:
        ours = (f"{_fmt(r['iqm'])} [{_fmt(r['ci_low'])}, {_fmt(r['ci_high'])}]"
                if r["iqm"] is not None else "–")
        budget = r.get("reference_budget")
        reduced = budget is not None and r["requested_steps"] < float(budget)
        steps = (f"{r['total_steps']:,}" + frames_text(r['total_steps'], r.get("frames_per_step"))
                 + (" (reduced)" if reduced else ""))
        verdict_text = r["verdict"] + (" (see note)" if r.get("reference_note") and
                                       r["verdict"] != "reference inside CI" else "")
        lines.append(f"| {r['entry']} | {steps} | {r['seeds']} | {r['measure']} | {ours} | "
                     f"{_fmt(r['reference'])} | {verdict_text} | {_fmt(r['wall_seconds'], 0)} | "
                     f"{compile_text(r)} | {_fmt(r['env_steps_per_second'], 0)} | "
                     f"{r['devices'] or '–'} |")
    walls = [r["wall_seconds"] for r in report["entries"] if r["wall_seconds"] is not None]
    counts = {v: sum(r["verdict"] == v for r in report["entries"])
              for v in ("reference inside CI", "above reference", "below reference")}
    scaled_down = sum("% of its budget" in r["verdict"] for r in report["entries"])
    lines += ["", f"{len(walls)} of {len(report['entries'])} entries run, {sum(walls) / 60:.1f} "
              f"min of wall time in all (compiles included); reference inside the CI: "
              f"{counts['reference inside CI']}, above: {counts['above reference']}, below: "
              f"{counts['below reference']} (the notes under References say why)"
              + (f"; judged at less than the reference's budget: {scaled_down}"
                 if scaled_down else "") + ".",
              "", "Per seed:", ""]
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
            note = f" {r['reference_note']}" if r.get("reference_note") else ""
            lines.append(f"* {r['entry']}: {_fmt(r['reference'])} ({r['measure']}{budget}): "
                         f"{r['reference_source']}.{note}")
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


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")

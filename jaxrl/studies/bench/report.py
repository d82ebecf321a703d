"""A benchmark's report, rebuilt from the run store: per entry the measure its reference uses,
per seed, with the mean [95% bootstrap-t interval] and the IQM [95% bootstrap CI] over seeds,
the reference, the budget's ratio to the reference's and a verdict (`bench_judge`: none under 8
seeds, none in a smoke run); ``report.md`` (`bench_markdown`) and one figure with a panel per
env that ran (`bench_figure`).

A bench lives in the store as ``benches/<bench_id>/bench.json`` (the manifest: suite, entries,
references, budget scale) plus the runs that carry its ``bench_id``; the report files
(``report.md``, ``results.json``, ``curves.png``) are written next to the manifest. A committed
``results.json`` whose store was not kept is re-rendered by `write_from_results` (``jaxrl runs
bench --from-results``). Nothing here imports the training engine: a report can be rebuilt on
any machine that has the store.
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

from jaxrl.measures import per_seed
from jaxrl.runs.store import (
    RunStore,
    StoreError,
    atomic_write_text,
    json_default,
    valid_run_id,
)
from jaxrl.studies import verdicts
from jaxrl.studies.bench import figure as bench_figure
from jaxrl.studies.bench import split_evidence
from jaxrl.studies.bench.judge import (
    BOOTSTRAP_REPS,
    CONFIDENCE,
    ENTRY_ENGINE_DEFAULTS,
    MIN_SEEDS,
    VERDICTS,
    budget_share,
    budget_text,
    current_references,
    judge,
    stale_reasons,
    suite_entries,
    verdict,
)
from jaxrl.studies.bench.markdown import banner, markdown
from jaxrl.studies.bench.preset_match import without_defaults
from jaxrl.studies.bench.results_file import read_results

__all__ = ["BOOTSTRAP_REPS", "CONFIDENCE", "MIN_SEEDS", "VERDICTS", "banner", "bench_dir",
           "bench_runs", "budget_share", "budget_text", "current_references", "entry_result",
           "entry_table", "finished_entries", "judge", "load_manifest", "markdown", "merged",
           "results", "results_from_json", "spec_key", "stale_reasons", "suite_entries",
           "verdict", "write", "write_from_results", "write_manifest"]


def bench_dir(store: RunStore, bench_id: str) -> Path:
    """Where bench ``bench_id`` lives in the store (a name, never a path: `valid_run_id`)."""
    return Path(store.root) / "benches" / valid_run_id(bench_id, "bench id")


def claim_path(store: RunStore, bench_id: str, key: str) -> Path:
    """The lock file a process holds while it trains the entry of request ``key``
    (`jaxrl.runs.run_lock.claim`)."""
    return bench_dir(store, bench_id) / "claims" / f"{key}.lock"


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
    env_kwargs, eval_episodes}`` (JSON-normalized, so tuples and lists agree; the config
    without the fields at today's defaults, `preset_match.without_defaults`, so a field the config
    classes gain keeps every key), and the engine
    options an entry may set (`ENTRY_ENGINE_DEFAULTS`) where they differ from the defaults:
    read from the config (an entry's) or beside it (a stored run's spec)."""
    fields = ("algo", "env", "total_steps", "seeds", "seed", "config", "env_kwargs",
              "eval_episodes")
    key = {k: spec.get(k) for k in fields}
    engine = {k: spec.get(k, default) for k, default in ENTRY_ENGINE_DEFAULTS.items()}
    if isinstance(key["config"], dict):
        engine.update({k: v for k, v in key["config"].items() if k in engine})
        key["config"] = {k: v for k, v in key["config"].items() if k not in engine}
    if isinstance(key["config"], dict):
        key["config"] = without_defaults(key["algo"], key["env"], key["config"])
    key.update({k: v for k, v in engine.items() if v != ENTRY_ENGINE_DEFAULTS[k]})
    normal = json.loads(json.dumps(key, default=str))
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


# -- the rows -----------------------------------------------------------------------------------
def _wall_seconds(meta: dict) -> float | None:
    try:
        start = _dt.datetime.fromisoformat(meta["started_at"])
        end = _dt.datetime.fromisoformat(meta["ended_at"])
    except (KeyError, TypeError, ValueError):
        return None
    return (end - start).total_seconds()


def added_runs(store: RunStore, run_id: str) -> list[dict]:
    """The finished runs that add seeds to run ``run_id`` (``adds_seeds_to``, written by
    `jaxrl.studies.adaptive`), oldest first."""
    added = []
    for folder in store.run_dirs():
        try:
            meta = store.load(folder.name)
        except StoreError:
            continue  # `bench_runs` has warned about it
        if meta.get("adds_seeds_to") == run_id and meta.get("status") == "finished":
            added.append(meta)
    return sorted(added, key=lambda m: (m.get("started_at") or "", m["run_id"]))


def _joined_curve(store: RunStore, metas: list[dict], measure: str) -> pd.DataFrame:
    """The curves of a run and the runs that add seeds to it, seeds numbered on."""
    parts, offset = [], 0
    for meta in metas:
        frame = bench_figure.entry_curve(store, meta, measure)
        parts.append(frame.assign(seed=frame["seed"].astype(int) + offset))
        offset += int(meta.get("seeds") or (frame["seed"].nunique() if len(frame) else 0))
    return pd.concat(parts) if parts else pd.DataFrame(columns=["seed", "env_steps", "value"])


def entry_result(entry: dict, meta: dict | None, smoke: bool = False,
                 added: list[dict] = ()) -> dict:
    """One entry's row: its measure per seed, IQM [CI], mean [CI], the reference, verdict,
    timings, and what the entry asked to run (config, env kwargs, evaluation episodes). An
    entry with ``seeds: adaptive`` takes the seeds of the runs ``added`` to its run too, and
    its row says how many batches it took (``adaptive``)."""
    reference = entry.get("reference") or {}
    measure = reference.get("measure", "final_eval")
    row = {"entry": entry["name"], "algo": entry["algo"], "env": entry["env"],
           "total_steps": entry["total_steps"], "seeds": entry["seeds"], "measure": measure,
           "reference": reference.get("value"), "reference_source": reference.get("source"),
           "reference_budget": reference.get("budget"), "reference_note": reference.get("note"),
           "reference_uncertainty": reference.get("uncertainty"),
           "reference_budget_at_run": entry.get("reference_budget_at_run",
                                                reference.get("budget")),
           "status": "not run", "run_id": None, "per_seed": [], "wall_seconds": None,
           "compile_seconds": None, "compile_source": None, "run_seconds": None,
           "env_steps_per_second": None, "devices": None, "device_kind": None,
           "git_commit": None, "git_dirty": None, "requested_steps": entry["total_steps"],
           "frames_per_step": 1, "config": entry.get("config"),
           "env_kwargs": entry.get("env_kwargs"), "eval_episodes": entry.get("eval_episodes"),
           "run_config": None, "floor": entry.get("floor")}
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
                   frames_per_step=int(meta.get("frames_per_step") or 1),
                   run_config=meta.get("config"))
    if entry.get("adaptive"):
        values = [v for m in added for v in per_seed(m, measure)]
        row["per_seed"] += [None if not np.isfinite(v) else float(v) for v in values]
        row["seeds"] = len(row["per_seed"]) or entry["seeds"]
        row["adaptive"] = {**entry["adaptive"],
                           "runs": [m["run_id"] for m in ([meta] if meta else []) + list(added)]}
    return judge(row, smoke)


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
    suite = suite_entries(manifest.get("suite"), manifest.get("suite_path"))
    scale = float(manifest.get("budget_scale", 1.0))
    entries = [{**e, "reference": fresh.get(e["name"], e.get("reference")),
                "reference_budget_at_run": (e.get("reference") or {}).get("budget"),
                "floor": ((suite or {}).get(e["name"]) or {}).get("floor", e.get("floor"))}
               for e in manifest["entries"]]
    rows = []
    for e in entries:
        meta = runs.get(e["name"])
        added = added_runs(store, meta["run_id"]) if meta and e.get("adaptive") else []
        row = entry_result(e, meta, smoke=scale != 1.0, added=added)
        row["curve"] = None if meta is None else bench_figure.curve_record(
            _joined_curve(store, [meta, *added], row["measure"]))
        rows.append(row)
    return {"bench_id": bench_id, "suite": manifest.get("suite"),
            "suite_path": manifest.get("suite_path"), "title": manifest.get("title"),
            "note": manifest.get("note"), "budget_scale": scale,
            "created_at": manifest.get("created_at"), "report_written_at": _now(),
            "source": "store", **_summary_fields(rows),
            "stale": stale_reasons(rows, suite, scale),
            "confidence": CONFIDENCE, "bootstrap_reps": BOOTSTRAP_REPS,
            "verdict_method": verdicts.method(CONFIDENCE, BOOTSTRAP_REPS, MIN_SEEDS),
            "entries": rows}


def results_from_json(path: str | Path) -> dict:
    """A report rebuilt from a committed ``results.json`` alone (its run store was not kept):
    the per-seed values as recorded, judged by today's rules against today's references from
    the suite file, and checked for staleness (`stale_reasons`). Its figure is redrawn from the
    curves the rows kept (rows written before reports kept curves draw their final values).
    Rows written before the report recorded the frame skip get Atari's 4. The file is checked
    first (`read_results`): `StoreError`, one line, for one that is not a bench's results."""
    old = read_results(path)
    old_rows = old["entries"]
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
                       reference_uncertainty=ref.get("uncertainty"),
                       measure=ref.get("measure", row.get("measure")))
        if isinstance(now.get("floor"), dict):
            row["floor"] = now["floor"]
        if "requested_steps" not in r:  # written before it was recorded: the steps run
            row.update(requested_steps=r["total_steps"], requested_steps_recorded=False)
        if "frames_per_step" not in r:
            row["frames_per_step"] = 4 if str(r["env"]).startswith("atari:") else 1
        rows.append(judge(row, smoke=scale != 1.0))
    keep = {k: old.get(k) for k in ("bench_id", "suite", "suite_path", "title", "note",
                                    "created_at", "carried_from",
                                    "devices", "git_commits", "git_dirty")}
    return {**keep, "budget_scale": scale, "report_written_at": _now(),
            "source": "results.json",
            "first_written_at": old.get("first_written_at", old.get("report_written_at")),
            "stale": stale_reasons(rows, suite, scale),
            "confidence": CONFIDENCE, "bootstrap_reps": BOOTSTRAP_REPS,
            "verdict_method": verdicts.method(CONFIDENCE, BOOTSTRAP_REPS, MIN_SEEDS),
            "entries": rows}


def entry_table(store: RunStore, bench_id: str, report: dict | None = None) -> pd.DataFrame:
    """One line an entry: the store's rows, or ``report``'s (a written ``results.json``)."""
    cols = ["entry", "seeds", "total_steps", "measure", "per_seed", "n_finite", "mean",
            "mean_ci_low", "mean_ci_high", "iqm", "ci_low", "ci_high", "reference", "verdict",
            "wall_seconds", "compile_seconds", "env_steps_per_second", "devices", "status", "run_id"]
    rows = (report or results(store, bench_id))["entries"]
    return pd.DataFrame([{c: r.get(c) for c in cols} for r in rows], columns=cols)


def merged(report: dict, earlier: dict) -> dict:
    """``report`` with the rows of ``earlier`` (a committed ``results.json`` whose store was not
    kept) for every entry ``report`` has not run and ``earlier`` measured: a bench resumed in a
    new store keeps what the old one measured. A row of ``earlier`` with no finite value (a run
    interrupted before its first result) is not carried: it measured nothing. Each carried row
    names its source (``carried_from``: the earlier bench id); the summary fields count every
    row. A row this store ran keeps ``earlier``'s split evidence (`split_evidence.kept`)."""
    old = {r["entry"]: r for r in earlier.get("entries", [])
           if any(v is not None and np.isfinite(v) for v in r.get("per_seed") or [])}
    rows, smoke = [], report.get("budget_scale", 1.0) != 1.0
    for row in report["entries"]:
        before = old.get(row["entry"])
        if row["status"] == "not run" and before is not None:
            before = {**before, "carried_from": before.get("carried_from", earlier.get("bench_id"))}
            row = judge({**before, **{k: row.get(k) for k in (
                "reference", "reference_source", "reference_budget", "reference_note",
                "reference_uncertainty", "measure")}}, smoke=smoke)
        elif before is not None:
            row = split_evidence.kept(row, before, smoke)
        rows.append(row)
    suite = suite_entries(report.get("suite"), report.get("suite_path"))
    return {**report, **_summary_fields(rows), "entries": rows,
            "stale": stale_reasons(rows, suite, float(report.get("budget_scale", 1.0))),
            "carried_from": earlier.get("bench_id")}


def write(store: RunStore, bench_id: str, out: str | None = None,
          merge: str | Path | None = None, evidence=()) -> Path:
    """Write ``report.md``, ``results.json`` and ``curves.png`` for the bench (into its folder
    in the store, and into ``out`` if given), with the rows of the ``results.json`` at
    ``merge`` for entries this store has not run (`merged`) and the ``evidence`` files'
    splits (`split_evidence`). Returns the folder in the store. Every file is checked and the
    report rendered before anything is written: a refused file changes nothing."""
    earlier = read_results(merge) if merge is not None else None
    report = results(store, bench_id)
    if earlier is not None:
        report = merged(report, earlier)
    report = split_evidence.with_evidence(report, evidence)
    report = json.loads(json.dumps(report, default=json_default))  # as the file will hold it
    text = markdown(report)
    folder = bench_dir(store, bench_id)
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_text(folder / "results.json", json.dumps(report, indent=2, default=json_default))
    atomic_write_text(folder / "report.md", text)
    bench_figure.plot(report, folder / "curves.png")
    if out is not None:
        target = Path(out)
        target.mkdir(parents=True, exist_ok=True)
        for name in ("report.md", "results.json", "curves.png"):
            shutil.copyfile(folder / name, target / name)
    return folder


def write_from_results(path: str | Path, out: str | None = None, evidence=()) -> Path:
    """Rewrite ``report.md``, ``results.json`` and ``curves.png`` from a committed
    ``results.json`` alone (`results_from_json`), with the ``evidence`` files' splits
    (`split_evidence`), in its folder or in ``out``. Returns the folder written. The files are
    checked (`read_results`) and the report rendered before anything is written."""
    report = split_evidence.with_evidence(results_from_json(path), evidence)
    text = markdown(report)
    target = Path(out) if out is not None else Path(path).parent
    target.mkdir(parents=True, exist_ok=True)
    atomic_write_text(target / "results.json", json.dumps(report, indent=2, default=json_default))
    atomic_write_text(target / "report.md", text)
    bench_figure.plot(report, target / "curves.png")
    return target


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")

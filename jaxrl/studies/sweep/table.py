"""Sweep tables: a sweep's configs ranked by the IQM of their seeds' final returns, built
from results in memory (`sweep_table`) or rebuilt from the run store (`load_sweep`). Store
side: no JAX, no engine."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd

from jaxrl import stats
from jaxrl.runs.store import RunStore, StoreError


def sweep_table(configs: list[dict], returns: list, failures: dict | None = None,
                run_ids: list | None = None, groups: list | None = None,
                confidence: float = 0.95) -> pd.DataFrame:
    """Ranked table: per config its swept values, IQM [CI] of final return over seeds (stratified
    bootstrap), mean, number of seeds with a finite return, status, run id, group."""
    failures = failures or {}
    group_of = {i: g for g, idx in enumerate(groups or [list(range(len(configs)))]) for i in idx}
    keys = list(dict.fromkeys(k for c in configs for k in c))
    rows = []
    for i, (overrides, r) in enumerate(zip(configs, returns)):
        r = np.asarray(r, dtype=float)
        finite = r[np.isfinite(r)]
        summary = (stats.summarize(finite, confidence=confidence) if finite.size
                   else {"iqm": np.nan, "iqm_ci_low": np.nan, "iqm_ci_high": np.nan,
                         "mean": np.nan})
        rows.append({"config": i, **{k: overrides.get(k) for k in keys},
                     "iqm": summary["iqm"], "ci_low": summary["iqm_ci_low"],
                     "ci_high": summary["iqm_ci_high"], "mean": summary["mean"],
                     "seeds": int(finite.size),
                     "status": "failed" if i in failures else "finished",
                     "run_id": run_ids[i] if run_ids else None, "group": group_of.get(i)})
    table = pd.DataFrame(rows)
    table = table.sort_values(["iqm"], ascending=False, na_position="last", kind="stable")
    table.insert(0, "rank", np.arange(1, len(table) + 1))
    return table.reset_index(drop=True)


def _short(value) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def format_table(table: pd.DataFrame) -> str:
    lines = []
    swept = [c for c in table.columns if c not in
             ("rank", "config", "iqm", "ci_low", "ci_high", "mean", "seeds", "status", "run_id",
              "group")]
    for _, row in table.iterrows():
        params = " ".join(f"{k}={_short(row[k])}" for k in swept) or "(defaults)"
        ci = f"[{row['ci_low']:.1f}, {row['ci_high']:.1f}]"
        flag = "" if row["status"] == "finished" else f"  {row['status']}"
        lines.append(f"{row['rank']:>4}  {params:<40} IQM {row['iqm']:>9.2f} {ci:<22} "
                     f"n={row['seeds']}{flag}")
    return "\n".join(lines)


def load_sweep(sweep_id: str, runs_dir: str | None = None) -> pd.DataFrame:
    """The ranked table of a stored sweep, rebuilt from its runs."""
    run_store = RunStore(runs_dir)
    metas = [m for m in (_readable_meta(run_store, p.name) for p in run_store.run_dirs())
             if m is not None and m.get("sweep_id") == sweep_id]
    if not metas:
        raise StoreError(f"no sweep {sweep_id!r} in {str(run_store.root)!r}")
    metas.sort(key=lambda m: (m.get("sweep_index", 0), m["run_id"]))
    group_ids = list(dict.fromkeys(tuple(m.get("group", {}).get("runs", [m["run_id"]]))
                                   for m in metas))
    index = {m["run_id"]: i for i, m in enumerate(metas)}
    groups = [[index[r] for r in g if r in index] for g in group_ids]
    returns = [[np.nan if v is None else v for v in (m.get("final_eval_return") or [np.nan])]
               for m in metas]
    failures = {i: m.get("message") for i, m in enumerate(metas) if m["status"] != "finished"}
    table = sweep_table([m.get("sweep_params") or {} for m in metas], returns, failures,
                        [m["run_id"] for m in metas], groups)
    table["status"] = [metas[i]["status"] for i in table["config"]]
    return table


def _readable_meta(run_store: RunStore, run_id: str) -> dict | None:
    """A run's ``run.json``, or None (with a one-line warning) when it cannot be read."""
    try:
        return run_store.load(run_id)
    except (OSError, json.JSONDecodeError, StoreError) as err:
        warnings.warn(f"run {run_id}: skipping unreadable run.json ({err})", stacklevel=2)
        return None

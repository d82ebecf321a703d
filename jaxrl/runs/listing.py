"""The list of runs in a store, read from its catalog alone (`jaxrl.runs.catalog`): `runs_frame`
(every run.json field) and `ls` (the ``jaxrl runs ls`` table). No SQL engine is loaded, so
``jaxrl runs ls`` over a store of 10,000 runs answers in well under a second; the SQL views
over runs, metrics and evaluations are `jaxrl.runs.query`'s.
"""

from __future__ import annotations

import pandas as pd

from jaxrl.runs import catalog
from jaxrl.runs.integrity import warn_bad
from jaxrl.runs.store import RunStore

__all__ = ["LS_COLUMNS", "load_catalog", "ls", "runs_frame"]

LS_COLUMNS = ["run_id", "algo", "env", "status", "seeds", "total_steps_per_seed",
              "final_eval_return_iqm", "env_steps_per_second", "started_at"]


def load_catalog(store: RunStore | None, compact_new: bool = True) -> catalog.Catalog:
    """The refreshed catalog of ``store``, warning once per bad file."""
    cat = catalog.load((store or RunStore()).root, compact_new)
    for bad in cat.bad:
        warn_bad(bad)
    return cat


def runs_frame(store: RunStore | None = None) -> pd.DataFrame:
    """One row per run: `catalog.VIEW_COLUMNS` (the run.json fields, ``config`` and
    ``final_eval_return`` as JSON, ``damaged``)."""
    return load_catalog(store, compact_new=False).runs


def ls(store: RunStore | None = None, algo: str | None = None, env: str | None = None,
       status: str | None = None, sweep: str | None = None) -> pd.DataFrame:
    """One row per run (filtered by the given fields), oldest first: `LS_COLUMNS`, the
    ``sweep_id`` when filtering by sweep, and ``damaged``."""
    runs = runs_frame(store)
    for col, val in (("algo", algo), ("env", env), ("status", status), ("sweep_id", sweep)):
        if val is not None:
            runs = runs[runs[col] == val]
    columns = LS_COLUMNS + (["sweep_id"] if sweep else []) + ["damaged"]
    runs = runs.sort_values(["started_at", "run_id"], kind="stable", na_position="first")
    return runs[columns].reset_index(drop=True)

"""The listing snapshot: the ``jaxrl runs ls`` table of every run, kept as JSON beside the
catalog (``.catalog/ls.json``), so that listing a store that has not changed reads one small
file and ``stat``s the run folders, with the standard library alone (no pandas, Arrow or JAX).

The catalog (`jaxrl.runs.catalog`) writes the snapshot (`encode`) each time it writes its rows,
under its lock, by renaming a temp file into place. `read_current` trusts it only while it
describes the store exactly: the same run folders with the same fingerprints
(`jaxrl.runs.layout.fingerprint`) and none of them ``running`` (a running run changes under
the reader). Otherwise it returns None, and the caller refreshes the catalog the full way.
"""

from __future__ import annotations

import json
from pathlib import Path

from jaxrl.runs.layout import CATALOG_DIR, quarantined_runs, scan

NAME = "ls.json"
VERSION = 2  # 2: written by catalog version 2 (files checked against their run)
LS_COLUMNS = ["run_id", "algo", "env", "status", "seeds", "total_steps_per_seed",
              "final_eval_return_iqm", "env_steps_per_second", "started_at"]
# how each listed column prints (`jaxrl.runs.text_table.format_columns`)
KINDS = {"seeds": "int", "total_steps_per_seed": "int", "final_eval_return_iqm": "float",
         "env_steps_per_second": "float", "damaged": "bool"}
STORED = [*LS_COLUMNS, "sweep_id"]


def path(root: Path) -> Path:
    return Path(root) / CATALOG_DIR / NAME


def encode(records: list[dict]) -> str:
    """The snapshot file's text: one record per run, `STORED` fields, ``fingerprint`` (4 ints)
    and ``bad`` (``[[file, reason], ...]``, the run's known bad files)."""
    return json.dumps({"version": VERSION, "runs": records})


def read_current(root: Path) -> list[dict] | None:
    """The snapshot's records with ``damaged`` set, if it still describes the store at
    ``root`` exactly; None when it is missing, unreadable, of another version or out of date."""
    try:
        stored = json.loads(path(root).read_text())
        if stored.get("version") != VERSION:
            return None
        records = {r["run_id"]: r for r in stored["runs"]}
        seen = scan(Path(root))
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    if seen.keys() != records.keys():
        return None
    for run_id, fp in seen.items():
        r = records[run_id]
        if r.get("status") == "running" or tuple(r.get("fingerprint") or ()) != fp:
            return None
    quarantined = quarantined_runs(Path(root))
    for r in records.values():
        r["damaged"] = bool(r.get("bad")) or r["run_id"] in quarantined
    return list(records.values())


def select(records: list[dict], algo: str | None = None, env: str | None = None,
           status: str | None = None, sweep: str | None = None) -> list[dict]:
    """The records that match every given field, oldest first (ties: by run id; runs with no
    start time first), as `jaxrl.runs.listing.ls` orders its rows."""
    wanted = {"algo": algo, "env": env, "status": status, "sweep_id": sweep}
    kept = [r for r in records if all(v is None or r.get(k) == v for k, v in wanted.items())]
    return sorted(kept, key=lambda r: (r.get("started_at") is not None,
                                       r.get("started_at") or "", r["run_id"]))


def columns(sweep: bool) -> list[str]:
    """The ``runs ls`` columns: `LS_COLUMNS`, ``sweep_id`` when filtering by sweep, ``damaged``."""
    return LS_COLUMNS + (["sweep_id"] if sweep else []) + ["damaged"]

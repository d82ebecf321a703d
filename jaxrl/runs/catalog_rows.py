"""A catalog row (`jaxrl.runs.catalog`): what one run folder says, read from the folder itself
(`read_row`: its ``run.json``, its data files checked, each good file's check kept for the next
refresh), and the row table's columns and types.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from jaxrl.runs import kept_checks, snapshot
from jaxrl.runs.integrity import (
    chunk_files,
    file_checks,
    file_stamp,
    quick_problem,
    read_run_json,
    run_json_missing,
)
from jaxrl.runs.layout import EVALUATIONS, METRICS_DIR, RUN_JSON
from jaxrl.runs.runmeta import as_read

INT64_MAX = 2**63 - 1
RUN_COLUMNS = ["run_id", "algo", "env", "status", "seeds", "total_steps_per_seed",
               "final_eval_return_mean", "final_eval_return_iqm", "compile_seconds",
               "run_seconds", "env_steps_per_second", "started_at", "ended_at", "git_commit",
               "git_dirty", "sweep_id", "device_kind", "device_count", "command_line"]


VIEW_COLUMNS = [*RUN_COLUMNS, "config", "final_eval_return", "damaged"]


FINGERPRINT = ["fp_folder", "fp_metrics", "fp_json_size", "fp_json_mtime"]


ROW_COLUMNS = [*RUN_COLUMNS, "config", "final_eval_return", "problems", "files", "checked", "pid",
               "host", *FINGERPRINT, "segment"]


INT_COLUMNS = ["seeds", "total_steps_per_seed", "device_count", "pid", *FINGERPRINT]


FLOAT_COLUMNS = ["final_eval_return_mean", "final_eval_return_iqm", "compile_seconds",
                 "run_seconds", "env_steps_per_second"]


def _known_problems(row: pd.Series | None) -> dict[str, list]:
    """``{file: [file, reason, size, mtime_ns]}`` recorded for a run (e.g. by a deep check)."""
    if row is None or not isinstance(row.get("problems"), str):
        return {}
    return {p[0]: p for p in json.loads(row["problems"])}


def _file_problem(path: Path, known: list | None, stamp: tuple[int, int]) -> str | None:
    """Why ``path`` (of size and mtime ``stamp``, `file_stamp`) is bad (None: it is not): a
    verdict recorded for this very file (same size and mtime) is kept, otherwise the quick
    check decides."""
    if stamp == (-1, -1):
        try:
            path.stat()
        except OSError as err:
            return f"unreadable: {err.strerror}"
    if known is not None and (known[2], known[3]) == stamp:
        return known[1]
    return quick_problem(path)


def _problems(folder: Path, data: list[str], known: dict, checked: dict,
              meta: dict) -> tuple[list, list, dict]:
    """``(problems, good files, checks)`` of a run's data files ``data``: ``[file, reason, size,
    mtime_ns]`` of each bad one (`_file_problem`, then `file_checks` against the run, whose
    ``run.json`` is ``meta``), and ``{file: [size, mtime_ns, ctime_ns, schema key]}`` of the
    good ones. A file that ``checked`` (`_reusable_checks`) found good, as it is now
    (`file_identity`), is good without being read again."""
    paths = {rel: f"{folder}/{rel}" for rel in data}  # str(folder / rel), without pathlib's cost
    stamps = {rel: kept_checks.file_identity(path) for rel, path in paths.items()}
    kept = {rel: check[3] for rel, check in checked.items()
            if rel in stamps and rel not in known and tuple(check[:3]) == stamps[rel]}
    todo = {paths[rel]: rel for rel in data if rel not in kept}
    reasons, keys = file_checks(folder, list(todo.values()), lambda path: _file_problem(
        path, known.get(todo[str(path)]), stamps[todo[str(path)]][:2]), meta=meta)
    keys.update(kept)
    problems = [[rel, reason, *file_stamp(folder / rel)] for rel, reason in reasons.items()
                if reason]
    good = [rel for rel in data if rel in kept or (rel in reasons and reasons[rel] is None)]
    return problems, good, {rel: [*stamps[rel], keys[rel]] for rel in good if rel in keys}


def _reusable_checks(old: pd.Series | None, meta: dict) -> dict:
    """``{file: [size, mtime_ns, ctime_ns, key]}`` of the kept checks that still hold
    (`jaxrl.runs.kept_checks.reusable`): the run's previous row's, else its writer's."""
    if old is not None and isinstance(old.get("checked"), str):
        return kept_checks.reusable(json.loads(old["checked"]), meta)
    return kept_checks.reusable(meta.get(kept_checks.CHECKED_FIELD), meta)


def _kept_segment(old: pd.Series | None, row: dict) -> str | None:
    """The segment of ``old`` when the run read again still holds what was compacted there:
    the same good files, each unchanged (`file_identity`), and it is not running. (A rewritten
    ``run.json`` then leaves the run in its segment.)"""
    if old is None or not isinstance(old.get("segment"), str) or row["status"] == "running":
        return None
    if not isinstance(old.get("checked"), str) or old.get("files") != row["files"]:
        return None
    before = json.loads(old["checked"])["files"]
    now = json.loads(row["checked"])["files"]
    same = all(before.get(rel, [None])[:3] == now.get(rel, [0])[:3]
               for rel in json.loads(row["files"]))
    return old["segment"] if same else None


def read_row(folder: Path, fp: tuple, old: pd.Series | None) -> dict | None:
    """A catalog row read from the run folder itself (None: not a run, e.g. a folder being
    created). A ``running`` run whose process is gone reads as ``interrupted``
    (`jaxrl.runs.runmeta.as_read`); a ``run.json`` with bad fields gives its sound ones. Files
    ``old`` (the run's previous row) checked and that did not change are not read again."""
    meta, json_problem = read_run_json(folder / RUN_JSON)
    known = _known_problems(old)
    if meta is not None:
        meta = as_read(meta)
    data = [f"{METRICS_DIR}/{p.name}" for p in chunk_files(folder)]
    data += [EVALUATIONS] if (folder / EVALUATIONS).is_file() else []
    if meta is None and not data:
        return None
    if json_problem == "missing" and not run_json_missing(folder):
        json_problem = None  # in quarantine: the run is flagged damaged for that
    meta = meta or {}
    problems, good, checks = _problems(folder, data, known, _reusable_checks(old, meta), meta)
    problems = ([[RUN_JSON, json_problem, fp[2], fp[3]]] if json_problem else []) + problems
    row = {c: meta.get(c) for c in RUN_COLUMNS}
    row.update(run_id=folder.name, config=json.dumps(meta.get("config", {})),
               final_eval_return=json.dumps(meta.get("final_eval_return")),
               problems=json.dumps(problems), files=json.dumps(good),
               checked=json.dumps(kept_checks.record(meta, checks)),
               pid=meta.get("pid"), host=meta.get("host"))
    row.update(zip(FINGERPRINT, fp))
    row["segment"] = _kept_segment(old, row)
    return row


def normalize(frame: pd.DataFrame) -> pd.DataFrame:
    """Stable column types whatever ``run.json`` held (a stray string becomes null)."""
    frame = frame.reindex(columns=ROW_COLUMNS)
    for col in INT_COLUMNS:
        frame[col] = frame[col].map(_int_or_none).astype("Int64")
    for col in FLOAT_COLUMNS:
        frame[col] = pd.to_numeric(frame[col], errors="coerce").astype("float64")
    frame["git_dirty"] = frame["git_dirty"].map(
        lambda v: v if isinstance(v, bool) else None).astype("boolean")
    for col in set(ROW_COLUMNS) - set(INT_COLUMNS) - set(FLOAT_COLUMNS) - {"git_dirty"}:
        frame[col] = frame[col].map(lambda v: None if v is None or v != v else str(v))
    return frame


def _int_or_none(v) -> int | None:
    """An int64 value, or None for anything else (text, a fraction, beyond 64 bits)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v:
        return None
    return int(v) if float(v).is_integer() and abs(v) <= INT64_MAX else None


def empty_rows() -> pd.DataFrame:
    return normalize(pd.DataFrame(columns=ROW_COLUMNS)).set_index("run_id", drop=False)


def snapshot_records(rows: pd.DataFrame) -> list[dict]:
    """The listing snapshot's records (`jaxrl.runs.snapshot.encode`) of catalog rows."""
    plain = rows[snapshot.STORED].astype(object).where(rows[snapshot.STORED].notna(), None)
    records = plain.to_dict("records")
    fps = rows[FINGERPRINT].fillna(-2).astype("int64").to_numpy().tolist()
    for record, fp, problems in zip(records, fps, rows["problems"].tolist()):
        record["fingerprint"] = fp
        record["bad"] = [p[:2] for p in json.loads(problems)] if isinstance(problems, str) else []
    return records


"""A background compactor's work (`jaxrl.runs.compactor.start` runs it in its own process):
the store's backlog of catalogued runs compacted into segments, each segment written outside the
catalog lock and committed under it only for runs that did not change meanwhile."""

from __future__ import annotations

import json
import os
import warnings
from pathlib import Path

import pandas as pd

from jaxrl.runs import compactor
from jaxrl.runs.catalog import backlog, load, read_rows, write_rows
from jaxrl.runs.catalog_lock import locked
from jaxrl.runs.catalog_rows import FINGERPRINT
from jaxrl.runs.kept_checks import file_identity
from jaxrl.runs.layout import scan
from jaxrl.runs.segments import SEGMENT_RUNS, write_segment


def compact_backlog(root: os.PathLike) -> None:
    """The work of a background compactor (`jaxrl.runs.compactor.start`): compact the store's
    backlog, `jaxrl.runs.segments.SEGMENT_RUNS` runs at a time, each segment written outside
    the catalog lock and committed under it (`_commit_segment`). Returns when the backlog is
    done, when another compactor holds the store, or when something changed under it (the
    next query starts a compactor again if there is still a backlog)."""
    root = Path(root)
    with compactor.held(root) as mine, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no one reads them: bad files are recorded in the rows
        while mine:
            load(root, compact_new=False)  # the rows of the store as it is now
            rows = read_rows(root)
            todo = [run_id for run_id in backlog(rows).index[:SEGMENT_RUNS]
                    if _files_as_checked(root, rows.loc[run_id])]
            if not todo:
                return
            work = rows.loc[todo].copy()
            token = write_segment(root, work, todo)
            if token is None or not _commit_segment(root, rows, work, token):
                return


def _files_as_checked(root: Path, row: pd.Series) -> bool:
    """Whether each good file of a catalogued run is as it was checked (`file_identity`: a file
    rewritten since is read again by the next refresh, not compacted unchecked)."""
    checked = json.loads(row["checked"])["files"] if isinstance(row["checked"], str) else {}
    files = json.loads(row["files"])
    return all(rel in checked and list(file_identity(f"{root}/{row.name}/{rel}"))
               == checked[rel][:3] for rel in files)


def _commit_segment(root: Path, rows: pd.DataFrame, work: pd.DataFrame, token: str) -> bool:
    """Put the runs of ``work`` (their rows as they were read, ``rows``) in segment ``token``,
    under the catalog lock, if none of them changed meanwhile (`_unchanged`); False if one did
    (the segment is then left to `jaxrl.runs.segments.collect_garbage`) or the catalog cannot
    be written."""
    with locked(root, "compacting in the background") as writable:
        now = read_rows(root)
        if not writable or not _unchanged(root, rows, now, work.index):
            return False
        now.loc[work.index, ["files", "problems"]] = work[["files", "problems"]]
        now.loc[work.index, "segment"] = token
        write_rows(root, now)
    return True


def _unchanged(root: Path, rows: pd.DataFrame, now: pd.DataFrame, ids: pd.Index) -> bool:
    """Whether the runs ``ids`` are as ``rows`` saw them: the same rows in the catalog ``now``
    (and in no segment), the same fingerprints on disk (no file added, removed or replaced),
    and each good file of the size and mtime it was checked at (none rewritten in place)."""
    if not ids.isin(now.index).all() or now.loc[ids, "segment"].notna().any():
        return False
    same = ["files", "problems", "checked", *FINGERPRINT]
    if not rows.loc[ids, same].astype(str).equals(now.loc[ids, same].astype(str)):
        return False
    seen = scan(root)
    stored = rows.loc[ids, FINGERPRINT].fillna(-2).astype("int64").to_numpy().tolist()
    return (all(list(seen.get(run_id, ())) == fp for run_id, fp in zip(ids, stored))
            and all(_files_as_checked(root, rows.loc[run_id]) for run_id in ids))

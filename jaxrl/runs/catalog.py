"""The store catalog: what queries read instead of every file of every run.

::

    <root>/.catalog/
        runs.parquet                         one row per run (`ROW_COLUMNS`)
        segments/<token>-metrics.parquet     the metrics of up to 1,000 runs, compacted
        segments/<token>-evaluations.parquet their evaluations (`jaxrl.runs.segments`)
        lock
        compacting                           held by a background compactor at work

Why: a store of 10,000 runs holds 50,000+ metrics chunks, and DuckDB spends about a
millisecond on each file before it reads a row (an aggregate over all metrics took 43 s,
measured with ``experiments/make_big_store.py``); reading 10,000 ``run.json`` took 2.2 s.

`load` refreshes the catalog at every query, under a file lock:

1. Fingerprint each run folder with three ``stat`` calls (the folder, its ``metrics`` folder,
   its ``run.json``). The store writes every file by renaming a temp file into place, so a new
   chunk, new evaluations or a rewritten ``run.json`` changes a fingerprint.
2. Read again the runs whose fingerprint changed, and the runs still ``running``: parse
   ``run.json``, give every data file the quick check of `jaxrl.runs.integrity`, and check its
   Parquet files against the run (`jaxrl.runs.schema`: the store's columns and types, the
   run's own ``run_id``). A bad file is recorded in the row (``problems``), skipped from then
   on, and flags the run ``damaged``. Each good file's check is kept (``checked``: its size,
   mtime, ctime and schema key, with the metric names it was checked against): a run read again
   reads only the files that changed, and keeps its segment when none did (a rewritten
   ``run.json``).
3. Compact the metrics and evaluations of runs that are no longer running into segments
   (DuckDB ``COPY``; a file DuckDB cannot read is recorded as bad and left out). Segments that
   hold a run read again are rewritten without it; small segments are merged. A backlog of
   more than `BACKGROUND_FILES` files (a store copied in, a catalog deleted: 1,000 runs take
   4-5 s to compact on 2 cores) is left to a background compactor (`jaxrl.runs.compactor`,
   `jaxrl.runs.backlog`), and queries read those runs from their files until it is done, their
   files of one schema key as one list (`jaxrl.runs.segments.union_source`): a new store's
   first aggregate waits for its files' checks and reads, not for their compaction.

Running runs, and every run of a store the catalog cannot be written to, are read from their
own files at each query (``loose``). The catalog is read without being written, in memory
(with a one-line `CatalogWarning` where that is news), when the store is read-only, when a write
fails (a full disk), and when another process has held the lock for a few seconds (stopped,
say; `jaxrl.runs.catalog_lock`): no reader waits longer, and the warning names the holder's PID
and what it is doing. A file damaged *in place* after its run was catalogued (a
truncate by hand, bit rot) changes no folder fingerprint: queries go on serving the run's
catalogued copy and do not flag it until ``jaxrl runs check``, which reads every file and
re-reads the runs it found bad (`record_check`). The catalog is a cache: deleting ``.catalog``
loses nothing.
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from jaxrl.runs import compactor, snapshot
from jaxrl.runs.catalog_lock import CatalogWarning, locked
from jaxrl.runs.catalog_rows import (  # noqa: F401  (re-exported: the row table)
    FINGERPRINT,
    FLOAT_COLUMNS,
    INT_COLUMNS,
    ROW_COLUMNS,
    RUN_COLUMNS,
    VIEW_COLUMNS,
    empty_rows,
    normalize,
    read_row,
    snapshot_records,
)
from jaxrl.runs.files import StoreError, atomic_write_bytes, atomic_write_text
from jaxrl.runs.integrity import (
    BadFile,
    one_line,
)
from jaxrl.runs.layout import (  # noqa: F401  (scan, fingerprint: re-exported)
    CATALOG_DIR,
    EVALUATIONS,
    METRICS_DIR,
    RUN_JSON,
    fingerprint,
    quarantined_runs,
    scan,
)
from jaxrl.runs.segments import (
    TABLES,
    collect_garbage,
    compact,
    drop_bad_segments,
    file_keys,
    segment_path,
)

CATALOG_VERSION = "3"  # 2: Parquet files checked against their run (`jaxrl.runs.schema`);
# 3: each file's check kept (``checked``)
NOTE_ABOVE_RUNS = 200  # say so on stderr when a refresh reads more runs than this
BACKGROUND_FILES = 1000  # a backlog of more files than this is compacted in the background


@dataclass(frozen=True)
class Catalog:
    """What a query reads, of the store at ``root``. ``runs``: the ``runs`` view
    (`VIEW_COLUMNS`); ``segments`` and ``loose``: per table (``metrics``, ``evaluations``),
    the compacted segment files and the good files of runs not compacted; ``stale``: run ids
    whose rows in ``segments`` are out of date (only when the catalog could not be written);
    ``bad``: every bad file known; ``backlog``: per table, ``{schema key: files}`` (absolute
    paths, as text) of the runs whose compaction is left to a background compactor, read from
    their files meanwhile (``compact_later``: one is to be started,
    `jaxrl.runs.compactor.start`)."""

    root: Path
    runs: pd.DataFrame
    segments: dict = field(default_factory=lambda: {t: [] for t in TABLES})
    loose: dict = field(default_factory=lambda: {t: [] for t in TABLES})
    stale: frozenset = frozenset()
    bad: list = field(default_factory=list)
    backlog: dict = field(default_factory=lambda: {t: {} for t in TABLES})
    compact_later: bool = False


# -- rows ----------------------------------------------------------------------------------------


def unchanged_runs(old: pd.DataFrame, seen: dict) -> pd.Index:
    """Run ids whose stored row still holds: same fingerprint, and not running."""
    if old.empty or not seen:
        return old.index[:0]
    now = pd.DataFrame.from_dict(seen, orient="index", columns=FINGERPRINT)
    common = old.index.intersection(now.index)
    stored = old.loc[common, FINGERPRINT].fillna(-2).astype("int64").to_numpy()
    same = (stored == now.loc[common].to_numpy()).all(axis=1)
    return common[same & (old.loc[common, "status"] != "running").to_numpy()]


def refresh_rows(root: Path, old: pd.DataFrame, seen: dict) -> tuple[pd.DataFrame, bool]:
    """Rows of every run in ``seen``: kept from ``old`` when unchanged (`unchanged_runs`),
    read again otherwise. Also returns whether anything differs from ``old``."""
    kept = unchanged_runs(old, seen)
    todo = [run_id for run_id in seen if run_id not in kept]
    if len(todo) > NOTE_ABOVE_RUNS:
        print(f"jaxrl: cataloguing {len(todo)} runs of {root} (once; later queries read "
              f"{root / CATALOG_DIR})", file=sys.stderr)
    fresh = [read_row(root / run_id, seen[run_id], old.loc[run_id] if run_id in old.index
                      else None) for run_id in todo]
    fresh = [row for row in fresh if row is not None]
    rows = old.loc[kept]
    if fresh:
        rows = _concat(rows, normalize(pd.DataFrame(fresh)).set_index("run_id", drop=False))
    return rows.sort_index(), bool(fresh) or len(kept) != len(old)


def _concat(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """``a`` then ``b``, two frames of the same (normalized) column types. pandas warns that
    all-null columns will count when it picks result types; here the types agree either way."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return pd.concat([a, b])


def stale_runs(old: pd.DataFrame, rows: pd.DataFrame) -> set[str]:
    """Run ids that ``old`` put in a segment and that were read again or are gone: their rows
    in that segment are out of date."""
    in_segment = old.index[old["segment"].notna()]
    still = rows.index.intersection(in_segment)
    still = still[rows.loc[still, "segment"].notna().to_numpy()]
    return set(in_segment.difference(still))


# -- the catalog file ----------------------------------------------------------------------------


def read_rows(root: Path) -> pd.DataFrame:
    """The stored rows (empty when there is no catalog, or one of another version or
    unreadable: the catalog is rebuilt)."""
    path = root / CATALOG_DIR / "runs.parquet"
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowException):
        return empty_rows()
    if (table.schema.metadata or {}).get(b"jaxrl_catalog") != CATALOG_VERSION.encode():
        return empty_rows()
    nullable = {pa.int64(): pd.Int64Dtype(), pa.bool_(): pd.BooleanDtype()}
    rows = table.to_pandas(types_mapper=nullable.get)  # an int column with nulls stays int
    if list(rows.columns) != ROW_COLUMNS:
        return empty_rows()
    return rows.set_index("run_id", drop=False)


def write_rows(root: Path, rows: pd.DataFrame) -> None:
    """Store the rows atomically, stamped with `CATALOG_VERSION`, and the listing snapshot
    that goes with them."""
    table = pa.Table.from_pandas(rows.reset_index(drop=True), preserve_index=False)
    table = table.replace_schema_metadata({b"jaxrl_catalog": CATALOG_VERSION.encode()})
    buffer = pa.BufferOutputStream()
    pq.write_table(table, buffer)
    atomic_write_bytes(root / CATALOG_DIR / "runs.parquet", buffer.getvalue().to_pybytes())
    atomic_write_text(snapshot.path(root), snapshot.encode(snapshot_records(rows)))


def record_check(root: Path, bad: list[BadFile]) -> None:
    """Tell the catalog what a deep check of the whole store (``jaxrl runs check``) found: the
    runs with bad files, and those that had some before, are read again at the next query
    (and compacted without their bad files), the check's verdicts kept for unchanged files.
    A catalog that cannot be written (a full disk) is one warning line, as for a query."""
    root = Path(root)
    if not (root / CATALOG_DIR).is_dir():
        return
    with locked(root, "recording a check") as writable:
        rows = read_rows(root)
        if not writable or rows.empty:
            return
        had = rows.index[rows["problems"].map(lambda p: p not in (None, "[]"))]
        found: dict = {}
        for b in bad:
            path = root / b.run_id / b.file
            if b.run_id in rows.index and path.is_file():
                st = path.stat()
                found.setdefault(b.run_id, []).append([b.file, b.reason, st.st_size,
                                                       st.st_mtime_ns])
        for run_id in had.union(pd.Index(list(found), dtype=object)):
            rows.at[run_id, "problems"] = json.dumps(found.get(run_id, []))
            rows.loc[run_id, FINGERPRINT] = -1
        try:
            write_rows(root, rows)
        except (OSError, StoreError) as err:
            warn_unwritten(root, err)


# -- load ----------------------------------------------------------------------------------------
def load(root: os.PathLike, compact_new: bool = True) -> Catalog:
    """The catalog of the store at ``root``, refreshed (see the module docstring). Without
    ``compact_new`` (a query of the ``runs`` view alone), runs not yet compacted stay so: the
    first ``jaxrl runs ls`` of a large store does not wait for its metrics to be compacted.
    With it, a backlog of more than `BACKGROUND_FILES` files (or one a compactor is at work on)
    is left to a background compactor (`Catalog.compact_later`, `jaxrl.runs.compactor`)."""
    root = Path(root)
    if not root.is_dir():
        return catalog_from(root, empty_rows(), set())
    with locked(root) as writable:
        old = read_rows(root)
        rows, changed = refresh_rows(root, old, scan(root))
        drop_bad_segments(root, rows)
        stale = stale_runs(old, rows)
        later = compact_new and writable and compact_in_background(root, rows)
        if writable and store_catalog(root, rows, set(old.loc[list(stale), "segment"]),
                                      changed, compact_new and not later):
            stale = set()
        else:
            later = False
    return catalog_from(root, rows, stale, later)


def backlog(rows: pd.DataFrame) -> pd.Series:
    """``files`` (JSON lists) of the runs to compact: not running, in no segment, with data."""
    todo = rows.loc[rows["segment"].isna() & (rows["status"] != "running"), "files"]
    return todo[todo.notna() & (todo != "[]")]


def compact_in_background(root: Path, rows: pd.DataFrame) -> bool:
    """Whether the compaction of the backlog (`backlog`) is for a background compactor: more
    than `BACKGROUND_FILES` files, or a compactor already at work on the store."""
    files = backlog(rows)
    if files.empty:
        return False
    return sum(map(len, map(json.loads, files))) > BACKGROUND_FILES or compactor.running(root)


def store_catalog(root: Path, rows: pd.DataFrame, dirty: set, changed: bool,
                  compact_new: bool) -> bool:
    """Compact (`jaxrl.runs.segments.compact`, ``dirty``: segments holding stale runs) and
    write the refreshed ``rows``. False when a write fails (a full disk): ``rows`` keep the
    segments they had, and the query reads without the catalog, with a one-line warning."""
    before = rows["segment"].copy()
    try:
        compact(root, rows, dirty, new=compact_new)
        if changed or not rows["segment"].equals(before) or not snapshot.path(root).is_file():
            write_rows(root, rows)
        collect_garbage(root, rows)
        return True
    except (OSError, StoreError) as err:
        rows["segment"] = before
        warn_unwritten(root, err)
        return False


def warn_unwritten(root: Path, err: Exception) -> None:
    """The one-line `CatalogWarning` of a catalog write that failed (a full disk)."""
    warnings.warn(f"the catalog of {root} was not written ({one_line(err)}); reading without it",
                  CatalogWarning, stacklevel=4)


def catalogue_finished(root: os.PathLike) -> None:
    """Bring the catalog rows and the listing snapshot of the store at ``root`` up to date,
    called by a training process once its runs have finished: the next ``jaxrl runs ls`` then
    reads the snapshot (standard library only) instead of refreshing the catalog itself. The
    metrics are left for the first query that needs them to compact. Nothing here may fail a
    run that trained: a store the catalog cannot refresh is one warning line, and the next
    query refreshes it the full way."""
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", CatalogWarning)
            load(root, compact_new=False)
        unwritten = [w for w in caught if issubclass(w.category, CatalogWarning)]
        for w in caught:
            if w not in unwritten:
                warnings.showwarning(w.message, w.category, w.filename, w.lineno)
        if unwritten:
            raise StoreError(str(unwritten[0].message).split("; reading")[0])
    except Exception as err:  # the runs are safely stored; only speed is lost
        print(f"jaxrl: warning: the catalog of {root} was not refreshed after the run "
              f"({type(err).__name__}: {one_line(err)}); the next `jaxrl runs` query refreshes "
              f"it", file=sys.stderr)


def catalog_from(root: Path, rows: pd.DataFrame, stale: set, later: bool = False) -> Catalog:
    """The `Catalog` a query reads, from refreshed rows (``later``: the backlog is left to a
    background compactor, and read from its files meanwhile)."""
    has_problems = rows["problems"].notna() & (rows["problems"] != "[]")
    problems = rows.loc[has_problems, "problems"].map(json.loads)
    view = rows.reset_index(drop=True).reindex(columns=VIEW_COLUMNS)
    view["damaged"] = (has_problems | rows["run_id"].isin(quarantined_runs(root))).to_numpy()
    segments = {t: [segment_path(root, tok, t) for tok in sorted(set(rows["segment"].dropna()))]
                for t in TABLES}
    waiting = set(backlog(rows).index) if later else set()
    loose, keyed = {t: [] for t in TABLES}, {t: {} for t in TABLES}
    unsegmented = rows.loc[rows["segment"].isna(), ["files", "checked"]]
    absolute = os.path.abspath(root)
    for run_id, files, checked in unsegmented.itertuples():
        keys = file_keys(checked) if run_id in waiting else {}
        for rel in json.loads(files) if isinstance(files, str) else []:
            table = "evaluations" if rel == EVALUATIONS else "metrics"
            if run_id in waiting:
                keyed[table].setdefault(keys.get(rel), []).append(f"{absolute}/{run_id}/{rel}")
            else:
                loose[table].append(root / run_id / rel)
    bad = [BadFile(run_id, p[0], p[1]) for run_id, ps in problems.items() for p in ps]
    return Catalog(root=root, runs=view, segments=segments, loose=loose, stale=frozenset(stale),
                   bad=bad, backlog=keyed, compact_later=bool(later and len(waiting)))

"""Segments of the store catalog: the metrics and evaluations of many runs, compacted into one
Parquet file per table (`jaxrl.runs.catalog` decides which runs go where).

A segment ``<token>`` is ``<root>/.catalog/segments/<token>-metrics.parquet`` and
``<token>-evaluations.parquet`` (a table with no rows still gets its file, so a missing file
means a damaged catalog). Functions here take the catalog's rows (a DataFrame indexed by run
id with columns ``files``, ``checked``, ``problems``, ``segment``) and update them in place.
Segments are never changed: a new one replaces them, and `collect_garbage` removes the
replaced ones after `ORPHAN_GRACE_SECONDS`.
"""

from __future__ import annotations

import functools
import json
import os
import re
import secrets
import time
import warnings
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from jaxrl.runs.files import StoreError
from jaxrl.runs.integrity import (
    StoreWarning,
    bad_file,
    file_stamp,
    one_line,
    parquet_read_problem,
    quick_problem,
)
from jaxrl.runs.layout import CATALOG_DIR, EVALUATIONS

TABLES = ("metrics", "evaluations")
SEGMENT_RUNS = 1000  # runs per new segment
SMALL_SEGMENT_RUNS = 100  # segments below this are merged ...
MAX_SMALL_SEGMENTS = 8  # ... once there are more than this many
ORPHAN_GRACE_SECONDS = 3600  # unreferenced segments older than this are removed



@functools.cache
def _duckdb():
    """The ``duckdb`` module, imported on first use: listing runs (`jaxrl.runs.listing`) reads
    the catalog without it, and it takes a quarter of a second to import. Where it is not
    installed, a `StoreError` (the catalog is then read without compacting, one warning line)."""
    try:
        import duckdb
    except ImportError as missing:
        raise StoreError(f"compacting the store's metrics needs duckdb ({missing}): "
                         "pip install duckdb") from None
    return duckdb

def new_token() -> str:
    return f"{time.strftime('%Y%m%d%H%M%S')}-{secrets.token_hex(4)}"


def segment_path(root: Path, token: str, table: str) -> Path:
    return root / CATALOG_DIR / "segments" / f"{token}-{table}.parquet"


def sql_list(items: list) -> str:
    """A DuckDB list literal of quoted strings."""
    return "[" + ", ".join("'" + str(p).replace("'", "''") + "'" for p in items) + "]"


def glob_literal(path) -> str:
    """``path`` as a DuckDB file pattern that matches that one file: DuckDB expands ``*``,
    ``?`` and ``[`` in every path it reads (a run folder copied as ``2*`` would read every
    run starting with 2), so each is escaped as ``[*]``, ``[?]``, ``[[]``."""
    return re.sub(r"([*?\[])", r"[\1]", str(path))


def parquet_list(files: list) -> str:
    """A DuckDB list literal of ``files`` for ``read_parquet``, each taken literally
    (`glob_literal`). DuckDB's errors name the files themselves, not the patterns."""
    return sql_list([glob_literal(f) for f in files])


def unreadable(err: Exception, files: list) -> list[tuple[str, str]]:
    """``[(file, reason)]``: the files of ``files`` that DuckDB error ``err`` is about: the one
    it names; where it names none but is an error of reading, not of the SQL (a damaged page
    reads as "don't know what type"), those pyarrow cannot read whole either
    (`jaxrl.runs.integrity.parquet_read_problem`: every file is read, on this rare path).
    None found: []."""
    named = named_file(err, files)
    if named is not None:
        return [(named, one_line(err))]
    duckdb = _duckdb()
    if type(err) is not duckdb.Error and not isinstance(
            err, (duckdb.IOException, duckdb.InternalException)):
        return []
    found = ((str(f), parquet_read_problem(Path(f))) for f in files)
    return [(f, f"{reason} ({one_line(err)})") for f, reason in found if reason]


def named_file(err: Exception, files: list) -> str | None:
    """The file of ``files`` that a DuckDB error message names, if any."""
    text = str(err)
    return next((f for f in map(str, files) if f"'{f}'" in text or f'"{f}"' in text), None)


def union_source(files: list[str], keys: list | None = None) -> str:
    """A DuckDB SELECT of the rows of Parquet ``files``, columns united by name: the one way
    the store's files are read. ``keys``: each file's schema key (`jaxrl.runs.schema.Footer.key`)
    where known: files of one key are read as one list, without DuckDB reading every file's
    schema first (``union_by_name``, about a third of a millisecond a file). No columns come
    from the files' paths (``hive_partitioning``: a store under ``/data/exp=1/`` would have an
    ``exp`` column, and looking for them costs a fifth of a query over small files)."""
    groups: dict = {}
    for f, key in zip(files, keys or [None] * len(files)):
        groups.setdefault(key, []).append(f)
    return " UNION ALL BY NAME ".join(
        f"SELECT * FROM read_parquet({parquet_list(group)}, hive_partitioning=false"
        f"{', union_by_name=true' if key is None else ''})" for key, group in groups.items())


def copy_parquet(files: list[str], out: Path, keep: list[str] | None = None,
                 keys: list | None = None) -> list[tuple]:
    """Concatenate Parquet ``files`` (columns united by name; ``keys``: their schema keys, see
    `union_source`) into ``out``, only the rows of run ids ``keep`` if given. A file DuckDB
    cannot read (`unreadable`) is left out: returns them as ``[(file, reason)]``. With no file
    left, ``out`` has no rows; other errors propagate."""
    bad, files = [], [str(f) for f in files]
    keyed = dict(zip(files, keys or [None] * len(files)))
    if not files:
        return write_empty(out)
    con = _duckdb().connect()
    con.register("keep_ids", pa.table({"run_id": pa.array(keep or [], pa.string())}))
    where = "" if keep is None else " WHERE run_id IN (SELECT run_id FROM keep_ids)"
    tmp = out.with_name(f".{out.name}.{secrets.token_hex(4)}.tmp")
    try:
        while files:
            try:
                target = str(tmp).replace("'", "''")
                source = union_source(files, [keyed[f] for f in files])
                execute(con, f"COPY (SELECT * FROM ({source}){where}) TO '{target}' "
                             "(FORMAT parquet, ROW_GROUP_SIZE 122880)")
            except _duckdb().Error as err:
                found = unreadable(err, files)
                if not found:
                    raise
                bad += found
                files = [f for f in files if f not in dict(found)]
                continue
            os.replace(tmp, out)
            return bad
    finally:
        con.close()
        tmp.unlink(missing_ok=True)
    return bad + write_empty(out)


def execute(con, statement: str):
    """``con.execute(statement)``, where a Ctrl-C that DuckDB took is raised as the
    ``KeyboardInterrupt`` it was. DuckDB reports it as an ``InterruptException`` (a
    ``duckdb.Error``: callers that skip the files DuckDB cannot read would take it for one and
    go on) or, when the signal stops a statement in flight, as ``RuntimeError: Query
    interrupted`` (a traceback)."""
    try:
        return con.execute(statement)
    except _duckdb().InterruptException:
        raise KeyboardInterrupt from None
    except RuntimeError as err:
        if str(err).strip() == "Query interrupted":
            raise KeyboardInterrupt from None
        raise


def write_empty(out: Path) -> list:
    """A segment file with no rows (every segment has a file per table, so a missing one is
    a damaged catalog, not an empty table)."""
    tmp = out.with_name(f".{out.name}.{secrets.token_hex(4)}.tmp")
    pq.write_table(pa.table({"run_id": pa.array([], pa.string())}), tmp)
    os.replace(tmp, out)
    return []


def file_keys(checked) -> dict[str, str]:
    """``{file: schema key}`` from a catalog row's ``checked`` (JSON, or None: no keys)."""
    if not isinstance(checked, str):
        return {}
    return {rel: check[-1] for rel, check in json.loads(checked)["files"].items()}


def write_segment(root: Path, rows: pd.DataFrame, run_ids: list[str]) -> str | None:
    """Compact the good files of ``run_ids`` into a new segment and return its token (files of
    one schema key, ``checked``, read as one list); a file DuckDB cannot read is recorded as a
    problem of its run. None if compaction failed for another reason (the runs stay loose,
    with a warning)."""
    token = new_token()
    for table in TABLES:
        files, keys = [], []
        for rid in run_ids:
            known = file_keys(rows.at[rid, "checked"])
            for rel in json.loads(rows.at[rid, "files"]):
                if (rel == EVALUATIONS) == (table == "evaluations"):
                    files.append(root / rid / rel)
                    keys.append(known.get(rel))
        out = segment_path(root, token, table)
        try:
            bad = copy_parquet(files, out, keys=keys)
        except _duckdb().Error as err:
            warnings.warn(f"run store catalog: could not compact {len(run_ids)} runs, they are "
                          f"read from their own files ({one_line(err)})", StoreWarning,
                          stacklevel=2)
            return None
        for path, reason in bad:
            _record_problem(rows, root, Path(path), reason)
    return token


def _record_problem(rows: pd.DataFrame, root: Path, path: Path, reason: str) -> None:
    """Mark ``path`` bad in its run's row (and take it out of the run's good files)."""
    run_id, rel, _ = bad_file(root, path, reason)
    problems = [*json.loads(rows.at[run_id, "problems"]), [rel, reason, *file_stamp(path)]]
    rows.at[run_id, "problems"] = json.dumps(problems)
    rows.at[run_id, "files"] = json.dumps([f for f in json.loads(rows.at[run_id, "files"])
                                           if f != rel])


def rewrite_segments(root: Path, rows: pd.DataFrame, tokens: set[str]) -> None:
    """Replace segments ``tokens`` by one holding only the runs still assigned to them. A
    segment that cannot be read is dropped: its runs are compacted again from their files."""
    members = rows["segment"].isin(tokens)
    keep = rows.index[members].tolist()
    token = new_token()
    for table in TABLES:
        files = [segment_path(root, t, table) for t in sorted(tokens)]
        try:
            bad = copy_parquet(files, segment_path(root, token, table), keep) if keep else []
        except _duckdb().Error:
            bad = ["unreadable"]
        if bad:
            rows.loc[members, "segment"] = None
            return
    rows.loc[members, "segment"] = token if keep else None


def compact(root: Path, rows: pd.DataFrame, dirty: set[str], new: bool = True) -> None:
    """Rewrite the ``dirty`` segments (they hold stale runs); if ``new``, compact the runs
    that stopped running and merge small segments. Updates ``rows`` in place."""
    dirty &= set(rows["segment"].dropna())
    if dirty:
        rewrite_segments(root, rows, dirty)
    if not new:
        return
    todo = rows.index[rows["segment"].isna() & (rows["status"] != "running")].tolist()
    for start in range(0, len(todo), SEGMENT_RUNS):
        batch = todo[start:start + SEGMENT_RUNS]
        rows.loc[batch, "segment"] = write_segment(root, rows, batch)
    sizes = rows["segment"].value_counts()
    small = set(sizes.index[sizes < SMALL_SEGMENT_RUNS])
    if len(small) > MAX_SMALL_SEGMENTS:
        rewrite_segments(root, rows, small)


def drop_bad_segments(root: Path, rows: pd.DataFrame) -> None:
    """Forget segments with a missing or damaged file (the catalog is a cache): their runs are
    read from their own files, and compacted again."""
    for token in set(rows["segment"].dropna()):
        if any(quick_problem(segment_path(root, token, t)) for t in TABLES):
            rows.loc[rows["segment"] == token, "segment"] = None


def collect_garbage(root: Path, rows: pd.DataFrame) -> None:
    """Remove segment files no row refers to, once older than `ORPHAN_GRACE_SECONDS` (a
    query that read the previous catalog may still be reading them)."""
    used = set(rows["segment"].dropna())
    cutoff = time.time() - ORPHAN_GRACE_SECONDS
    for path in (root / CATALOG_DIR / "segments").iterdir():
        token = path.name.rsplit("-", 1)[0]
        try:
            if token not in used and path.stat().st_mtime < cutoff:
                path.unlink()
        except OSError:  # removed by a concurrent query
            continue

"""DuckDB queries over a run store: views ``runs`` (one row per run, with a ``damaged`` flag),
``metrics`` (one row per run x seed x update) and ``evaluations`` (one row per run x seed x
evaluation). Everything returns pandas DataFrames.

The views read the store's catalog (`jaxrl.runs.catalog`: one small file and a few compacted
segments instead of every file of every run; while a background compactor works through a
new store's backlog, those runs' checked files). A bad file never takes a query down: it is
skipped with a one-line `StoreWarning` naming the run and the file, and its run is flagged
``damaged`` (a backlog file whose pages DuckDB cannot read fails the query, which then runs
again without it, `_answer`); ``jaxrl runs check`` lists bad files and moves them aside
(`check`).

Queries are read-only and confined to the store. Once the views exist, DuckDB's external
access is disabled but for the files the views read (``allowed_paths``), and its
configuration locked: SQL can read no other file and write none (``COPY``, ``ATTACH`` of a
file, ``read_csv``, ``INSTALL``/``LOAD``, ``SET`` all fail). `sql` also refuses every statement
but SELECT and EXPLAIN (DESCRIBE, SHOW and SUMMARIZE are SELECTs) before running anything.
(Arrow datasets registered before the lock would need no allowed paths, but DuckDB estimates
an Arrow scan at one row and builds its joins on the wrong side: 4.5 s instead of 0.4 s for
``metrics JOIN runs`` over 10 million rows, measured.)

Length: every way a caller reads the store (the views over the catalog's segments and waiting
files, the lock-down that confines them, the statement check and its time bound, the readers of
one run, the whole-store check) shares the catalog's file lists and the one warning rule for a
bad file; split, each reader would rebuild them.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from pathlib import Path

import pandas as pd
import pyarrow as pa

try:
    import duckdb
except ImportError as missing:  # training and benches run without it (a bare GPU machine)
    _WHY = str(missing)

    class _NoDuckDB:
        """Stands in for duckdb where it is not installed: any use says so in one line."""

        Error = ()  # `except duckdb.Error` catches nothing

        def __getattr__(self, name):
            raise QueryError(f"the run store's queries need duckdb ({_WHY}): "
                             "pip install duckdb") from None

    duckdb = _NoDuckDB()

from jaxrl.runs import catalog, compactor
from jaxrl.runs.catalog import RUN_COLUMNS, TABLES
from jaxrl.runs.integrity import (
    EVALUATIONS,
    METRICS_DIR,
    BadFile,
    bad_file,
    check_store,
    chunk_files,
    file_reasons,
    foreign_files,
    leftover_temps,
    one_line,
    quarantine,
    remove_stale_temps,
    warn_bad,
)
from jaxrl.runs.listing import load_catalog, ls, runs_frame
from jaxrl.runs.schema import pinned_columns
from jaxrl.runs.segments import execute, glob_literal, union_source, unreadable
from jaxrl.runs.store import RunStore, StoreError, valid_run_id

__all__ = ["RUN_COLUMNS", "QueryError", "check", "connect", "latest", "load_evaluations",
           "load_metrics", "ls", "runs_frame", "show", "sql", "top"]

EMPTY_VIEWS = {
    "metrics": "SELECT NULL::VARCHAR AS run_id, NULL::BIGINT AS seed, NULL::BIGINT AS update "
               "WHERE false",
    "evaluations": "SELECT NULL::VARCHAR AS run_id, NULL::BIGINT AS seed, NULL::BIGINT AS update, "
                   "NULL::BIGINT AS env_steps, NULL::DOUBLE AS eval_return, "
                   "NULL::DOUBLE AS eval_return_std WHERE false",
}
READ_STATEMENTS = ("SELECT", "EXPLAIN")  # the names of the statement types a query may run
COMMENTS = re.compile(r"/\*.*?(\*/|$)|--[^\n]*", re.DOTALL)  # skipped to name a refused verb
REMOVED = "removed"  # `check`'s ``moved_to`` of a leftover temp file it removed
MAX_QUERY_CHARS = 100_000  # longer query text is refused before DuckDB parses it
ROW_CAP = 1_000_000  # rows `sql` returns at most, unless its ``limit`` says otherwise
TIMEOUT_SECONDS = 60.0  # a query running longer is interrupted
MEMORY_FRACTION = 0.5  # of the machine's memory, DuckDB's cap (its own default is 0.8)


class QueryError(ValueError):
    """A bad or refused SQL query or argument; the message is one line."""


def lock_down(con: duckdb.DuckDBPyConnection, readable: list[str]) -> None:
    """From now on ``con`` reads no file but ``readable`` (absolute paths), writes no file,
    uses at most `memory_limit` and changes no setting. (DuckDB checks both the pattern a
    view reads, `glob_literal`, and the file it names, so both are allowed.)"""
    allowed = sorted({*readable, *map(glob_literal, readable)})
    con.execute("SET allowed_paths = ?", [allowed])  # a parameter: 10x faster than a literal
    con.execute(f"SET memory_limit = '{memory_limit()}'")
    con.execute("SET enable_progress_bar = false")
    con.execute("SET python_enable_replacements = false")
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")


def _materialize(con: duckdb.DuckDBPyConnection, name: str, root: Path,
                 files: list[Path]) -> list[BadFile]:
    """Table ``name`` from the files of runs not compacted (running runs, or a store whose
    catalog cannot be written), skipping a file DuckDB cannot read; returns those."""
    bad, files = [], [str(f) for f in files]
    while files:
        try:
            execute(con, f"CREATE OR REPLACE TABLE {name} AS {union_source(files)}")
            return bad
        except duckdb.Error as err:
            found = unreadable(err, files)
            if not found:
                raise QueryError(one_line(err)) from None
            bad += [bad_file(root, Path(f), reason) for f, reason in found]
            files = [f for f in files if f not in dict(found)]
    return bad


def _table_view(con: duckdb.DuckDBPyConnection, table: str, cat: catalog.Catalog,
                skip: set) -> list[BadFile]:
    """View ``table``: its segments (less stale runs), its loose files and the files of its
    backlog (less ``skip``, read as the query runs: `_backlog`), united by name, each
    column cast to the store's type (`jaxrl.runs.schema.pinned_columns`: no file changes the
    types another run's values are read with)."""
    parts, bad = [], []
    if cat.segments[table]:
        stale = " WHERE run_id NOT IN (SELECT run_id FROM stale_runs)" if cat.stale else ""
        parts.append(f"SELECT * FROM ({union_source(_absolute(cat.segments[table]))}){stale}")
    if cat.loose[table]:
        bad = _materialize(con, f"{table}_loose", cat.root, cat.loose[table])
        parts.append(f"SELECT * FROM {table}_loose")
    files = _backlog(cat, table, skip)
    if files:
        parts.append(union_source([f for f, _ in files], [key for _, key in files]))
    source = " UNION ALL BY NAME ".join(parts) or EMPTY_VIEWS[table]
    names = [row[0] for row in execute(con, f"DESCRIBE {source}").fetchall()]
    con.execute(f"CREATE VIEW {table} AS SELECT {pinned_columns(table, names)} FROM ({source})")
    return bad


def _absolute(paths: list[Path]) -> list[str]:
    return [os.path.abspath(p) for p in paths]


def connect(store: RunStore | None = None, tables: tuple = TABLES) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with the views ``runs`` and ``tables`` (by default
    ``metrics`` and ``evaluations``), locked down (`lock_down`): its SQL reads the catalog's
    segment files and nothing else (but the good files of a backlog being compacted in the
    background, `jaxrl.runs.compactor`)."""
    duckdb.connect  # noqa: B018  without duckdb: its one-line QueryError, before any compaction
    cat = load_catalog(store, compact_new=bool(tables))
    if cat.compact_later:
        compactor.start(cat.root)
    return _connect(cat, tables, [])


def _connect(cat: catalog.Catalog, tables: tuple,
             skipped: list[BadFile]) -> duckdb.DuckDBPyConnection:
    """`connect` to the views of ``cat``, less the backlog files ``skipped``."""
    con = duckdb.connect()
    if cat.stale:
        con.register("stale_runs", pa.table({"run_id": pa.array(sorted(cat.stale), pa.string())}))
    root = os.path.abspath(cat.root)
    skip = {f"{root}/{b.run_id}/{b.file}" for b in skipped}
    found = [b for table in tables for b in _table_view(con, table, cat, skip)]
    for bad in found:
        warn_bad(bad)
    found += skipped
    runs = cat.runs
    if found:
        runs = runs.assign(damaged=runs["damaged"] | runs["run_id"].isin({b.run_id for b in found}))
    con.register("runs_df", runs)
    con.execute("CREATE VIEW runs AS SELECT * FROM runs_df")
    lock_down(con, [p for table in tables for p in [
        *_absolute(cat.segments[table]), *(f for f, _ in _backlog(cat, table, skip))]])
    return con


def _backlog(cat: catalog.Catalog, table: str, skip: set = frozenset()) -> list[tuple]:
    """``(file, schema key)`` of ``table``'s backlog (absolute paths), less ``skip``: read as
    the query runs, so a file that DuckDB cannot read fails the query (`_answer` skips it)."""
    return [(f, key) for key, group in cat.backlog[table].items() for f in group
            if f not in skip]


def _answer(store: RunStore | None, work, tables: tuple = TABLES):
    """``work(con)`` over `connect`'s views of ``store``. A file of the backlog that DuckDB
    cannot read (it passed the checks of its footer, not of its pages) fails the query: it is
    skipped, with the one-line warning of a bad file, and ``work`` runs again. A background
    compactor, if the backlog needs one, starts once the answer is in."""
    cat = load_catalog(store, compact_new=bool(tables))
    skipped: list[BadFile] = []
    backlog = [f for table in tables for f, _ in _backlog(cat, table)]
    try:
        while True:
            con = _connect(cat, tables, skipped)
            try:
                return work(con)
            except (QueryError, duckdb.Error) as err:
                found = unreadable(getattr(err, "detail", err), backlog)
                if not found:
                    raise
                root = Path(os.path.abspath(cat.root))
                for f, reason in found:
                    skipped.append(bad_file(root, Path(f), reason))
                    warn_bad(skipped[-1])
                backlog = [f for f in backlog if f not in dict(found)]
            finally:
                con.close()  # also ends a result not read to its end
    finally:
        if cat.compact_later:
            compactor.start(cat.root)


def _refusal(statement) -> str | None:
    """Why a parsed statement is refused (None: it only reads)."""
    if statement.type.name in READ_STATEMENTS:
        return None
    verb = (COMMENTS.sub(" ", statement.query).split() or [statement.type.name])[0].upper()
    return (f"refused: {verb} statements are not allowed (runs sql is read-only and confined "
            f"to the store)")


def memory_limit() -> str:
    """DuckDB's memory cap for a query: `MEMORY_FRACTION` of the machine's memory."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return "4GB"
    return f"{max(256, int(total * MEMORY_FRACTION) >> 20)}MB"


def _checked_statements(con: duckdb.DuckDBPyConnection, query: str) -> list:
    """The statements of ``query``, each one that only reads; else a `QueryError`."""
    try:
        statements = con.extract_statements(query)
    except duckdb.Error as err:
        raise QueryError(one_line(err)) from None
    if not statements:
        raise QueryError("empty query")
    for statement in statements:
        if (reason := _refusal(statement)) is not None:
            raise QueryError(reason)
    return statements


def bounded(con: duckdb.DuckDBPyConnection, work, timeout: float | None):
    """``work()`` (DuckDB calls on ``con``) in a worker thread, while this thread waits: past
    ``timeout`` seconds (None: never) the query is interrupted, a `QueryError`; a Ctrl-C
    interrupts it too and is raised as ``KeyboardInterrupt`` (DuckDB running in this thread
    would hold both off until it returned). A DuckDB error is a one-line `QueryError`."""
    box: dict = {}
    done = threading.Event()  # not Thread.join: an interrupted join can mark a thread ended

    def run() -> None:
        try:
            box["value"] = work()
        except BaseException as err:  # handed to the waiting thread
            box["error"] = err
        finally:
            done.set()

    end = None if timeout is None else time.monotonic() + timeout
    threading.Thread(target=run, daemon=True, name="jaxrl-query").start()
    try:
        while not done.wait(0.05):
            if end is not None and time.monotonic() > end:
                con.interrupt()
                done.wait()
                raise QueryError(f"the query ran longer than its time limit of {timeout:g} s "
                                 f"(--timeout S, or timeout= in Python)")
    except KeyboardInterrupt:
        while not done.wait(0.05):  # until DuckDB takes the interrupt (it may be starting)
            con.interrupt()
        raise
    if isinstance(box.get("error"), duckdb.Error):
        error = QueryError(one_line(box["error"]))
        error.detail = box["error"]  # DuckDB's own: its whole message may name a file
        raise error from None
    if "error" in box:
        raise box["error"]
    return box["value"]


def _head(result, limit: int | None) -> tuple[pd.DataFrame, bool]:
    """The first ``limit`` rows of a streaming DuckDB result (None: all) and whether it has
    more: at most ``limit`` + one vector of rows is ever fetched."""
    if limit is None:
        return result.df(), False
    vectors = max(1, -(-(limit + 1) // 2048))  # DuckDB hands rows over 2048 at a time
    frames = [result.fetch_df_chunk(vectors)]
    rows = len(frames[0])
    while 0 < rows <= limit:
        frames.append(result.fetch_df_chunk(vectors))
        if frames[-1].empty:
            break
        rows += len(frames[-1])
    frame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    return frame.head(limit), rows > limit


def sql_head(query: str, store: RunStore | None = None, limit: int | None = ROW_CAP,
             timeout: float | None = TIMEOUT_SECONDS) -> tuple[pd.DataFrame, bool]:
    """The first ``limit`` rows (None: all) of read-only SQL over the views, and whether it
    has more rows; see `sql`. Of several statements, the last one's rows (the others only
    read, so running them changes nothing)."""
    if not isinstance(query, str) or len(query) > MAX_QUERY_CHARS:
        size = f"{len(query):,} characters" if isinstance(query, str) else type(query).__name__
        raise QueryError(f"the query must be text of at most {MAX_QUERY_CHARS:,} characters, "
                         f"got {size}")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
        raise QueryError(f"limit must be a whole number >= 0 or None, got {limit!r}")
    def work(con: duckdb.DuckDBPyConnection) -> tuple[pd.DataFrame, bool]:
        statements = _checked_statements(con, query)
        return bounded(con, lambda: _head(con.execute(statements[-1].query), limit), timeout)

    return _answer(store, work)


def sql(query: str, store: RunStore | None = None, limit: int | None = ROW_CAP,
        timeout: float | None = TIMEOUT_SECONDS) -> pd.DataFrame:
    """Run read-only SQL over the views. Bounded: query text of at most `MAX_QUERY_CHARS`,
    ``timeout`` seconds (None: no limit), `memory_limit`, and ``limit`` rows (None: no cap;
    a result with more is refused, never cut silently). A refused, failing or too long
    query is a `QueryError` (one line)."""
    frame, more = sql_head(query, store, limit, timeout)
    if more:
        raise QueryError(f"the query returns more than {limit:,} rows; pass limit=N for more "
                         f"(limit=None: no cap), or aggregate in SQL")
    return frame


def show(run_id: str, store: RunStore | None = None) -> dict:
    """A run's ``run.json``; a damaged one is a `StoreError` (one line)."""
    try:
        return (store or RunStore()).load(run_id)
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise StoreError(f"run {run_id!r} is damaged: its run.json is not JSON "
                         f"({one_line(err)})") from None


def top(env: str, metric: str, k: int = 5, algo: str | None = None,
        store: RunStore | None = None, last_updates: int = 10) -> pd.DataFrame:
    """Top ``k`` finished runs on ``env`` (of ``algo``) by the final mean of ``metric``: the
    mean over seeds of the metric averaged over each seed's last ``last_updates`` updates.
    ``metric`` may also be ``final_eval_return`` (the final evaluation, IQM over seeds)."""
    def work(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
        params = [env] + ([algo] if algo else [])
        algo_clause = "AND r.algo = ?" if algo else ""
        if metric == "final_eval_return":
            return con.execute(
                f"SELECT r.run_id, r.algo, r.env, r.seeds, r.final_eval_return_iqm AS value "
                f"FROM runs r WHERE r.status = 'finished' AND r.env = ? {algo_clause} "
                f"ORDER BY value DESC NULLS LAST LIMIT {int(k)}", params).df()
        columns = {row[0] for row in con.execute("DESCRIBE metrics").fetchall()}
        if metric not in columns:
            raise QueryError(f"unknown metric {metric!r}; known: final_eval_return, "
                             f"{', '.join(sorted(columns - {'run_id', 'seed', 'update'}))}")
        return con.execute(
            f"""WITH last AS (
                  SELECT m.run_id, m.seed, avg(m."{metric}") AS v FROM metrics m
                  JOIN (SELECT run_id, seed, max(update) AS u FROM metrics GROUP BY run_id, seed) mx
                    ON m.run_id = mx.run_id AND m.seed = mx.seed
                  WHERE m.update > mx.u - {int(last_updates)} GROUP BY m.run_id, m.seed)
                SELECT r.run_id, r.algo, r.env, r.seeds, avg(last.v) AS value
                FROM runs r JOIN last ON r.run_id = last.run_id
                WHERE r.status = 'finished' AND r.env = ? {algo_clause}
                GROUP BY r.run_id, r.algo, r.env, r.seeds
                ORDER BY value DESC NULLS LAST LIMIT {int(k)}""", params).df()

    return _answer(store, work)


def latest(store: RunStore | None = None) -> pd.DataFrame:
    """The newest finished run per (algo, env)."""
    con = connect(store, tables=())
    return con.execute(
        """SELECT run_id, algo, env, seeds, final_eval_return_iqm, started_at FROM (
             SELECT *, row_number() OVER (PARTITION BY algo, env
                                          ORDER BY started_at DESC, run_id DESC) AS rn
             FROM runs WHERE status = 'finished') WHERE rn = 1 ORDER BY env, algo""").df()


def _read_good(folder: Path, files: list[str]) -> list[pd.DataFrame]:
    """The frames of the readable ``files`` (relative to the run ``folder``) that hold what the
    run's files hold (`jaxrl.runs.schema.file_problems`); each bad one is skipped with a
    warning."""
    frames = []
    for rel, reason in file_reasons(folder, files).items():
        if reason is None:
            try:
                frames.append(pd.read_parquet(folder / rel))
                continue
            except (OSError, ValueError, pa.ArrowException) as err:
                reason = one_line(err)
        warn_bad(BadFile(folder.name, rel, reason))
    return frames


def load_metrics(run_id: str, store: RunStore | None = None) -> pd.DataFrame:
    """The metrics of one run, from its own chunk files (bad ones skipped, with a warning)."""
    folder = Path((store or RunStore()).root) / valid_run_id(run_id)
    files = [f"{METRICS_DIR}/{p.name}" for p in chunk_files(folder)]
    frames = _read_good(folder, files)
    if not frames:
        raise StoreError(f"no {'readable ' if files else ''}metrics stored for run {run_id!r}")
    return pd.concat(frames, ignore_index=True)


def load_evaluations(run_id: str, store: RunStore | None = None) -> pd.DataFrame:
    """The evaluations of one run (empty if it has none, or only a bad file, with a warning)."""
    folder = Path((store or RunStore()).root) / valid_run_id(run_id)
    frames = _read_good(folder, [EVALUATIONS]) if (folder / EVALUATIONS).is_file() else []
    return frames[0] if frames else pd.DataFrame()


def check(store: RunStore | None = None, move: bool = False) -> pd.DataFrame:
    """Read every data file of the store whole: one row per bad file (``run_id``, ``file``,
    ``reason``, and ``moved_to`` when ``move``: the file is then in the store's
    ``.quarantine`` folder), per entry of the store that cannot be read (a looping link), and
    per temp file a killed write left (`leftover_temps`; ``move`` removes those older than a
    few minutes: ``moved_to`` says ``removed``), and per file in a run's ``metrics`` that the
    store did not write (`foreign_files`: never read, left in place). The catalog learns of the
    bad files, so later queries skip them."""
    root = Path((store or RunStore()).root)
    if move:  # moving files aside writes the store: one line now if it cannot be written
        (store or RunStore(root)).ensure_writable(needed_bytes=0)
    bad = check_store(root)
    catalog.record_check(root, bad)
    temps = leftover_temps(root)
    found = sorted(bad + temps + foreign_files(root), key=lambda b: b.run_id)
    frame = pd.DataFrame(found, columns=list(BadFile._fields))
    if move:
        done = {src: str(dst) for src, dst in quarantine(root, bad)}
        done.update((path, REMOVED) for path in remove_stale_temps(root, temps))
        frame["moved_to"] = [done.get(root / b.run_id / b.file) for b in found]
    return frame

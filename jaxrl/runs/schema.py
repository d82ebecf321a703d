"""The store's tables and their column types, and the check that keeps a Parquet file out of
them unless it holds what its run folder says it holds.

::

    metrics      metrics/chunk-*.parquet   run_id VARCHAR, seed BIGINT, update BIGINT,
                                           and every metric DOUBLE
    evaluations  evaluations.parquet       run_id VARCHAR, seed, update, env_steps BIGINT,
                                           eval_return, eval_return_std DOUBLE

Queries unite every run's files by column name, so one file of another shape would change the
answers for every run: a text ``episode_return_mean`` turns the column to text for all of
them, a ``run_id`` of another run counts its rows as that run's. `file_problems` says why a
file cannot join: a column of a type that does not cast exactly to the store's (text where a
number goes; int32 seeds and float32 metrics cast exactly and are fine), a column missing or
doubled, a ``run_id`` other than its run folder's name, and, for a metrics chunk, metric names
other than those its run's ``run.json`` records (``metric_names``, written with the first
chunk), or, for a run written before they were recorded, other than those of most of its
run's chunks (the earliest chunk's on a tie). Such a file is
bad like a truncated one: skipped by queries, its run flagged ``damaged``, listed by ``jaxrl
runs check``. The views cast every column to the store's type (`pinned_columns`), so no file
can change another run's types either.

The check reads a file's footer alone (its bytes, parsed by pyarrow: about 0.15 ms a file,
against ~0.05 ms for `jaxrl.runs.integrity.quick_problem`'s look at its two ends), once per
file: the catalog keeps its verdicts, with each file's size and mtime, and reads again only the
files that changed (`jaxrl.runs.catalog`); a process caches footers by path, size and mtime.
``run_id`` values come from the footer's statistics (min = max = the run's id, no nulls) where
the writer kept them; otherwise, and in a deep check, from the column itself. A file that can
join has a schema key (`Footer.key`: its columns' names and types), by which the files of runs
not yet compacted are read without DuckDB reading every file's schema first.
"""

from __future__ import annotations

import functools
import hashlib
import os
import struct
import threading
from collections import Counter
from pathlib import Path
from typing import NamedTuple

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from jaxrl.runs.files import one_line
from jaxrl.runs.layout import EVALUATIONS

try:  # the reader behind pyarrow.parquet.ParquetFile
    from pyarrow._parquet import ParquetReader as _ParquetReader
except ImportError:  # pragma: no cover  (another pyarrow layout: the public way)
    _ParquetReader = None

KEY_TYPES = {"run_id": "VARCHAR", "seed": "BIGINT", "update": "BIGINT"}
TYPES = {"metrics": KEY_TYPES,  # and every other column (a metric) DOUBLE
         "evaluations": {**KEY_TYPES, "env_steps": "BIGINT", "eval_return": "DOUBLE",
                         "eval_return_std": "DOUBLE"}}
METRIC_TYPE = "DOUBLE"


def sql_type(table: str, column: str) -> str:
    """The type a column of ``table`` (``metrics`` or ``evaluations``) has in the views."""
    return TYPES[table].get(column, METRIC_TYPE)


def pinned_columns(table: str, names: list[str]) -> str:
    """A SELECT list casting each column of ``names`` to its type in ``table`` (`sql_type`)."""
    quoted = ['"' + n.replace('"', '""') + '"' for n in names]
    return ", ".join(f"CAST({q} AS {sql_type(table, n)}) AS {q}" for q, n in zip(quoted, names))


@functools.cache
def casts_exactly(arrow_type: pa.DataType, sql: str) -> bool:
    """Whether every value of ``arrow_type`` has the same value as SQL type ``sql``."""
    t = arrow_type
    if pa.types.is_dictionary(t):
        return casts_exactly(t.value_type, sql)
    small_int = ((pa.types.is_signed_integer(t) or pa.types.is_unsigned_integer(t))
                 and t.bit_width <= 32)
    if pa.types.is_null(t):
        return True
    if sql == "VARCHAR":
        return pa.types.is_string(t) or pa.types.is_large_string(t)
    if sql == "BIGINT":
        return pa.types.is_signed_integer(t) or small_int
    return pa.types.is_floating(t) or small_int


class Footer(NamedTuple):
    """What a Parquet file's footer says: its columns' names and types, its rows, and its
    ``run_id`` values (``(min, max)`` when every row group's statistics give them with no
    nulls, else None)."""

    names: tuple[str, ...]
    types: tuple[pa.DataType, ...]
    rows: int
    run_ids: tuple[str, str] | None

    @property
    def key(self) -> str:
        """A short digest of the columns' names and types: files with the same key can be read
        as one list by DuckDB, without ``union_by_name``."""
        return _schema_key(self.names, self.types)


@functools.lru_cache(maxsize=1024)  # a store has a few schemas, shared by thousands of files
def _schema_key(names: tuple[str, ...], types: tuple[pa.DataType, ...]) -> str:
    text = repr([(n, str(t)) for n, t in zip(names, types)])
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def _metadata(path: str, size: int) -> pq.FileMetaData:
    """The Parquet footer of ``path`` (``size`` bytes), read as bytes and parsed from memory
    by pyarrow's reader (a quarter less time than `pyarrow.parquet.read_metadata` on the path,
    whose ``ParquetFile`` also maps every column's path for reads to come)."""
    with open(path, "rb") as f:
        f.seek(max(0, size - 8))
        tail = f.read(8)
        length = struct.unpack("<I", tail[:4])[0] if len(tail) == 8 else size
        if tail[4:] != b"PAR1" or length + 12 > size:
            return pq.read_metadata(path)  # not a whole footer: pyarrow says why
        f.seek(size - 8 - length, os.SEEK_SET)
        footer = pa.BufferReader(b"PAR1" + f.read(length) + tail)
    if _ParquetReader is None:
        return pq.read_metadata(footer)
    reader = _ParquetReader()
    reader.open(footer)  # what ParquetFile does first; the same errors
    return reader.metadata


_RECENT_SCHEMAS: list = []  # [(parquet schema, key-value metadata, (names, types))], newest first
_RECENT_LOCK = threading.Lock()  # `jaxrl.runs.integrity.check_store` reads footers in threads


def _arrow_columns(meta: pq.FileMetaData) -> tuple[tuple[str, ...], tuple[pa.DataType, ...]]:
    """The Arrow names and types of a footer's columns. They follow from its Parquet schema and
    its key-value metadata (pyarrow's ``ARROW:schema``) alone, so each of the few schemas of a
    store is converted once (a third of the time of reading a footer, otherwise)."""
    schema, extra = meta.schema, meta.metadata
    with _RECENT_LOCK:
        for i, (known, known_extra, columns) in enumerate(_RECENT_SCHEMAS):
            if known_extra == extra and known.equals(schema):
                _RECENT_SCHEMAS.insert(0, _RECENT_SCHEMAS.pop(i))
                return columns
    arrow = schema.to_arrow_schema()
    columns = (tuple(arrow.names), tuple(arrow.types))
    with _RECENT_LOCK:
        _RECENT_SCHEMAS.insert(0, (schema, extra, columns))
        del _RECENT_SCHEMAS[8:]
    return columns


@functools.lru_cache(maxsize=4096)  # a long-lived process re-reading its running runs' chunks
def _footer(path: str, size: int, mtime_ns: int) -> Footer:
    """`read_footer`, cached by the file's identity (a rewrite changes size or mtime)."""
    del mtime_ns
    meta = _metadata(path, size)
    names, types = _arrow_columns(meta)
    column = names.index("run_id") if names.count("run_id") == 1 else -1
    run_ids = None
    if column >= 0 and meta.num_columns == len(names) and meta.num_row_groups:
        stats = [meta.row_group(g).column(column).statistics for g in range(meta.num_row_groups)]
        if all(s is not None and s.has_min_max and s.has_null_count and s.null_count == 0
               for s in stats):
            run_ids = (min(s.min for s in stats), max(s.max for s in stats))
    return Footer(names, types, meta.num_rows, run_ids)


def read_footer(path: Path) -> Footer:
    """The `Footer` of a Parquet file (an ``OSError`` or ``pyarrow`` error if unreadable)."""
    st = path.stat()
    return _footer(str(path), st.st_size, st.st_mtime_ns)


def columns_problem(footer: Footer, table: str) -> str | None:
    """Why the columns of a file of ``table`` cannot join it, judged alone (None: they can)."""
    return _columns_problem(footer.names, footer.types, table)


@functools.lru_cache(maxsize=1024)
def _columns_problem(names: tuple[str, ...], types: tuple[pa.DataType, ...],
                     table: str) -> str | None:
    if len(set(names)) < len(names):
        doubled = sorted({n for n in names if names.count(n) > 1})
        return f"column names appear twice: {', '.join(doubled)[:200]}"
    required = TYPES[table]
    if table == "evaluations" and set(names) != set(required):
        return differing(set(names), set(required), "the store's evaluations")
    missing = [n for n in required if n not in names]
    if missing:
        return f"no {', '.join(missing)} column"
    for name, arrow_type in zip(names, types):
        sql = sql_type(table, name)
        if not casts_exactly(arrow_type, sql):
            return (f"column {name!r:.60} holds {arrow_type}, which does not read exactly as "
                    f"the store's {sql}")
    return None


def differing(names: set, expected: set, whose: str) -> str:
    """Why column ``names`` are not ``expected``: ``columns differ from <whose>: missing a;
    extra b``."""
    parts = [f"{label} {', '.join(sorted(cols))[:200]}"
             for label, cols in (("missing", expected - names), ("extra", names - expected))
             if cols]
    return f"columns differ from {whose}: {'; '.join(parts)}"


def run_id_problem(path: Path, footer: Footer, run_id: str, deep: bool) -> str | None:
    """Why the ``run_id`` values of ``path`` are not all ``run_id`` (None: they are). From the
    footer's statistics where they settle it, else (and when ``deep``) from the column."""
    if footer.rows == 0:
        return None
    if footer.run_ids is not None and not deep:
        low, high = footer.run_ids
        if low == high == run_id:
            return None
        return _other_run(high if low == run_id else low)
    column = pq.read_table(path, columns=["run_id"]).column("run_id").cast(pa.string())
    if column.null_count:
        return f"{column.null_count} rows have no run_id"
    others = pc.unique(column.filter(pc.not_equal(column, run_id)))
    return _other_run(others[0].as_py()) if len(others) else None


def _other_run(value) -> str:
    return f"rows of another run: run_id {value!r:.60}"


def file_problems(folder: Path, rels: list[str], deep: bool = False,
                  recorded: list[str] | None = None) -> dict[str, str]:
    """``{file: reason}`` for the files ``rels`` of the run folder ``folder`` (metrics chunks
    and evaluations, relative to it, each a whole Parquet file) that cannot join the store's
    tables (see the module docstring); ``deep`` reads ``run_id`` values from the column even
    where the footer's statistics give them. ``recorded``: the metric names the run's
    ``run.json`` records (``metric_names``), which every chunk must hold exactly; a run written
    before they were recorded has its chunks compared with each other instead."""
    return file_checks(folder, rels, deep, recorded)[0]


def file_checks(folder: Path, rels: list[str], deep: bool = False,
                recorded: list[str] | None = None) -> tuple[dict[str, str], dict[str, str]]:
    """``(problems, keys)``: `file_problems`, and the schema key (`Footer.key`) of each file
    of ``rels`` that can join."""
    problems, names, keys = {}, {}, {}
    for rel in rels:
        path = folder / rel
        table = "evaluations" if rel == EVALUATIONS else "metrics"
        try:
            footer = read_footer(path)
            reason = (columns_problem(footer, table)
                      or run_id_problem(path, footer, folder.name, deep))
        except (OSError, pa.ArrowException) as err:
            problems[rel] = f"unreadable Parquet: {one_line(err)}"
            continue
        if reason:
            problems[rel] = reason
            continue
        keys[rel] = footer.key
        if table == "metrics":
            names[rel] = frozenset(footer.names)
    if recorded is not None:
        usual, whose = frozenset([*KEY_TYPES, *recorded]), "the metric names its run records"
    elif names:
        counts = Counter(names.values())  # in chunk order: a tie goes to the earliest chunk
        usual, whose = max(counts, key=counts.get), "the run's other chunks"
    problems.update({rel: differing(cols, usual, whose)
                     for rel, cols in names.items() if cols != usual})
    return problems, {rel: key for rel, key in keys.items() if rel not in problems}

"""Which files of a run store are readable, and moving the bad ones aside.

A run folder's data files are ``run.json``, ``metrics/chunk-*.parquet`` and
``evaluations.parquet``. A bad one (truncated, empty, not Parquet, not JSON) must never take a
query down: queries skip it with a one-line `StoreWarning` naming the run and the file, and flag
the run ``damaged``. Two depths of check:

* `quick_problem`: what every query does to a file it has not seen before. Parquet: the magic
  bytes at both ends and a footer length that fits the file, which catches every truncation
  (the footer is at the end), empty and foreign files, in ~50 µs a file (reading the footer
  itself with pyarrow costs 0.3-1.5 ms a file: 15-75 s for 50,000 chunks). JSON: it parses to
  an object whose fields are sound (`jaxrl.runs.runmeta.validate_meta`).
* `deep_problem`: reads the whole file (``jaxrl runs check``).

Nothing here deletes: `quarantine` moves bad files to ``<root>/.quarantine/<run_id>/<file>``,
and a run with quarantined files stays flagged ``damaged``.
"""

from __future__ import annotations

import json
import os
import struct
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

import pyarrow.parquet as pq

from jaxrl.runs.layout import (  # noqa: F401  (re-exported: the store's file names)
    CHUNK_GLOB,
    EVALUATIONS,
    METRICS_DIR,
    QUARANTINE_DIR,
    RUN_JSON,
    named_runs,
    quarantined_runs,
)
from jaxrl.runs.runmeta import sound_part, validate_meta

PARQUET_MAGIC = b"PAR1"


class StoreWarning(UserWarning):
    """A bad file skipped by a query (one line: the run, the file, the reason)."""


class BadFile(NamedTuple):
    """A data file that cannot be read: ``file`` is relative to the run folder."""

    run_id: str
    file: str
    reason: str


def bad_file(root: Path, path: Path, reason: str) -> BadFile:
    """The `BadFile` of ``path``, a file inside a run folder of the store at ``root``."""
    rel = Path(path).relative_to(root)
    return BadFile(rel.parts[0], Path(*rel.parts[1:]).as_posix(), reason)


def warn_bad(bad: BadFile) -> None:
    """The one-line warning of a skipped file."""
    warnings.warn(f"run {bad.run_id}: skipping bad file {bad.file} ({bad.reason})",
                  StoreWarning, stacklevel=3)


def is_run_folder(path: Path) -> bool:
    """A folder of the store that holds a run: not hidden, with a ``run.json`` or some data
    (so a run whose ``run.json`` is gone is still listed, as damaged; a run folder being
    created, with no ``run.json`` yet and no data, is not a run yet)."""
    if path.name.startswith(".") or not path.is_dir():
        return False
    return ((path / RUN_JSON).exists() or (path / EVALUATIONS).exists()
            or bool(chunk_files(path)))


def run_folders(root: Path) -> list[Path]:
    """The run folders of a store, sorted by run id (a folder whose name is not a run id is
    skipped with a warning)."""
    if not root.is_dir():
        return []
    return named_runs(sorted(p for p in root.iterdir() if is_run_folder(p)))


def chunk_files(folder: Path) -> list[Path]:
    """A run's metrics chunks, in order (hidden temp files excluded)."""
    return sorted((folder / METRICS_DIR).glob(CHUNK_GLOB))


def data_files(folder: Path) -> list[str]:
    """The data files a run folder holds, relative to it: run.json, chunks, evaluations."""
    files = [RUN_JSON] if (folder / RUN_JSON).exists() else []  # a folder named so is bad too
    files += [f"{METRICS_DIR}/{p.name}" for p in chunk_files(folder)]
    return files + ([EVALUATIONS] if (folder / EVALUATIONS).is_file() else [])


def parquet_footer_problem(path: Path) -> str | None:
    """Why ``path`` is not a whole Parquet file, judged from its two ends; None if it looks
    whole. A truncated file always fails: its footer (and end magic) is what is cut."""
    try:
        size = path.stat().st_size
        if size < 12:
            return f"{size} bytes, too small for Parquet"
        with open(path, "rb") as f:
            head = f.read(4)
            f.seek(-8, os.SEEK_END)
            tail = f.read(8)
    except OSError as err:
        return f"unreadable: {err.strerror}"
    (footer_len,) = struct.unpack("<I", tail[:4])
    if head != PARQUET_MAGIC or tail[4:] != PARQUET_MAGIC:
        return "no Parquet magic bytes (truncated or not Parquet)"
    if footer_len + 12 > size:
        return "Parquet footer longer than the file (truncated)"
    return None


def parquet_read_problem(path: Path) -> str | None:
    """Why ``path`` cannot be read whole by pyarrow; None if it can."""
    problem = parquet_footer_problem(path)
    if problem:
        return problem
    try:
        pq.read_table(path)
    except Exception as err:  # pyarrow raises many kinds; each means a bad file
        return one_line(err)
    return None


def run_json_problem(path: Path) -> str | None:
    """Why ``run.json`` cannot be used; None if it is a JSON object with sound fields."""
    return read_run_json(path)[1]


def read_run_json(path: Path) -> tuple[dict | None, str | None]:
    """``(meta, None)`` for a sound ``run.json``; ``(None, reason)`` when it is missing, not a
    file or not a JSON object; ``(its sound fields, reason)`` when some fields are bad
    (`jaxrl.runs.runmeta.validate_meta`)."""
    try:
        meta = json.loads(path.read_text())
    except FileNotFoundError:
        return None, "missing"
    except OSError as err:
        return None, f"unreadable: {err.strerror}"
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as err:
        return None, f"not JSON: {one_line(err)}"
    problems = validate_meta(meta)
    if not isinstance(meta, dict):
        return None, problems[0]
    return (sound_part(meta), "; ".join(problems)) if problems else (meta, None)


def quick_problem(path: Path) -> str | None:
    """The cheap check queries make (see the module docstring)."""
    return run_json_problem(path) if path.suffix == ".json" else parquet_footer_problem(path)


def deep_problem(path: Path) -> str | None:
    """The full check of ``jaxrl runs check``: the whole file is read."""
    return run_json_problem(path) if path.suffix == ".json" else parquet_read_problem(path)


def one_line(err: BaseException) -> str:
    """The first line of an error message (DuckDB and pyarrow append context lines)."""
    text = str(err).strip().splitlines()
    return text[0] if text else type(err).__name__


def run_json_missing(folder: Path) -> bool:
    """A run folder without ``run.json`` that was not moved to quarantine (a quarantined
    file is known: its run is flagged damaged, and there is nothing more to report)."""
    return (not (folder / RUN_JSON).exists()
            and not (folder.parent / QUARANTINE_DIR / folder.name / RUN_JSON).exists())


def check_run(folder: Path, deep: bool = True) -> list[BadFile]:
    """The bad data files of one run folder (a missing ``run.json`` is one)."""
    check = deep_problem if deep else quick_problem
    bad = [BadFile(folder.name, RUN_JSON, "missing")] if run_json_missing(folder) else []
    for rel in data_files(folder):
        reason = check(folder / rel)
        if reason:
            bad.append(BadFile(folder.name, rel, reason))
    return bad


def check_store(root: Path, deep: bool = True, workers: int | None = None) -> list[BadFile]:
    """Every bad data file of the store, by run id then file (threads: pyarrow reads release
    the GIL)."""
    folders = run_folders(Path(root))
    with ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 1) as pool:
        found = pool.map(lambda f: check_run(f, deep), folders)
        return [bad for run in found for bad in run]


def quarantine_path(root: Path, bad: BadFile) -> Path:
    """Where a bad file goes: ``<root>/.quarantine/<run_id>/<file>``, with ``.1``, ``.2`` ...
    appended if a file of that name was quarantined before."""
    target = Path(root) / QUARANTINE_DIR / bad.run_id / bad.file
    candidate, n = target, 0
    while candidate.exists():
        n += 1
        candidate = target.with_name(f"{target.name}.{n}")
    return candidate


def quarantine(root: Path, bad_files: list[BadFile]) -> list[tuple[Path, Path]]:
    """Move each bad file aside (never delete); returns ``(from, to)`` of the files moved (a
    missing file, such as an absent ``run.json``, has nothing to move)."""
    moved = []
    for bad in bad_files:
        source = Path(root) / bad.run_id / bad.file
        if not source.exists():  # a missing run.json has nothing to move; a folder named so moves
            continue
        target = quarantine_path(root, bad)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.rename(source, target)
        moved.append((source, target))
    return moved

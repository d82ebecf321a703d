"""Which files of a run store are readable, and moving the bad ones aside.

A run folder's data files are ``run.json``, ``metrics/chunk-*.parquet`` and
``evaluations.parquet``. A bad one (truncated, empty, not Parquet, not JSON) must never take a
query down: queries skip it with a one-line `StoreWarning` naming the run and the file, and flag
the run ``damaged``. Two depths of check:

* `quick_problem`: what every query does to a file it has not seen before. Parquet: the magic
  bytes at both ends and a footer length that fits the file, which catches every truncation
  (the footer is at the end), empty and foreign files, in ~50 µs a file. JSON: it parses to
  an object whose fields are sound (`jaxrl.runs.runmeta.validate_meta`).
* `deep_problem`: reads the whole file (``jaxrl runs check``).

A Parquet file that passes is then checked against its run (`jaxrl.runs.schema.file_problems`:
the store's columns and types, its own ``run_id``), the deep check reading the ``run_id``
values themselves. ``jaxrl runs check`` also lists the temp files a killed write left in a
run folder (`leftover_temps`), and a link at the top of the store that loops.

Nothing here deletes data: `quarantine` moves bad files to
``<root>/.quarantine/<run_id>/<file>`` (copied, then removed, from a run folder on another
file system), and a run with quarantined files stays flagged ``damaged``; only leftover temp
files, never data, are removed (`remove_stale_temps`).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import struct
import time
import warnings
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import NamedTuple

import pyarrow.parquet as pq

from jaxrl.runs import schema
from jaxrl.runs.files import StoreError, one_line
from jaxrl.runs.layout import (  # noqa: F401  (re-exported: the store's file names)
    CHUNK_GLOB,
    EVALUATIONS,
    METRICS_DIR,
    QUARANTINE_DIR,
    RUN_JSON,
    TEMP_NAME,
    is_chunk_name,
    named_runs,
    quarantined_runs,
    top_folders,
)
from jaxrl.runs.runmeta import sound_part, validate_meta

PARQUET_MAGIC = b"PAR1"
FOREIGN = ("not a file the store writes (chunks are named chunk-NNNNN.parquet): never read; "
           "remove it or move it out of the run")
TEMP_GRACE_SECONDS = 600  # a temp file older than this is no write under way: a killed one's


class StoreWarning(UserWarning):
    """A bad file skipped by a query (one line: the run, the file, the reason)."""


class BadFile(NamedTuple):
    """A data file that cannot be read: ``file`` is relative to the run folder."""

    run_id: str
    file: str
    reason: str


def file_stamp(path: Path | str) -> tuple[int, int]:
    """``(size, mtime_ns)`` of ``path``, what a recorded verdict on it is valid for; ``(-1, -1)``
    where it cannot be read."""
    try:
        st = os.stat(path)
    except OSError:
        return -1, -1
    return st.st_size, st.st_mtime_ns


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
    skipped with a warning; an entry that cannot be read, such as a looping link, is left to
    `unreadable_entries`)."""
    if not root.is_dir():
        return []
    folders = sorted(Path(entry.path) for entry in top_folders(root)[0])
    return named_runs(p for p in folders if is_run_folder(p))


def unreadable_entries(root: Path) -> list[BadFile]:
    """The entries at the top of the store that cannot be read (a symbolic link that loops),
    each a `BadFile` whose ``file`` is ``.`` (the entry itself)."""
    if not root.is_dir():
        return []
    return [BadFile(name, ".", reason) for name, reason in sorted(top_folders(root)[1])]


def chunk_files(folder: Path) -> list[Path]:
    """A run's metrics chunks, in order: only the files the store writes (`is_chunk_name`), so
    a copy (``chunk-00000 (copy).parquet``) or a temp file never joins the run."""
    metrics = folder / METRICS_DIR
    try:
        names = os.listdir(metrics)
    except OSError:  # none, not a folder, unreadable
        return []
    return [metrics / name for name in sorted(names) if is_chunk_name(name)]


def foreign_files(root: Path) -> list[BadFile]:
    """The files in the run folders' ``metrics`` that the store did not write (not a chunk
    name, not a temp file of a write): never read, listed by ``jaxrl runs check``."""
    found = []
    for folder in run_folders(Path(root)):
        metrics = folder / METRICS_DIR
        names = sorted(p.name for p in metrics.iterdir()) if metrics.is_dir() else []
        found += [BadFile(folder.name, f"{METRICS_DIR}/{name}", FOREIGN) for name in names
                  if not is_chunk_name(name) and not TEMP_NAME.fullmatch(name)]
    return found


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


def run_json_missing(folder: Path) -> bool:
    """A run folder without ``run.json`` that was not moved to quarantine (a quarantined
    file is known: its run is flagged damaged, and there is nothing more to report)."""
    return (not (folder / RUN_JSON).exists()
            and not (folder.parent / QUARANTINE_DIR / folder.name / RUN_JSON).exists())


def check_run(folder: Path, deep: bool = True) -> list[BadFile]:
    """The bad data files of one run folder (a missing ``run.json`` is one): each file alone,
    then its Parquet files against the run (`jaxrl.runs.schema.file_problems`)."""
    bad = [BadFile(folder.name, RUN_JSON, "missing")] if run_json_missing(folder) else []
    reasons = file_reasons(folder, data_files(folder), deep_problem if deep else quick_problem,
                           deep)
    return bad + [BadFile(folder.name, rel, reason) for rel, reason in reasons.items() if reason]


def file_reasons(folder: Path, rels: list[str], check=quick_problem, deep: bool = False,
                 meta: dict | None = None) -> dict[str, str | None]:
    """``{file: why it is bad, or None}`` for the data files ``rels`` of the run ``folder``
    (relative to it): each checked alone (``check``: a path's problem or None), then the
    Parquet files that passed, against the run (`jaxrl.runs.schema.file_problems`, ``deep``:
    reading their ``run_id`` values; ``meta``: the run's ``run.json``, read here if None)."""
    return file_checks(folder, rels, check, deep, meta)[0]


def file_checks(folder: Path, rels: list[str], check=quick_problem, deep: bool = False,
                meta: dict | None = None) -> tuple[dict[str, str | None], dict[str, str]]:
    """``(reasons, keys)``: `file_reasons`, and the schema key of each Parquet file that can
    join (`jaxrl.runs.schema.Footer.key`)."""
    reasons = {rel: check(folder / rel) for rel in rels}
    whole = [rel for rel, reason in reasons.items() if reason is None and rel != RUN_JSON]
    if meta is None:
        meta = read_run_json(folder / RUN_JSON)[0] or {}
    problems, keys = schema.file_checks(folder, whole, deep, meta.get("metric_names"))
    reasons.update(problems)
    return reasons, keys


def check_store(root: Path, deep: bool = True, workers: int | None = None) -> list[BadFile]:
    """Every bad data file of the store, by run id then file (threads: pyarrow reads release
    the GIL), and every entry at its top that cannot be read (`unreadable_entries`)."""
    folders = run_folders(Path(root))
    with ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 1) as pool:
        found = pool.map(lambda f: check_run(f, deep), folders)
        bad = [bad for run in found for bad in run]
    return sorted(bad + unreadable_entries(Path(root)), key=lambda b: b.run_id)


def leftover_temps(root: Path, now: float | None = None) -> list[BadFile]:
    """The temp files in the run folders (and their ``metrics``): a write that a kill cut
    short leaves one (`jaxrl.runs.files.atomic_write_bytes`: never read, never data). One
    younger than `TEMP_GRACE_SECONDS` may be a write under way, and says so."""
    now = time.time() if now is None else now
    found = []
    for folder in run_folders(Path(root)):
        for path in sorted([*folder.glob(".*.tmp"), *(folder / METRICS_DIR).glob(".*.tmp")]):
            if not TEMP_NAME.fullmatch(path.name):
                continue
            stale = _age(path, now) > TEMP_GRACE_SECONDS
            found.append(BadFile(folder.name, path.relative_to(folder).as_posix(),
                                 "temp file of a write cut short (a killed process)" if stale
                                 else "temp file of a write under way (or cut short minutes "
                                      "ago): kept"))
    return found


def _age(path: Path, now: float) -> float:
    try:
        return now - path.lstat().st_mtime
    except OSError:
        return 0.0


def remove_stale_temps(root: Path, temps: list[BadFile], now: float | None = None) -> list[Path]:
    """Remove the temp files of ``temps`` (`leftover_temps`) older than `TEMP_GRACE_SECONDS`;
    returns those removed."""
    now = time.time() if now is None else now
    removed = []
    for temp in temps:
        path = Path(root) / temp.run_id / temp.file
        if _age(path, now) > TEMP_GRACE_SECONDS:
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed


def quarantine_path(root: Path, bad: BadFile) -> Path:
    """Where a bad file goes: ``<root>/.quarantine/<run_id>/<file>``, with ``.1``, ``.2`` ...
    appended if a file of that name was quarantined before."""
    target = Path(root) / QUARANTINE_DIR / bad.run_id / bad.file
    candidate, n = target, 0
    while os.path.lexists(candidate):
        n += 1
        candidate = target.with_name(f"{target.name}.{n}")
    return candidate


def quarantine(root: Path, bad_files: list[BadFile]) -> list[tuple[Path, Path]]:
    """Move each bad file aside (never delete); returns ``(from, to)`` of the files moved (a
    missing file, such as an absent ``run.json``, has nothing to move; a link is moved
    itself, a looping one too). A file that cannot be moved is a one-line `StoreError`."""
    moved = []
    for bad in bad_files:
        source = Path(root) / bad.run_id / bad.file
        if not os.path.lexists(source):  # a missing run.json: nothing to move
            continue
        target = quarantine_path(root, bad)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            move(source, target)
        except OSError as err:
            raise StoreError(f"cannot move {source} to {target}: {err.strerror or err}"
                             f"{_moved_so_far(moved)}") from None
        moved.append((source, target))
    return moved


def _moved_so_far(moved: list) -> str:
    return f" ({len(moved)} files moved before it)" if moved else ""


def move(source: Path, target: Path) -> None:
    """Rename ``source`` (a file, a link or a folder) to ``target``; from another file system
    (``EXDEV``: a run folder that is a mount or a link to another disk) copy it beside the
    target, rename the copy into place, then remove ``source``: the target is whole or
    absent, and the source goes only once it is."""
    try:
        os.rename(source, target)
        return
    except OSError as err:
        if err.errno != errno.EXDEV:
            raise
    partial = target.with_name(f".{target.name}.partial")
    try:
        if source.is_dir() and not source.is_symlink():
            shutil.copytree(source, partial, symlinks=True)
        else:
            shutil.copy2(source, partial, follow_symlinks=False)
        os.rename(partial, target)
    except BaseException:
        with contextlib.suppress(OSError):
            _remove(partial)
        raise
    _remove(source)


def _remove(path: Path) -> None:
    """Remove a file, link or folder if it exists."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()

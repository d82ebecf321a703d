"""Where a run store keeps things, and the cheap facts about its run folders (standard library
only, so `jaxrl runs ls` can answer without loading pandas or Arrow).

::

    <root>/                      $JAXRL_RUNS_DIR, or ./runs
        <run_id>/run.json        what the run is, its status and summary
        <run_id>/metrics/        chunk-*.parquet, one per chunk of updates
        <run_id>/evaluations.parquet
        .catalog/                the catalog (`jaxrl.runs.catalog`), a cache of the above
        .quarantine/<run_id>/    bad files moved aside by ``jaxrl runs check --quarantine``
"""

from __future__ import annotations

import os
import re
import warnings
from pathlib import Path

DEFAULT_ROOT = "runs"
RUN_JSON = "run.json"
EVALUATIONS = "evaluations.parquet"
METRICS_DIR = "metrics"
CHUNK_GLOB = "chunk-*.parquet"
# the only names a run's metrics chunks have (`chunk_name`): a file matching `CHUNK_GLOB` but not
# this (``chunk-00000 (copy).parquet``) is a foreign file, never read
CHUNK_NAME = re.compile(r"chunk-[0-9]{5,}\.parquet")
QUARANTINE_DIR = ".quarantine"
CATALOG_DIR = ".catalog"
# the temp file of a write (`jaxrl.runs.files.atomic_write_bytes`): ".<name>.<8 hex>.tmp"
TEMP_NAME = re.compile(r"\..+\.[0-9a-f]{8}\.tmp")

Fingerprint = tuple[int, int, int, int]
# A run id (and a sweep, bench or demonstration-set id) is one folder name: what `stamped_id`
# makes (letters, digits, "-", "_"), and at most "." besides; never a path, never hidden.
ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")
ID_RULE = "one name of letters, digits, '.', '_' and '-', never a path"


def chunk_name(index: int) -> str:
    """The file name of a run's metrics chunk ``index`` (what the store writes)."""
    return f"chunk-{index:05d}.parquet"


def is_chunk_name(name: str) -> bool:
    """Whether ``name`` is a metrics chunk's file name as the store writes it (`chunk_name`)."""
    return bool(CHUNK_NAME.fullmatch(name))


def is_run_id(name: object) -> bool:
    """Whether ``name`` is a valid run id (`ID_PATTERN`, no ``..``)."""
    return isinstance(name, str) and bool(ID_PATTERN.fullmatch(name)) and ".." not in name


def default_root() -> Path:
    return Path(os.environ.get("JAXRL_RUNS_DIR", DEFAULT_ROOT))


def store_root(runs_dir: os.PathLike | str | None) -> Path:
    """The store a command reads: ``runs_dir``, else `default_root`."""
    return Path(runs_dir) if runs_dir is not None else default_root()


def _mtime(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return -1


def fingerprint(entry: os.DirEntry) -> Fingerprint:
    """(folder mtime, metrics folder mtime, run.json size, run.json mtime); -1 where absent.
    The store writes every file by renaming a temp file into place, so a new chunk, new
    evaluations or a rewritten ``run.json`` changes it."""
    try:
        st = os.stat(f"{entry.path}/{RUN_JSON}")
        json_size, json_mtime = st.st_size, st.st_mtime_ns
    except OSError:
        json_size = json_mtime = -1
    return entry.stat().st_mtime_ns, _mtime(f"{entry.path}/{METRICS_DIR}"), json_size, json_mtime


def top_folders(root: Path) -> tuple[list[os.DirEntry], list[tuple[str, str]]]:
    """The visible folders at the top of the store (links to folders included), and ``(name,
    reason)`` of the entries that cannot be told to be one or not (a symbolic link that loops,
    named like a run id or not: ``Too many levels of symbolic links``). A dangling link is
    neither: there is nothing behind it."""
    folders, unreadable = [], []
    with os.scandir(root) as entries:
        for entry in entries:
            if entry.name.startswith("."):
                continue
            try:
                if entry.is_dir():
                    folders.append(entry)
            except OSError as err:
                unreadable.append((entry.name, f"unreadable: {err.strerror or err}"))
    return folders, unreadable


def scan(root: Path) -> dict[str, Fingerprint]:
    """``{run_id: fingerprint}`` of the folders that may hold a run (not hidden; with a
    ``run.json``, a ``metrics`` folder or evaluations). A folder whose name is not a run id
    (`is_run_id`, e.g. a copy named ``2*``) and an entry that cannot be read (a looping link)
    are skipped with a warning."""
    seen = {}
    folders, unreadable = top_folders(root)
    for name, reason in unreadable:
        warn_skipped(name, reason)
    for entry in named_runs(folders):
        fp = fingerprint(entry)
        if fp[1] != -1 or fp[3] != -1 or os.path.exists(f"{entry.path}/{EVALUATIONS}"):
            seen[entry.name] = fp
    return seen


def named_runs(folders) -> list:
    """``folders`` (paths, or ``os.DirEntry``, of store folders that hold runs) without those
    whose name is not a run id, each of those skipped with a one-line warning."""
    kept = []
    for folder in folders:
        if is_run_id(folder.name):
            kept.append(folder)
        else:
            warn_skipped(folder.name, f"its name is not a run id ({ID_RULE})")
    return kept


def warn_skipped(name: str, why: str) -> None:
    """The one-line warning for an entry of the store that is skipped (``why``: its name is
    not a run id, a link loops)."""
    warnings.warn(f"skipping folder {name!r} of the run store: {why}", stacklevel=3)


def quarantined_runs(root: Path) -> set[str]:
    """Run ids that have files in quarantine (they stay flagged ``damaged``)."""
    folder = Path(root) / QUARANTINE_DIR
    return {p.name for p in folder.iterdir() if p.is_dir()} if folder.is_dir() else set()

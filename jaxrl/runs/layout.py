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
QUARANTINE_DIR = ".quarantine"
CATALOG_DIR = ".catalog"

Fingerprint = tuple[int, int, int, int]
# A run id (and a sweep, bench or demonstration-set id) is one folder name: what `stamped_id`
# makes (letters, digits, "-", "_"), and at most "." besides; never a path, never hidden.
ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")
ID_RULE = "one name of letters, digits, '.', '_' and '-', never a path"


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


def scan(root: Path) -> dict[str, Fingerprint]:
    """``{run_id: fingerprint}`` of the folders that may hold a run (not hidden; with a
    ``run.json``, a ``metrics`` folder or evaluations). A folder whose name is not a run id
    (`is_run_id`, e.g. a copy named ``2*``) is skipped with a warning."""
    seen = {}
    with os.scandir(root) as entries:
        for entry in entries:
            if entry.name.startswith(".") or not entry.is_dir():
                continue
            if not is_run_id(entry.name):
                warn_not_a_run(entry.name)
                continue
            fp = fingerprint(entry)
            if fp[1] != -1 or fp[3] != -1 or os.path.exists(f"{entry.path}/{EVALUATIONS}"):
                seen[entry.name] = fp
    return seen


def named_runs(folders) -> list[Path]:
    """``folders`` (paths of store folders that hold runs) without those whose name is not a
    run id, each of those skipped with a one-line warning (`warn_not_a_run`)."""
    kept = []
    for folder in folders:
        if is_run_id(folder.name):
            kept.append(folder)
        else:
            warn_not_a_run(folder.name)
    return kept


def warn_not_a_run(name: str) -> None:
    """The one-line warning for a store folder whose name is not a run id."""
    warnings.warn(f"skipping folder {name!r} of the run store: its name is not a run id "
                  f"({ID_RULE})", stacklevel=3)


def quarantined_runs(root: Path) -> set[str]:
    """Run ids that have files in quarantine (they stay flagged ``damaged``)."""
    folder = Path(root) / QUARANTINE_DIR
    return {p.name for p in folder.iterdir() if p.is_dir()} if folder.is_dir() else set()

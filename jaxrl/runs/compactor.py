"""The background compactor: one process that compacts a store's backlog of runs into catalog
segments while queries go on answering from the runs' own files.

Compacting reads every column of every file and writes it again: about 4 ms of CPU per run of
five chunks (1,000 runs: 4-5 s on a 2-core machine), against well under a millisecond per run
to check the files and to read the few columns a query needs. So when a query finds more than
`jaxrl.runs.catalog.BACKGROUND_FILES` files of finished runs not yet compacted (a store copied
in, or one whose catalog was deleted), it answers from those files (`jaxrl.runs.query`) and
hands their compaction to a process started here (`start`), detached from the query's: the
``jaxrl`` command returns, and the next queries read the segments once they are written
(`jaxrl.runs.backlog.compact_backlog`). One such process runs per store at a time: it holds
``<root>/.catalog/compacting`` locked while it works (`held`; the lock goes with the process,
however it ends). It writes nothing but the catalog, and commits a segment only under the
catalog's lock and only for runs that did not change while it was written.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
import sys
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from jaxrl.repo_data import REPO
from jaxrl.runs.layout import CATALOG_DIR

LOCK_NAME = "compacting"
CHILD = ("import sys; from jaxrl.runs.backlog import compact_backlog; "
         "compact_backlog(sys.argv[1])")


@contextmanager
def held(root: Path) -> Iterator[bool]:
    """Hold the compactor's lock of the store at ``root``; yields False (without waiting) when
    another process holds it, or it cannot be opened (a read-only store)."""
    try:
        fd = os.open(Path(root) / CATALOG_DIR / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        yield False
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


def running(root: Path) -> bool:
    """Whether a compactor is at work on the store at ``root``."""
    path = Path(root) / CATALOG_DIR / LOCK_NAME
    if not path.exists():
        return False
    with held(root) as mine:
        return not mine


def start(root: Path) -> None:
    """Start a compactor of the store at ``root`` in a detached process, unless one is at work.
    It outlives this process, prints nothing, and a failure to start it only loses speed."""
    if running(root):
        return
    package = str(REPO)  # where `jaxrl` is imported from
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (package, os.environ.get("PYTHONPATH")) if p)}
    with contextlib.suppress(OSError, ValueError), warnings.catch_warnings():
        # JAX, where imported, warns at every fork; this one is an exec at once
        warnings.filterwarnings("ignore", "os.fork", RuntimeWarning)
        proc = subprocess.Popen([sys.executable, "-c", CHILD, str(Path(root).absolute())],
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env=env, start_new_session=True)
        threading.Thread(target=proc.wait, daemon=True, name="jaxrl-compactor").start()

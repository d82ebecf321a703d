"""The catalog's lock (``<root>/.catalog/lock``), taken by every refresh of the catalog
(`jaxrl.runs.catalog.load`). No one waits on it for long: a process that cannot have it within
`LOCK_WAIT_SECONDS` (its holder is stopped with SIGSTOP, a paused notebook, stuck on a network
file system) reads the catalog without writing it, and says so in one line naming the holder's
PID and what it is doing, which every holder writes into the lock file."""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from jaxrl.runs.layout import CATALOG_DIR

LOCK_WAIT_SECONDS = 3.0  # the longest a query waits for the catalog lock
LOCK_POLL_SECONDS = 0.05


class CatalogWarning(UserWarning):
    """The catalog was read without being written (its lock is held too long, or a write
    failed): one line, and the query goes on."""


def _open_lock(folder: Path) -> int | None:
    """The lock file's descriptor, opened for writing; None where it cannot be (read-only)."""
    try:
        (folder / "segments").mkdir(parents=True, exist_ok=True)
        return os.open(folder / "lock", os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        return None


def _acquire(fd: int, wait: float) -> bool:
    """Take the lock on ``fd``, trying for at most ``wait`` seconds."""
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(LOCK_POLL_SECONDS)


def _command() -> str:
    """This process's command, in a few words (``jaxrl runs sql``)."""
    argv = sys.argv or ["python"]
    first = "jaxrl" if argv[0].endswith(("jaxrl", "__main__.py")) else os.path.basename(argv[0])
    return " ".join(w[:24] for w in [first or "python", *argv[1:3]])


def _say_holder(fd: int, doing: str) -> None:
    """Write who holds the lock into the lock file (best effort: it only names the holder)."""
    text = json.dumps({"pid": os.getpid(), "doing": f"{_command()}, {doing}", "since": time.time()})
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, text.encode(), 0)
    except OSError:
        pass


def holder(fd: int) -> str:
    """Who holds the lock, as its holder wrote it: ``PID 1234 (jaxrl runs sql, cataloguing) for
    12 s``, or ``another process``."""
    try:
        info = json.loads(os.pread(fd, 4096, 0))
        return (f"PID {int(info['pid'])} ({info['doing']}) for "
                f"{max(0.0, time.time() - float(info['since'])):.0f} s")
    except (OSError, ValueError, KeyError, TypeError):
        return "another process"


@contextmanager
def locked(root: Path, doing: str = "cataloguing", wait: float | None = None) -> Iterator[bool]:
    """Hold the catalog lock; yields whether the catalog can be written. False when the lock
    cannot be opened for writing (a read-only store), or when another process holds it for
    more than ``wait`` seconds (default `LOCK_WAIT_SECONDS`; a one-line `CatalogWarning` names
    it): the caller then reads the catalog without writing it. ``doing``: what this process does under the lock, for such
    a warning of another process."""
    fd = _open_lock(root / CATALOG_DIR)
    try:
        held = fd is not None and _acquire(fd, LOCK_WAIT_SECONDS if wait is None else wait)
        if held:
            _say_holder(fd, doing)
        elif fd is not None:
            warnings.warn(f"catalog lock of {root} held by {holder(fd)}; reading without it",
                          CatalogWarning, stacklevel=3)
        yield held
    finally:
        if fd is not None:
            os.close(fd)

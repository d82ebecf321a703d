"""The lock that lets at most one process write a run (or a sweep group of runs) at a time.

``<run folder>/.lock`` (of the group's first run) is held with an exclusive, non-blocking
``flock`` by `jaxrl train` (checkpointed runs) and by `jaxrl resume` for as long as they
write: a second ``resume`` of the same run is refused in one line naming the holder's PID
(written into the file), before it touches anything. The kernel releases the lock when its
process ends, however it ends, so a lock is never stale.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from jaxrl.runs.store import StoreError

LOCK_FILE = ".lock"


def _holder(fd: int) -> str:
    """The PID the lock file names (written by its holder), or "another process"."""
    try:
        text = os.pread(fd, 64, 0).decode(errors="replace").strip()
    except OSError:
        text = ""
    return f"pid {text}" if text.isdigit() else "another process"


@contextmanager
def held(folder: Path, run_id: str) -> Iterator[None]:
    """Hold the write lock of run ``run_id`` (its folder ``folder``) in this block, else a
    one-line `StoreError` naming the process that holds it."""
    try:
        fd = os.open(Path(folder) / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as err:
        raise StoreError(f"run {run_id!r} cannot be locked for writing: {err.strerror} "
                         f"({Path(folder) / LOCK_FILE})") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise StoreError(f"run {run_id!r} is being written by {_holder(fd)} (training or "
                             f"resuming it); wait for it to end, or stop it first") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield
    finally:
        os.close(fd)

"""The locks that let at most one process write a run (or a sweep group of runs), or train a
bench entry, at a time.

``<run folder>/.lock`` (of the group's first run) is held with an exclusive, non-blocking
``flock`` by `jaxrl train` (checkpointed runs) and by `jaxrl resume` for as long as they
write: a second ``resume`` of the same run is refused in one line naming the holder's PID
(written into the file), before it touches anything. A bench claims each entry it trains the
same way (`claim`, ``benches/<bench_id>/claims/<entry key>.lock``), so two benches of one suite
into one store never train an entry twice. The kernel releases a lock when its process ends,
however it ends, so a lock is never stale.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from jaxrl.runs.store import StoreError

LOCK_FILE = ".lock"


def holder(path: Path, wait: float = 0.25) -> str:
    """The PID the lock file ``path`` names (written by its holder), or "another process".
    A holder writes its PID just after it takes the lock, so a file read empty in between is
    read again for up to ``wait`` seconds."""
    deadline = time.monotonic() + wait
    while True:
        try:
            text = Path(path).read_bytes()[:64].decode(errors="replace").strip()
        except OSError:
            text = ""
        if text.isdigit():
            return f"pid {text}"
        if time.monotonic() >= deadline:
            return "another process"
        time.sleep(0.01)


@contextmanager
def claim(path: Path, wait: bool = False) -> Iterator[bool]:
    """Hold the exclusive lock of the file ``path`` (created, and its folder, if need be) in
    this block, this process's PID written into it. Yields whether it is held: without
    ``wait``, False at once when another process holds it; with ``wait``, once that process
    lets go (or ends). An ``OSError`` if the file cannot be opened."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            yield False
            return
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield True
    finally:
        os.close(fd)


@contextmanager
def held(folder: Path, run_id: str) -> Iterator[None]:
    """Hold the write lock of run ``run_id`` (its folder ``folder``) in this block, else a
    one-line `StoreError` naming the process that holds it."""
    path = Path(folder) / LOCK_FILE
    with ExitStack() as stack:
        try:
            got = stack.enter_context(claim(path))
        except OSError as err:
            raise StoreError(f"run {run_id!r} cannot be locked for writing: {err.strerror} "
                             f"({path})") from None
        if not got:
            raise StoreError(f"run {run_id!r} is being written by {holder(path)} (training or "
                             f"resuming it); wait for it to end, or stop it first")
        yield

"""Output paths, checked before a run starts: a ``--json`` file or an ``--out`` folder that
cannot be written fails in one line before anything compiles, not in a traceback after training.

The check creates a temporary file where the output will go and removes it at once. That is the
one test that sees every reason a write can fail: a missing folder, permissions (``os.access``
says yes to root everywhere), read-only or virtual file systems such as ``/proc``. It is also
what the final write does: outputs are written atomically, to a temporary file in the same
folder renamed over the target. An existing output file is never opened, so it is neither
truncated nor left changed, and no file is left behind.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path


class OutputPathError(ValueError):
    """An output path that cannot be written. The message is one line naming the flag and path."""


def check_file(path: str | os.PathLike, flag: str = "--json") -> None:
    """Raise `OutputPathError` unless a file can be written (atomically) at ``path``: an
    existing ``path`` (links followed) must be a regular file, since the write replaces it, and
    replacing a folder, a device (``/dev/null``), a FIFO or a socket would destroy it."""
    target = Path(path).absolute()
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as err:
        raise OutputPathError(f"{flag} {str(path)!r} is not writable: "
                              f"{err.strerror or err}") from None
    if mode is not None and not stat.S_ISREG(mode):
        raise OutputPathError(f"{flag} {str(path)!r} is not writable: it is {file_kind(mode)}, not "
                              "a regular file (never replaced)")
    if not target.parent.is_dir():
        raise OutputPathError(f"{flag} {str(path)!r} is not writable: folder "
                              f"{str(target.parent)!r} does not exist")
    _require_creatable(target.parent, path, flag)


def file_kind(mode: int) -> str:
    """What a file of ``mode`` that is not a regular file is, with its article."""
    kinds = ((stat.S_ISDIR, "a folder"), (stat.S_ISCHR, "a character device"),
             (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO"),
             (stat.S_ISSOCK, "a socket"))
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def check_folder(path: str | os.PathLike, flag: str = "--out") -> None:
    """Raise `OutputPathError` unless files can be written in folder ``path`` (created with its
    parents when missing, so the nearest existing ancestor must take new entries)."""
    target = Path(path).absolute()
    if target.exists() and not target.is_dir():
        raise OutputPathError(f"{flag} {str(path)!r} is not writable: it is a file, not a folder")
    existing = nearest_existing(target)
    if not existing.is_dir():
        raise OutputPathError(f"{flag} {str(path)!r} is not writable: {str(existing)!r} is a "
                              "file, not a folder")
    _require_creatable(existing, path, flag)


def nearest_existing(path: Path) -> Path:
    """``path`` itself or its closest ancestor that exists."""
    return next(p for p in (path, *path.parents) if p.exists())


def creation_error(folder: Path) -> str | None:
    """Why a file cannot be created in ``folder`` (the OS's reason), or None if it can. Creates
    a uniquely named temporary file and removes it."""
    try:
        fd, name = tempfile.mkstemp(prefix=".jaxrl-write-check-", dir=folder)
    except OSError as err:
        return err.strerror or str(err)
    os.close(fd)
    os.unlink(name)
    return None


def _require_creatable(folder: Path, path, flag: str) -> None:
    reason = creation_error(folder)
    if reason is not None:
        raise OutputPathError(f"{flag} {str(path)!r} is not writable: cannot create a file in "
                              f"{str(folder)!r} ({reason})")

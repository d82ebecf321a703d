"""Crash-safe file writes and JSON helpers shared by the run store and its reports.

A write goes to a hidden temporary file beside its target and is renamed over it, so a reader
(or a crash) sees the old file or the new one, never half of one. A write that fails (a full
disk, a read-only file system) removes its temporary file and is a `StoreError` of one line
naming the path (and, for a full disk, the space needed and available)."""

from __future__ import annotations

import contextlib
import datetime as _dt
import errno
import io
import json
import os
import secrets
import shutil
from pathlib import Path

import numpy as np
import pandas as pd


def stamped_id(*parts: str) -> str:
    """``"<YYYYmmdd-HHMMSS>-<part>-...-<6 hex>"``: the body of a new run, sweep or
    demonstration-set id, each part reduced to letters, digits, ``-`` and ``_``."""
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    safe = ["".join(c if c.isalnum() or c in "-_" else "-" for c in p) for p in parts]
    return "-".join([stamp, *safe, secrets.token_hex(3)])


class StoreError(ValueError):
    """A run-store problem with a one-line message (e.g. a root that is not writable)."""


def one_line(err: BaseException) -> str:
    """The first line of an error message (DuckDB and pyarrow append context lines)."""
    text = str(err).strip().splitlines()
    return text[0] if text else type(err).__name__


def free_bytes(path: Path) -> int | None:
    """The bytes free on the file system of ``path`` (or of its nearest existing parent)."""
    path = Path(path).absolute()
    while not path.exists() and path != path.parent:
        path = path.parent
    try:
        return shutil.disk_usage(path).free
    except OSError:
        return None


def _size(n: int | None) -> str:
    if n is None:
        return "unknown"
    for unit in ("bytes", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} bytes"


def disk_full(path: Path, needed: int | None) -> StoreError:
    """The one-line error of a full disk while writing ``path``."""
    return StoreError(f"no space left on device to write {path}: {_size(needed)} needed, "
                      f"{_size(free_bytes(path))} available")


def write_error(path: Path, err: OSError, needed: int | None = None) -> StoreError:
    """The one-line `StoreError` of a failed write of ``path``."""
    if err.errno in (errno.ENOSPC, errno.EDQUOT):
        return disk_full(path, needed)
    if err.errno == errno.EROFS:
        return StoreError(f"cannot write {path}: the run store is on a read-only file system")
    return StoreError(f"cannot write {path}: {err.strerror or err}")


def require_free(folder: Path, needed: int, what: str) -> None:
    """A full-disk `StoreError` now if ``folder``'s file system has less than ``needed`` bytes
    free (``what``: what they are for, in the message)."""
    free = free_bytes(folder)
    if free is not None and free < needed:
        raise StoreError(f"no space left on device for {what} in {folder}: about "
                         f"{_size(needed)} needed, {_size(free)} available")


def _tmp_beside(path: Path) -> Path:
    return path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (fsynced before the rename); on any failure the
    temporary file is removed, and an `OSError` becomes a one-line `StoreError`."""
    tmp = _tmp_beside(path)
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as err:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        if isinstance(err, OSError):
            raise write_error(path, err, len(data)) from None
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode())


def json_records(path: Path) -> dict:
    """The ``{key: record}`` JSON object kept at ``path`` (`add_json_record`); ``{}`` if none."""
    return json.loads(Path(path).read_text()) if Path(path).exists() else {}


def add_json_record(path: Path, key, record: dict) -> None:
    """Set ``record`` at ``str(key)`` in the JSON object at ``path`` (written atomically; one
    writer at a time: a search's or a population's own process)."""
    records = json_records(path)
    records[str(key)] = record
    atomic_write_text(Path(path), json.dumps(records, indent=1, default=json_default))


def parquet_bytes(frame: pd.DataFrame) -> bytes:
    """``frame`` (without its index) as the bytes of a Parquet file."""
    buffer = io.BytesIO()
    frame.to_parquet(buffer, index=False)
    return buffer.getvalue()


def atomic_write_parquet(path: Path, frame: pd.DataFrame) -> None:
    """Write ``frame`` (without its index) to ``path`` as Parquet, atomically."""
    atomic_write_bytes(path, parquet_bytes(frame))


def json_default(x):
    """JSON for numpy scalars/arrays and tuples (everything else as str)."""
    if isinstance(x, (np.floating, np.integer, np.bool_)):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, tuple):
        return list(x)
    return str(x)


def finite_or_none(x) -> float | None:
    """``float(x)``, or None for None, NaN and infinities (JSON has no NaN)."""
    return float(x) if x is not None and np.isfinite(x) else None

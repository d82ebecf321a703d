"""Crash-safe file writes and JSON helpers shared by the run store and its reports.

A write goes to a hidden temporary file beside its target and is renamed over it, so a reader
(or a crash) sees the old file or the new one, never half of one."""

from __future__ import annotations

import datetime as _dt
import os
import secrets
from pathlib import Path

import numpy as np
import pandas as pd


def stamped_id(*parts: str) -> str:
    """``"<YYYYmmdd-HHMMSS>-<part>-...-<6 hex>"``: the body of a new run, sweep or
    demonstration-set id, each part reduced to letters, digits, ``-`` and ``_``."""
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    safe = ["".join(c if c.isalnum() or c in "-_" else "-" for c in p) for p in parts]
    return "-".join([stamp, *safe, secrets.token_hex(3)])


def _tmp_beside(path: Path) -> Path:
    return path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (fsynced before the rename)."""
    tmp = _tmp_beside(path)
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode())


def atomic_write_parquet(path: Path, frame: pd.DataFrame) -> None:
    """Write ``frame`` (without its index) to ``path`` as Parquet, atomically."""
    tmp = _tmp_beside(path)
    frame.to_parquet(tmp, index=False)
    os.replace(tmp, path)


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

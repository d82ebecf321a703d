"""A group's resumable folder: where a remote worker keeps what it has done of one group, on
storage the head can reach (a shared file system), so a retried task goes on from there.

::

    <folder>/checkpoints/        the engine's verified checkpoints (`jaxrl.engine.checkpoint`),
                                 one per chunk
    <folder>/chunks/chunk-00000.npz ...   each finished chunk's metrics ``{name: [members, K]}``
    <folder>/attempts.jsonl      one line per attempt: where it ran, the chunks it found

Once the head has recorded the group, `release` drops the checkpoints and chunks.

The chunk loop is the engine's own (`jaxrl.engine.loop.run_group`, with ``restore``): a worker
that finds a checkpoint continues from the newest valid one, with the metrics of the chunks
it covers read back from ``chunks/``, and computes only the chunks after it.
"""

from __future__ import annotations

import dataclasses
import io
import json
import os
import shutil
import socket
import time
from pathlib import Path

import numpy as np

from jaxrl.engine.loop import GroupOutcome, run_group
from jaxrl.engine.spec import GroupSpec

CHECKPOINTS, CHUNKS, ATTEMPTS = "checkpoints", "chunks", "attempts.jsonl"


def chunk_path(folder: Path, index: int) -> Path:
    return Path(folder) / CHUNKS / f"chunk-{index:05d}.npz"


def write_chunk(folder: Path, index: int, metrics: dict) -> None:
    """One chunk's metrics ``{name: [members, K]}`` into ``chunks/``, atomically (a temp file
    renamed into place: a reader never sees half a file)."""
    path = chunk_path(folder, index)
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    np.savez(buffer, **{k: np.asarray(v) for k, v in metrics.items()})
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(buffer.getvalue())
    os.replace(tmp, path)


def read_chunks(folder: Path) -> list[dict]:
    """The chunks written so far, in order, up to the first missing one."""
    chunks = []
    while (path := chunk_path(folder, len(chunks))).is_file():
        with np.load(path) as data:
            chunks.append({k: data[k] for k in data.files})
    return chunks


def has_checkpoint(folder: Path) -> bool:
    """Whether ``checkpoints/`` holds anything a restore could try."""
    ckpt = Path(folder) / CHECKPOINTS
    return ckpt.is_dir() and any(p.name.isdigit() for p in ckpt.iterdir())


def attempts(folder: Path) -> list[dict]:
    """The attempts recorded in ``attempts.jsonl``, oldest first."""
    path = Path(folder) / ATTEMPTS
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def note_attempt(folder: Path, **fields) -> None:
    """Append one attempt line (host, pid, time and ``fields``)."""
    line = {"host": socket.gethostname(), "pid": os.getpid(), "time": time.time(), **fields}
    with open(Path(folder) / ATTEMPTS, "a") as f:
        f.write(json.dumps(line) + "\n")


def run_resumable(spec: GroupSpec, folder: os.PathLike, **where) -> GroupOutcome:
    """Run the group of ``spec`` unrecorded, checkpointing every chunk into ``folder`` and
    continuing from its newest valid checkpoint when there is one. ``where`` (e.g. the Ray
    node id) goes into the attempt line. Returns the whole group's `GroupOutcome`, its
    ``resumed_from_chunk`` saying how many chunks were restored rather than computed."""
    folder = Path(folder)
    (folder / CHUNKS).mkdir(parents=True, exist_ok=True)
    spec = dataclasses.replace(spec, checkpoint_every=1)
    restore = has_checkpoint(folder)
    note_attempt(folder, chunks_on_disk=len(read_chunks(folder)), restore=restore, **where)
    return run_group(spec, progress=False, stop_on_non_finite=False,
                     on_chunk=lambda c: write_chunk(folder, c["chunk"], c["metrics"]),
                     checkpoint_dir=folder / CHECKPOINTS, restore=restore,
                     prior_chunks=read_chunks(folder) if restore else None)


def release(folder: os.PathLike) -> None:
    """Drop a recorded group's checkpoints and chunks (the run store has its numbers now); its
    ``attempts.jsonl`` stays, a record of where it ran and what it resumed from."""
    for name in (CHECKPOINTS, CHUNKS):
        shutil.rmtree(Path(folder) / name, ignore_errors=True)

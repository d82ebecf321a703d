"""A group's progress through its chunks (`Progress`), saved with each checkpoint and restored
from the newest valid one by a resume: the state, the evaluations, run seconds and failures so
far, and the chunk length the run started with (a resumed run keeps it).

`AFTER_CHECKPOINT` holds the hooks called after each checkpoint is written: empty in a normal
run; the fault tests add a kill (`jaxrl.engine.faults`)."""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from envs.core import runs_on_host
from jaxrl.engine.checkpoint import Checkpointer, CheckpointWarning, Snapshot, snapshot
from jaxrl.engine.members import Members, Placed, pad_members, take_members
from jaxrl.engine.spec import GroupSpec
from jaxrl.runs.store import package_versions


@dataclasses.dataclass
class Progress:
    """Where a group's run stands: chunks done (their metrics), evaluations, run seconds and
    failures; ``first``: the chunk it (re)started at."""

    first: int = 0
    chunks: list = dataclasses.field(default_factory=list)
    evals: list = dataclasses.field(default_factory=list)
    run_seconds: float = 0.0
    failures: dict = dataclasses.field(default_factory=dict)


def resumed_chunk_length(prior_chunks: list, fresh: int) -> int:
    """The chunk length of a run that resumes: that of the chunks it already wrote (``[{name:
    [members, K]}]``), so that it goes on as it started even where this version of jaxrl would
    chunk it otherwise (`jaxrl.engine.loop.chunk_length`); ``fresh`` when it wrote none."""
    if not prior_chunks:
        return fresh
    return int(next(iter(prior_chunks[0].values())).shape[1])


def restored_state(fresh, restored, env):
    """The state to continue from: the checkpoint's, except that envs stepping host emulators
    (`envs.core.runs_on_host`, Atari) keep this process's fresh ``carry``. A checkpointed
    emulator handle points into the process that wrote it (reading it segfaults), so those envs
    start new episodes on resume; the learner, its statistics, keys and counters are restored."""
    if not runs_on_host(env):
        return restored
    return dataclasses.replace(restored, carry=fresh.carry)


def restore_progress(checkpointer: Checkpointer, state, placed: Placed, env, prior_chunks: list,
                     checkpoint_dir, k: int) -> tuple[Any, Progress]:
    """The state and progress of the newest valid checkpoint (``prior_chunks``: the metrics of
    the chunks it covers; ``k``: their updates per chunk); the fresh ``state`` and no progress,
    with a warning, when there is none. A checkpoint written in chunks of another length than
    ``k`` is refused (`ValueError`, one line)."""
    restored = checkpointer.restore_latest(take_members(state, placed.members.size))
    if restored is None:
        warnings.warn(f"no usable checkpoint in {checkpoint_dir}; the run starts again from "
                      f"its first update", CheckpointWarning, stacklevel=3)
        return state, Progress()
    first, saved, meta = restored
    if meta.get("chunk_updates", k) != k:  # checkpoints written before it was recorded: as k
        raise ValueError(f"checkpoint {first} in {checkpoint_dir} was written in chunks of "
                         f"{meta['chunk_updates']} updates; the run's metrics are in chunks "
                         f"of {k}")
    state = restored_state(state, placed.place(pad_members(saved, placed.padded)), env)
    return state, Progress(
        first, list(prior_chunks[:first]),  # fewer than ``first``: refused by `run_group`
        [(u, np.asarray(v, dtype=np.float64)) for u, v in meta["evals"]], meta["run_seconds"],
        {int(i): m for i, m in meta["failures"].items()})


# Called with (chunks done, checkpointer) after each checkpoint is written; empty in a normal
# run. Fault tests add to it (`jaxrl.engine.faults`): a kill right after a checkpoint.
AFTER_CHECKPOINT: list[Callable[[int, Checkpointer], None]] = []


def save_checkpoint(checkpointer: Checkpointer, spec: GroupSpec, state, members: Members,
                    done: Progress, chunks_done: int, k: int) -> None:
    """Checkpoint the state after ``chunks_done`` chunks of ``k`` updates (or its `snapshot`,
    `state_snapshot`, taken before the next chunk took the state over) with what a resume
    needs (evaluations, run seconds, failures, the chunk length, the spec, package versions).
    Its blocking part is the caller's to count (`jaxrl.engine.loop`: inside the next chunk's
    window when one follows). Then the `AFTER_CHECKPOINT` hooks."""
    if not isinstance(state, Snapshot):
        state = take_members(state, members.size)
    checkpointer.save(chunks_done, state, {
        "chunks_done": chunks_done, "chunk_updates": k, "run_seconds": done.run_seconds,
        "evals": [(u, json_floats(v)) for u, v in done.evals],
        "failures": {str(i): m for i, m in done.failures.items()},
        "spec": spec.to_dict(), "versions": package_versions(spec.env)})
    for hook in AFTER_CHECKPOINT:
        hook(chunks_done, checkpointer)


def state_snapshot(state, members: Members) -> Snapshot:
    """The members' state copied to the host (`jaxrl.engine.checkpoint.snapshot`), for a save
    after the next chunk has started. It is taken before the chunk's metrics reach the host, so
    its time is inside the chunk's (or the evaluation's) window of run time."""
    return snapshot(take_members(state, members.size))


def json_floats(x) -> list:
    """NaN-safe JSON list of lists (NaN -> None)."""
    return [[None if not np.isfinite(v) else float(v) for v in row] for row in np.asarray(x)]

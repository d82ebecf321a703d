"""Where a run stands, from its folder alone (``jaxrl runs progress``): how far each seed has
got, how fast the last chunk went and about how long the rest takes at that rate, the newest
checkpoint a resume would start from, and the training return per seed in the measure the
benches use (the mean of the last 100 training episodes, `jaxrl.measures`).

Read from what the engine writes as it goes (``run.json``, the metrics chunks, the checkpoint
folder), so it answers while the run trains, after it was killed, and for a copy of the store
carried to another machine; it loads neither JAX nor the engine.
"""

from __future__ import annotations

import dataclasses
import datetime
import time
import warnings

import numpy as np
import pandas as pd

from jaxrl.measures import LAST_EPISODES, train_return_last100
from jaxrl.runs import query
from jaxrl.runs.checkpoint_steps import complete_steps
from jaxrl.runs.files import StoreError
from jaxrl.runs.integrity import StoreWarning, chunk_files
from jaxrl.runs.store import Run, RunStore


@dataclasses.dataclass(frozen=True)
class RunProgress:
    """One run's standing. Steps are per seed; the rate counts every member of the run's
    program (a sweep group's configs x seeds), as the engine measures it."""

    run_id: str
    algo: str
    env: str
    status: str  # as read: a ``running`` run whose process is gone reads ``interrupted``
    seeds: int
    members: int  # members of the program that trains the run (its group's, for a sweep)
    chunks: int  # metrics chunks written
    env_steps: int  # per seed, at the newest update written
    steps_per_update: int  # per seed
    total_steps: int  # per seed, as asked
    steps_per_second: float  # env steps of all members per second over the newest chunk
    seconds_since_chunk: float  # since the newest chunk was written
    seconds_past_chunk: float  # of those, the ones the run trained: since its newest resume
    checkpoint_chunks: int | None  # chunks done at the newest complete checkpoint; None: none
    return_update: int | None  # the newest update in which an episode ended
    return_env_steps: int | None  # ... and its env steps per seed
    train_last100: np.ndarray  # [seeds] mean return of each seed's last 100 episodes (NaN: none)

    @property
    def fraction(self) -> float:
        return self.env_steps / self.total_steps if self.total_steps > 0 else float("nan")

    @property
    def trained(self) -> bool:
        """Every update of the budget is written (the budget is whole updates: no other fits)."""
        return self.chunks > 0 and self.total_steps - self.env_steps < self.steps_per_update

    @property
    def seconds_left(self) -> float | None:
        """At the newest chunk's rate, the seconds from now to the asked budget (the steps
        left after the newest chunk, less the time trained since); None unless running."""
        if self.status != "running" or not self.steps_per_second > 0:
            return None
        after_chunk = max(self.total_steps - self.env_steps, 0) * self.members / self.steps_per_second
        return max(after_chunk - np.nan_to_num(self.seconds_past_chunk), 0.0)


def _resumed_at(meta: dict) -> float:
    """When the run last resumed (``run.json``'s ``resumed``, ISO times), as a Unix time; 0.0
    for a run never resumed or a time that does not parse."""
    try:
        return datetime.datetime.fromisoformat(meta["resumed"][-1]).timestamp()
    except (KeyError, IndexError, TypeError, ValueError):
        return 0.0


def summarize(meta: dict, metrics: pd.DataFrame, chunks: int, chunk_written_at: float | None,
              checkpoint_steps: list[int], now: float) -> RunProgress:
    """A run's `RunProgress` from its ``run.json`` (as read), its metrics frame (one row per
    seed x update, from its ``chunks`` chunk files; empty before the first), the time the
    newest chunk was written and its complete checkpoint steps (chunks done)."""
    seeds = int(meta["seeds"])
    group_runs = (meta.get("group") or {}).get("runs") or [meta["run_id"]]
    progress = RunProgress(
        run_id=meta["run_id"], algo=meta["algo"], env=meta["env"], status=meta["status"],
        seeds=seeds, members=seeds * len(group_runs), chunks=chunks, env_steps=0,
        steps_per_update=0, total_steps=int(meta["total_steps_per_seed"]),
        steps_per_second=float("nan"), seconds_since_chunk=float("nan"),
        seconds_past_chunk=float("nan"),
        checkpoint_chunks=checkpoint_steps[-1] if checkpoint_steps else None,
        return_update=None, return_env_steps=None, train_last100=np.full(seeds, np.nan))
    if metrics.empty:
        return progress
    newest = metrics[metrics["update"] == metrics["update"].max()]
    update, env_steps = int(newest["update"].iloc[0]), int(newest["env_steps"].max())
    ended = metrics[metrics["episode_count"].fillna(0) > 0]
    last_ended = ended[ended["update"] == ended["update"].max()].head(1)
    return dataclasses.replace(
        progress, env_steps=env_steps, steps_per_update=env_steps // (update + 1),
        steps_per_second=float(newest["env_steps_per_second"].mean()),
        seconds_since_chunk=now - chunk_written_at if chunk_written_at else float("nan"),
        seconds_past_chunk=now - max(chunk_written_at, _resumed_at(meta)) if chunk_written_at
        else float("nan"),
        return_update=int(last_ended["update"].iloc[0]) if len(last_ended) else None,
        return_env_steps=int(last_ended["env_steps"].iloc[0]) if len(last_ended) else None,
        train_last100=train_return_last100(metrics, seeds))


def read_progress(run_id: str, store: RunStore | None = None, now: float | None = None) -> RunProgress:
    """`summarize` of run ``run_id`` in ``store`` (a one-line `StoreError` for an unknown or
    damaged run; a bad chunk file is skipped with a warning, as every reader of the store
    does)."""
    store = store or RunStore()
    meta = store.load(run_id)
    folder = store.root / run_id
    files = chunk_files(folder)
    metrics = query.load_metrics(run_id, store) if files else pd.DataFrame()
    checkpoints = Run(folder, meta).checkpoint_dir
    return summarize(meta, metrics, len(files), files[-1].stat().st_mtime if files else None,
                     complete_steps(checkpoints) if checkpoints else [],
                     time.time() if now is None else now)


def running(store: RunStore | None = None) -> list[str]:
    """The ids of the runs in ``store`` that read ``running`` (a run whose process is gone
    reads ``interrupted``); a damaged ``run.json`` is skipped with a `StoreWarning`."""
    store = store or RunStore()
    ids = []
    for folder in store.run_dirs():
        try:
            meta = store.load(folder.name)
        except StoreError as err:
            warnings.warn(f"skipped: {err}", StoreWarning, stacklevel=2)
            continue
        if meta.get("status") == "running":
            ids.append(folder.name)
    return ids


def _duration(seconds: float) -> str:
    """``1 h 43 min``, ``12 min``, ``40 s``."""
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    hours, minutes = divmod(seconds // 60, 60)
    return f"{hours} h {minutes} min" if hours else f"{minutes} min"


def format_progress(p: RunProgress) -> str:
    """The lines ``jaxrl runs progress`` prints for one run."""
    lines = [f"{p.run_id}: {p.algo} on {p.env}, {p.seeds} seeds, {p.status}"]
    if not p.chunks:
        return "\n".join([*lines, "  no chunk written yet (compiling, or it never started)"])
    lines.append(f"  env steps a seed: {p.env_steps:,} of {p.total_steps:,} "
                 f"({p.fraction:.0%}), {p.chunks} chunks, the newest written "
                 f"{_duration(p.seconds_since_chunk)} ago")
    rate = f"  {p.steps_per_second:,.0f} env-steps/s over the newest chunk ({p.members} members)"
    left = p.seconds_left
    if left is not None and p.trained:
        rate += "; every update done: evaluating, or writing the run's files"
    elif left is not None:
        rate += (f"; about {_duration(left)} to go at that rate" if left > 0 else
                 "; past the time that rate gives (a slower chunk, or a stalled run)")
    lines.append(rate)
    if p.checkpoint_chunks is not None:
        lines.append(f"  newest complete checkpoint: after chunk {p.checkpoint_chunks}")
    if p.return_update is None:
        lines.append("  no training episode has ended yet")
    else:
        values = ", ".join(f"{v:,.1f}" for v in p.train_last100)
        lines.append(f"  training return, mean of each seed's last {LAST_EPISODES} episodes "
                     f"(up to update {p.return_update}, {p.return_env_steps:,} env steps): "
                     f"{values}; mean {np.nanmean(p.train_last100):,.1f}")
    return "\n".join(lines)

"""Running a sweep's groups and recording each in the run store as soon as it ends.

    stored  = the sweep's runs in the store (a resumed sweep)    # finished groups are skipped
    local:  for each group left: run it, streaming its chunks into its runs
    ray:    every group left is a task; for each task, as it ends (ray.wait):
                record its outcome into its runs, then let it go   # the head holds one at a time
    a group that fails is recorded `failed` with its error; the others go on

A group re-run by ``resume`` writes into the runs it had (reopened), so a sweep keeps one run
per config. See `jaxrl.studies.sweep.runner.sweep` for the request and `jaxrl.studies.ray` for the tasks.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
from pathlib import Path
from typing import Any

import numpy as np

from jaxrl.engine.loop import run_group
from jaxrl.engine.programs import act_program
from jaxrl.engine.recorded import end_run, new_group_runs, run_recorded
from jaxrl.runs.integrity import chunk_files
from jaxrl.runs.run_lock import held
from jaxrl.runs.store import Run, RunStore, StoreError
from jaxrl.studies.ray import record_as_they_end
from jaxrl.studies.sweep import manifest as sweep_manifest


@dataclasses.dataclass
class Plan:
    """A sweep's groups, ready to run: ``groups[g]`` (config indices) runs ``specs[g]``
    (resolved: ``resolved[g]``); ``swept[i]``: config ``i``'s swept values."""

    algo: str
    env: str
    swept: list
    groups: list
    specs: list
    resolved: list
    command: list | None = None

    def describe(self, g: int) -> str:
        """``"group 3 (configs 4, 5: learning_rate=0.001; ...)"``."""
        idx = self.groups[g]
        values = "; ".join(" ".join(f"{k}={v}" for k, v in self.swept[i].items()) or "defaults"
                           for i in idx)
        return f"group {g} (config{'s' if len(idx) > 1 else ''} " \
               f"{', '.join(map(str, idx))}: {values})"


@dataclasses.dataclass
class Tally:
    """Per config: its `TrainResult` (or None), final evaluation returns per seed, run id; and
    ``{config: message}`` for the configs that failed."""

    results: list
    finals: list
    run_ids: list
    failures: dict
    failed_groups: dict  # {group: message}

    @classmethod
    def new(cls, configs: int) -> Tally:
        return cls([None] * configs, [[np.nan]] * configs, [None] * configs, {}, {})

    def add(self, idx: list, results: list, failures: dict, keep: bool) -> None:
        for local, i in enumerate(idx):
            self.results[i] = results[local] if keep else None
            self.finals[i] = np.asarray(results[local].final_eval_return, dtype=float)
            self.run_ids[i] = results[local].run_id
            if local in failures:
                self.failures[i] = failures[local]

    def add_stored(self, idx: list, stored: dict) -> None:
        for i in idx:
            meta = stored[i]
            self.finals[i] = np.array([np.nan if v is None else v
                                       for v in meta.get("final_eval_return") or [None]])
            self.run_ids[i] = meta["run_id"]

    def add_failed(self, g: int, idx: list, runs: list, message: str) -> None:
        self.failed_groups[g] = message
        for i, run in zip(idx, runs):
            self.failures[i] = message
            self.run_ids[i] = run.run_id


def run_unrecorded(plan: Plan, progress: bool) -> tuple[list, dict, list]:
    """Every group locally, nothing recorded: (results, failures, final returns) per config."""
    results: list[Any] = [None] * len(plan.swept)
    failures: dict[int, str] = {}
    for spec, r, idx in zip(plan.specs, plan.resolved, plan.groups):
        outcome = run_group(spec, r, progress=progress, stop_on_non_finite=False)
        act = act_program(r)
        for local, i in enumerate(idx):
            results[i] = outcome.config_result(local, r.algorithm.name, spec.env, act,
                                               (r.env, r.env_params))
            if local in outcome.failures:
                failures[i] = outcome.failures[local]
    return results, failures, [r.final_eval_return for r in results]


def run_recorded_groups(plan: Plan, root: Path, sweep_id: str, *, progress: bool, backend: str,
                        keep_results: bool, ray: dict, checkpoint_root=None) -> Tally:
    """Run the groups of sweep ``sweep_id`` that the store does not hold finished, each recorded
    as it ends (see the module docstring). Returns the `Tally` of every config."""
    stored = sweep_manifest.stored_runs(root, sweep_id)
    live = [m for m in stored.values() if m.get("status") == "running"]
    if live:  # `as_read`: a run whose process is gone reads `interrupted`
        raise StoreError(f"sweep {sweep_id} is still running (run {live[0]['run_id']}, pid "
                         f"{live[0].get('pid')}); resume it once that process ends")
    done = sweep_manifest.finished_groups(plan.groups, stored)
    tally = Tally.new(len(plan.swept))
    for g in sorted(done):
        tally.add_stored(plan.groups[g], stored)
    todo = [g for g in range(len(plan.groups)) if g not in done]
    if done:
        _say(progress, f"sweep {sweep_id}: {len(done)} of {len(plan.groups)} groups already "
                       f"finished; running the other {len(todo)}")
    record = lambda g, outcome, checkpoints: _record_group(
        plan, g, root, sweep_id, stored, outcome, checkpoints, progress, tally, keep_results)
    if backend == "local":
        for g in todo:
            record(g, None, None)
        return tally
    folders = {g: group_folder(root, checkpoint_root, sweep_id, g) for g in todo}

    def record_remote(j: int, outcome, error: str | None) -> bool:
        g = todo[j]
        if error is None:
            return record(g, outcome, folders[g] / "checkpoints")
        runs, _ = group_runs(plan, g, root, sweep_id, stored, folders[g] / "checkpoints")
        for run in runs:
            end_run(run, "failed", error)
        tally.add_failed(g, plan.groups[g], runs, error)
        _say(progress, f"sweep {sweep_id}: {plan.describe(g)} FAILED: {error}")
        return False

    record_as_they_end([(plan.specs[g], folders[g]) for g in todo], record_remote, ray)
    return tally


def group_folder(root: Path, checkpoint_root, sweep_id: str, g: int) -> Path:
    """Group ``g``'s resumable folder for remote workers: under ``checkpoint_root`` when given,
    else in the sweep's folder of the run store."""
    base = (Path(checkpoint_root) / sweep_id if checkpoint_root is not None
            else sweep_manifest.sweep_dir(root, sweep_id) / "groups")
    return (base / f"group-{g:05d}").absolute()


def _record_group(plan: Plan, g: int, root: Path, sweep_id: str, stored: dict, outcome,
                  checkpoints, progress: bool, tally: Tally, keep: bool) -> bool:
    """Run group ``g`` locally (``outcome`` None) or record its remote ``outcome``; a group
    that raises is recorded failed (by `run_recorded`) and the sweep goes on. Returns whether
    the group ran to its end (finished, or stopped by the NaN guard)."""
    spec, r, idx = plan.specs[g], plan.resolved[g], plan.groups[g]
    runs, restore = group_runs(plan, g, root, sweep_id, stored, checkpoints)
    if outcome is not None:  # chunks a retried task restored instead of computing them
        for run in runs:
            run.meta["resumed_from_chunk"] = outcome.resumed_from_chunk
    local_ckpt = outcome is None and runs[0].checkpoint_dir is not None
    lock = held(runs[0].folder, runs[0].run_id) if local_ckpt else contextlib.nullcontext()
    try:
        with lock:  # a checkpointed group: no `resume` of it while it trains
            results = run_recorded(spec, r, runs, progress=progress and outcome is None,
                                   stop_on_non_finite=False, outcome=outcome,
                                   restore=restore and outcome is None)
    except Exception as err:  # recorded failed by run_recorded; the other groups go on
        message = f"{type(err).__name__}: {err}".splitlines()[0]
        tally.add_failed(g, idx, runs, message)
        _say(progress, f"sweep {sweep_id}: {plan.describe(g)} FAILED: {message}")
        return False
    failures = {i: run.meta["message"] for i, run in enumerate(runs)
                if run.meta["status"] == "failed"}
    tally.add(idx, results, failures, keep)
    if outcome is not None:
        _say(progress, f"sweep {sweep_id}: {plan.describe(g)} recorded"
                       + (f" (resumed from chunk {outcome.resumed_from_chunk})"
                          if outcome.resumed_from_chunk else ""))
    return True


def group_runs(plan: Plan, g: int, root: Path, sweep_id: str, stored: dict,
               checkpoints) -> tuple[list[Run], bool]:
    """The runs of group ``g``: those the store holds for its configs (a resumed sweep),
    reopened, else new ones; and whether they have checkpoints to restore from."""
    run_store = RunStore(root)
    spec, r, idx = plan.specs[g], plan.resolved[g], plan.groups[g]
    if all(i in stored for i in idx):
        runs = [run_store.open(stored[i]["run_id"]) for i in idx]
        folder = runs[0].checkpoint_dir  # restorable here if the runs hold its chunks too
        restore = (folder is not None and folder.is_dir() and any(folder.iterdir())
                   and bool(chunk_files(runs[0].folder)))
        for run in runs:
            run.reopen()
            if not restore:  # trained again from its first update: no stale chunks
                for chunk in chunk_files(run.folder):
                    chunk.unlink()
        return runs, restore
    metas = [{"sweep_params": plan.swept[i], "sweep_index": i} for i in idx]
    return new_group_runs(run_store, spec, r, plan.command, metas, checkpoints,
                          sweep_id=sweep_id), False


def _say(enabled: bool, text: str) -> None:
    if enabled:
        print(text, file=sys.stderr, flush=True)

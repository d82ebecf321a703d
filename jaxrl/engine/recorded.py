"""A group run recorded in the run store: each config's chunks streamed into its run folder as
training goes, every run finished (``finished`` / ``failed`` / ``interrupted``), and resumption
of an interrupted group from its newest valid checkpoint."""

from __future__ import annotations

import contextlib

import numpy as np

from envs.core import frames_per_step
from jaxrl.engine.loop import GroupOutcome, run_group
from jaxrl.engine.members import Members
from jaxrl.engine.programs import act_program
from jaxrl.engine.spec import GroupSpec, Resolved, resolve_group
from jaxrl.runs.catalog import catalogue_finished
from jaxrl.runs.report import write_report
from jaxrl.runs.run_lock import held
from jaxrl.runs.store import RunStore, StoreError
from jaxrl.trained.policies import save_policy
from jaxrl.trained.results import NonFiniteMetricError, TrainResult, stored_summary


def run_recorded(spec: GroupSpec, resolved: Resolved, runs: list, *, progress: bool = True,
                 on_chunk=None, restore: bool = False, stop_on_non_finite: bool = True,
                 outcome: GroupOutcome | None = None, between=None) -> list:
    """Run one group, streaming each config's chunks into its run folder (``runs[i]`` for config
    ``i``), and finish every run. With ``outcome`` (a group already run elsewhere, e.g. a Ray
    worker) only record it; ``between``: `jaxrl.engine.loop.BetweenChunks`. Returns one
    `TrainResult` per config; raises
    `NonFiniteMetricError` for a single run whose metrics went non-finite."""
    members = Members(resolved.configs, spec.seeds, spec.seed)

    def record(chunk: dict) -> None:
        for i, run in enumerate(runs):
            run.write_chunk(chunk["chunk"], members.of_config(chunk["metrics"], i),
                            chunk["first_update"])
        if on_chunk is not None:
            on_chunk(chunk)

    prior = recorded_chunks(runs) if restore else None
    try:
        if outcome is None:
            outcome = run_group(spec, resolved, progress=progress, on_chunk=record,
                                stop_on_non_finite=stop_on_non_finite,
                                checkpoint_dir=runs[0].checkpoint_dir, restore=restore,
                                prior_chunks=prior, between=between)
        else:
            first_update = 0
            for c, metrics in enumerate(outcome.chunks):
                record({"chunk": c, "metrics": metrics, "first_update": first_update})
                first_update += metrics["env_steps"].shape[1]
    except KeyboardInterrupt:
        for run in runs:
            end_run(run, "interrupted", "interrupted by the user")
        raise
    except BaseException as err:
        for run in runs:
            end_run(run, "failed", f"{type(err).__name__}: {err}")
        raise
    act = act_program(resolved)
    results = []
    for i, run in enumerate(runs):
        result = outcome.config_result(i, resolved.algorithm.name, spec.env, act,
                                       (resolved.env, resolved.env_params))
        result.run_id, result.run_dir = run.run_id, str(run.folder)
        failure = outcome.failures.get(i)
        finish_run(run, "failed" if failure else "finished", result, failure)
        results.append(result)
    catalogue_finished(runs[0].folder.parent)
    if stop_on_non_finite and outcome.failures:
        raise NonFiniteMetricError(outcome.failures[0], results[0])
    return results


def new_group_runs(store: RunStore, spec: GroupSpec, resolved: Resolved, command,
                   metas: list[dict], checkpoints=None, **new_run) -> list:
    """One new run in ``store`` per config of a resolved group (``metas``: each run's extra
    ``run.json`` fields; ``new_run``: `RunStore.new_run`'s keywords, e.g. ``sweep_id``), each
    recorded as a member of the group: its spec, its runs and its ``checkpoints`` folder (None:
    the first run's own folder when the spec checkpoints, else none). The one way a train, a
    sweep group or a bench entry creates its runs."""
    runs = [store.new_run(resolved.algorithm.name, spec.env, config.to_dict(), spec.seeds,
                          spec.total_steps, command,
                          frames_per_step=frames_per_step(resolved.env), **new_run)
            for config in resolved.configs]
    if checkpoints is None and spec.checkpoint_every:
        checkpoints = runs[0].folder / "checkpoints"
    for run, meta in zip(runs, metas, strict=True):
        run.meta.update(meta)
        run.set_group(spec, [r.run_id for r in runs], checkpoints)
    return runs


def end_run(run, status: str, message: str) -> None:
    """Record that ``run`` stopped early, if its store can still be written: on a full disk it
    cannot, and the run then reads as ``interrupted`` (its process is gone), its finished
    chunks kept; the error that stopped it is what is reported."""
    with contextlib.suppress(StoreError):
        run.finish(status, message=message)


def finish_run(run, status: str, result: TrainResult, message: str | None) -> None:
    """End ``run`` with ``result``: its trained policy (`jaxrl.trained.policies`), summary and
    evaluations into the store, then its report and curves."""
    if result.state is not None:
        save_policy(run.folder, result.state)
    run.finish(status, message=message, summary=stored_summary(result),
               evaluations=result.evaluations)
    write_report(run.folder, run.meta, result)


def recorded_chunks(runs: list) -> list:
    """The member-batched metric chunks ``[{name: [members, K]}]`` the runs' folders hold
    (config-major, as `Members` orders them), up to the shortest run."""
    per_run = [run.read_chunks() for run in runs]
    return [{n: np.concatenate([p[c][n] for p in per_run]) for n in per_run[0][c]}
            for c in range(min(len(p) for p in per_run))]


def resume_group(run_store: RunStore, run_id: str, progress: bool = True) -> list:
    """Continue an interrupted run (or every run of its sweep group) from its newest valid
    checkpoint, writing into the same run folders. Returns the `TrainResult` of each config of
    the group (one for a plain run)."""
    run_store.ensure_writable()  # a read-only store: one line before anything is rebuilt
    meta = run_store.load(run_id)
    group = meta.get("group")
    if not group or not group.get("checkpoint_dir"):
        raise StoreError(f"run {run_id!r} was not checkpointed (train with --checkpoint-every)")
    if meta.get("pbt_id"):  # its population changes between chunks: pbt knows how
        raise StoreError(f"run {run_id!r} is a member of population-based training "
                         f"{meta['pbt_id']!r}: continue it with `jaxrl pbt ... --resume "
                         f"{meta['pbt_id']}`")
    if meta.get("search_id"):  # its slots are refilled between chunks: search knows how
        raise StoreError(f"run {run_id!r} is a slot of pruned search {meta['search_id']!r}: "
                         f"continue it with `jaxrl search ... --resume {meta['search_id']}`")
    first = run_store.open(group["runs"][0])
    with held(first.folder, run_id):  # one writer at a time; read the runs again under it
        return _resume_locked(run_store, run_id, progress)


def _resume_locked(run_store: RunStore, run_id: str, progress: bool) -> list:
    """`resume_group` once this process holds the group's lock."""
    meta = run_store.load(run_id)
    group = meta["group"]
    runs = [run_store.open(rid) for rid in group["runs"]]
    statuses = {run.meta["status"] for run in runs}
    if "running" in statuses:
        raise StoreError(f"run {run_id!r} is still running (pid {meta.get('pid')} on "
                         f"{meta.get('host')})")
    if statuses == {"finished"}:
        raise StoreError(f"run {run_id!r} already finished; nothing to resume")
    spec = GroupSpec.from_dict(group["spec"])
    spec.configs = [{k: v for k, v in run.meta["config"].items() if k != "total_steps"}
                    for run in runs]  # the exact configs that ran
    resolved = resolve_group(spec)
    recorded_chunks(runs)  # a bad stored chunk: one line now, before any run is reopened
    for run in runs:
        run.reopen()
    return run_recorded(spec, resolved, runs, progress=progress, restore=True,
                        stop_on_non_finite=len(runs) == 1)

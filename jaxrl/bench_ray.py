"""``jaxrl bench --backend ray``: each benchmark entry one Ray task, recorded as it ends.

    for each entry to run:  spec = the request `train` would make of it       # same run key
    tasks (jaxrl.backends.ray.stream_groups), each checkpointing every chunk into
        <checkpoint root>/<bench id>/<entry key>/   (default: the bench's folder of the store)
    as each task ends: one recorded run (bench id, entry name), its folder's checkpoints dropped

The entry's folder is named by its request key, so running the same bench again after a kill
resumes each unfinished entry from its newest checkpoint there.
"""

from __future__ import annotations

import sys
from pathlib import Path

from envs.core import frames_per_step
from jaxrl.backends import group_dir
from jaxrl.backends.ray import stream_groups
from jaxrl.engine.recorded import end_run, run_recorded
from jaxrl.engine.spec import resolve_group, single_spec
from jaxrl.runs import bench_report
from jaxrl.runs.demos import with_demos_found
from jaxrl.runs.store import RunStore


def entry_folder(store: RunStore, checkpoint_root, bench_id: str, key: str) -> Path:
    """Where the worker of an entry keeps its checkpoints and chunks."""
    base = (Path(checkpoint_root) / bench_id if checkpoint_root is not None
            else bench_report.bench_dir(store, bench_id) / "groups")
    return (base / key).absolute()


def run_entries(entries: list, keys: list[str], seed: int, store: RunStore, bench_id: str,
                command: list, *, progress: bool, checkpoint_root,
                ray: dict) -> tuple[list[str], dict[str, str]]:
    """Run ``entries`` (`jaxrl.bench_suite.Entry`, with their request ``keys``) on Ray,
    recording each as it ends. Returns the names that finished and ``{name: message}`` of
    those that failed."""
    specs = [single_spec(e.algo, e.env, e.seeds, e.total_steps, seed=seed,
                         eval_episodes=e.eval_episodes, env_kwargs=e.env_kwargs,
                         **with_demos_found(e.config, str(store.root))) for e in entries]
    folders = [entry_folder(store, checkpoint_root, bench_id, key) for key in keys]
    ran, failed = [], {}
    for j, outcome, error in stream_groups(list(zip(specs, folders)), **ray):
        error = record_entry(entries[j], specs[j], folders[j], outcome, error, store, bench_id,
                             command)
        if error is None:
            ran.append(entries[j].name)
        else:
            failed[entries[j].name] = error
        if progress:
            print(f"bench {bench_id}: {entries[j].name} " + (
                "recorded" if error is None else f"FAILED: {error}"), file=sys.stderr, flush=True)
        del outcome
    return ran, failed


def record_entry(entry, spec, folder: Path, outcome, error: str | None, store: RunStore,
                 bench_id: str, command: list) -> str | None:
    """One run in the store for an entry whose task ended: its ``outcome`` recorded (and the
    folder's checkpoints released), or ``error`` recorded as its failure. Returns the failure
    message, or None when the entry finished."""
    resolved = resolve_group(spec)
    run = store.new_run(resolved.algorithm.name, entry.env, resolved.config.to_dict(),
                        spec.seeds, spec.total_steps, command,
                        frames_per_step=frames_per_step(resolved.env))
    run.meta.update(bench_id=bench_id, bench_entry=entry.name)
    run.set_group(spec, [run.run_id], folder / "checkpoints")
    if error is not None:
        end_run(run, "failed", error)
        return error
    run.meta["resumed_from_chunk"] = outcome.resumed_from_chunk
    try:
        run_recorded(spec, resolved, [run], progress=False, stop_on_non_finite=False,
                     outcome=outcome)
    except Exception as err:  # recorded failed by run_recorded; the other entries go on
        return f"{type(err).__name__}: {err}".splitlines()[0]
    group_dir.release(folder)  # recorded: its checkpoints and chunks are not needed
    return run.meta["message"] if run.meta["status"] == "failed" else None

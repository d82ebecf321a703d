"""``jaxrl bench --backend ray``: each benchmark entry one Ray task, recorded as it ends.

    for each entry to run:  spec = the request `train` would make of it       # same run key
    tasks (jaxrl.studies.ray.stream_groups), each checkpointing every chunk into
        <checkpoint root>/<bench id>/<entry key>/   (default: the bench's folder of the store)
    as each task ends: one recorded run (bench id, entry name), its folder's checkpoints dropped

The entry's folder is named by its request key, so running the same bench again after a kill
resumes each unfinished entry from its newest checkpoint there.
"""

from __future__ import annotations

import sys
from pathlib import Path

from jaxrl.engine.recorded import end_run, new_group_runs, run_recorded
from jaxrl.engine.spec import resolve_group, single_spec
from jaxrl.runs.demos import with_demos_found
from jaxrl.runs.store import RunStore
from jaxrl.studies.bench import report as bench_report
from jaxrl.studies.ray import record_as_they_end


def entry_folder(store: RunStore, checkpoint_root, bench_id: str, key: str) -> Path:
    """Where the worker of an entry keeps its checkpoints and chunks."""
    base = (Path(checkpoint_root) / bench_id if checkpoint_root is not None
            else bench_report.bench_dir(store, bench_id) / "groups")
    return (base / key).absolute()


def run_entries(entries: list, keys: list[str], seed: int, store: RunStore, bench_id: str,
                command: list, *, progress: bool, checkpoint_root,
                ray: dict) -> tuple[list[str], dict[str, str]]:
    """Run ``entries`` (`jaxrl.studies.bench.suite.Entry`, with their request ``keys``) on Ray,
    recording each as it ends. Returns the names that finished and ``{name: message}`` of
    those that failed."""
    specs = [single_spec(e.algo, e.env, e.seeds, e.total_steps, seed=seed,
                         eval_episodes=e.eval_episodes, env_kwargs=e.env_kwargs,
                         **with_demos_found(e.config, str(store.root))) for e in entries]
    folders = [entry_folder(store, checkpoint_root, bench_id, key) for key in keys]
    ran, failed = [], {}

    def record(j: int, outcome, error: str | None) -> bool:
        error = record_entry(entries[j], specs[j], folders[j], outcome, error, store, bench_id,
                             command)
        if error is None:
            ran.append(entries[j].name)
        else:
            failed[entries[j].name] = error
        if progress:
            print(f"bench {bench_id}: {entries[j].name} " + (
                "recorded" if error is None else f"FAILED: {error}"), file=sys.stderr, flush=True)
        return error is None

    record_as_they_end(list(zip(specs, folders, strict=True)), record, ray)
    return ran, failed


def record_entry(entry, spec, folder: Path, outcome, error: str | None, store: RunStore,
                 bench_id: str, command: list) -> str | None:
    """One run in the store for an entry whose task ended: its ``outcome`` recorded (and the
    folder's checkpoints released), or ``error`` recorded as its failure. Returns the failure
    message, or None when the entry finished."""
    resolved = resolve_group(spec)
    run, = new_group_runs(store, spec, resolved, command,
                          [{"bench_id": bench_id, "bench_entry": entry.name}],
                          folder / "checkpoints")
    if error is not None:
        end_run(run, "failed", error)
        return error
    run.meta["resumed_from_chunk"] = outcome.resumed_from_chunk
    try:
        run_recorded(spec, resolved, [run], progress=False, stop_on_non_finite=False,
                     outcome=outcome)
    except Exception as err:  # recorded failed by run_recorded; the other entries go on
        return f"{type(err).__name__}: {err}".splitlines()[0]
    return run.meta["message"] if run.meta["status"] == "failed" else None

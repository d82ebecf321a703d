"""A sweep's manifest in the run store, so that ``jaxrl sweep --resume`` can find the sweep it
continues and re-run only its groups that are missing or did not finish. Store side: no JAX,
no engine.

::

    <root>/sweeps/<sweep_id>/sweep.json    the request (its key), the configs and the groups
    <root>/sweeps/<sweep_id>/groups/       remote workers' resumable group folders (default)
"""

from __future__ import annotations

import hashlib
import json
import warnings
from pathlib import Path

from jaxrl.runs.files import atomic_write_text, json_default
from jaxrl.runs.store import RunStore, StoreError, valid_run_id

MANIFEST = "sweep.json"


def sweep_dir(root, sweep_id: str) -> Path:
    """Where sweep ``sweep_id`` keeps its manifest (a name, never a path)."""
    return Path(root) / "sweeps" / valid_run_id(sweep_id, "sweep id")


def request_key(request: dict) -> str:
    """A digest of what a sweep runs (algorithm, env, budget, seeds, configs, engine options),
    JSON-normalized so tuples and lists agree: the same command has the same key."""
    normal = json.loads(json.dumps(request, default=str, sort_keys=True))
    return hashlib.sha1(json.dumps(normal, sort_keys=True).encode()).hexdigest()[:12]


def write_manifest(root, sweep_id: str, manifest: dict) -> None:
    folder = sweep_dir(root, sweep_id)
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_text(folder / MANIFEST, json.dumps(manifest, indent=2, default=json_default))


def find_sweep(root, key: str) -> str | None:
    """The newest stored sweep whose request has ``key`` (ids sort by their time stamp)."""
    folder = Path(root) / "sweeps"
    found = []
    for path in sorted(folder.glob(f"*/{MANIFEST}")) if folder.is_dir() else []:
        try:
            if json.loads(path.read_text()).get("key") == key:
                found.append(path.parent.name)
        except (OSError, json.JSONDecodeError) as err:
            warnings.warn(f"skipping unreadable sweep manifest {str(path)!r} ({err})",
                          stacklevel=2)
    return found[-1] if found else None


def stored_runs(root, sweep_id: str) -> dict[int, dict]:
    """``{config index: run.json}`` of the runs of ``sweep_id``; where a config has several,
    a finished one first, else the newest."""
    store = RunStore(root)
    best: dict[int, dict] = {}
    for folder in store.run_dirs():
        try:
            meta = store.load(folder.name)
        except StoreError:
            continue
        if meta.get("sweep_id") != sweep_id or meta.get("sweep_index") is None:
            continue
        rank = lambda m: (m.get("status") == "finished", m.get("started_at") or "", m["run_id"])
        index = int(meta["sweep_index"])
        if index not in best or rank(meta) > rank(best[index]):
            best[index] = meta
    return best


def finished_groups(groups: list[list[int]], runs: dict[int, dict]) -> set[int]:
    """The groups every config of which has a finished run in ``runs`` (`stored_runs`)."""
    return {g for g, idx in enumerate(groups)
            if all(runs.get(i, {}).get("status") == "finished" for i in idx)}

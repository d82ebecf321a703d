"""A bench's progress in a folder small enough to commit, so that a long bench lost with its
machine goes on from a fresh clone on another (`jaxrl bench SUITE --resume-from PATH`).

The folder holds, per run the bench counts (`report.bench_runs`): its ``run.json`` (a run
still going is recorded there as interrupted, to be resumed), its metrics and evaluations, and,
for a run not yet finished, the newest complete checkpoint step (a finished run's checkpoints
are never needed again). What a report does not read is left out: the trained policy (a
finished PPO run's on a 16x16 Navix grid was 3.4 MB of the 4 MB), the run's own report and
figure; a carried run says it kept no policy. ``progress.json`` lists the runs with their status and
sizes. `save` writes a whole new copy beside the old one and swaps it in, so a kill during a
save leaves the previous copy (or, between the two renames, the previous copy under
``PATH.old``, which `load` reads too); `load` copies into a run store the runs it lacks. A
save keeps, as they were, the runs of the folder that the bench does not count (another
bench's, or one whose request no entry asks for any more), so no progress is lost.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import time
from pathlib import Path

from jaxrl.runs.checkpoint_steps import complete_steps
from jaxrl.runs.store import Run, RunStore, record_if_dead
from jaxrl.studies.bench import report as bench_report
from jaxrl.trained.policies import POLICY_FILE

MANIFEST = "progress.json"
# a run folder's parts not copied as they are: its lock, its checkpoints (the newest only, of
# an unfinished run), and what no report or resume reads
_SKIP = {".lock", "checkpoints", POLICY_FILE, "curves.png", "report.md"}


def _tree_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _copy_run(store: RunStore, run_id: str, dest: Path) -> dict:
    """Copy run ``run_id`` into ``dest/run_id``: its files, and the newest complete checkpoint
    of an unfinished run; returns its line of the manifest."""
    folder = store.root / run_id
    meta = record_if_dead(folder)  # a run whose process died is interrupted
    out = dest / run_id
    out.mkdir(parents=True)
    for item in folder.iterdir():
        if item.name in _SKIP or item.name.endswith(".tmp"):
            continue
        if item.is_dir():
            shutil.copytree(item, out / item.name,
                            ignore=lambda _d, names: [n for n in names if n.endswith(".tmp")])
        else:
            shutil.copy2(item, out / item.name)
    checkpoint, step = Run(folder, meta).checkpoint_dir, None
    if meta.get("status") != "finished" and checkpoint is not None and checkpoint.is_dir():
        steps = complete_steps(checkpoint)
        inside = checkpoint.resolve().is_relative_to(folder.resolve())
        if steps and inside:
            step = steps[-1]
            target = out / checkpoint.resolve().relative_to(folder.resolve()) / str(step)
            shutil.copytree(checkpoint / str(step), target)
    if meta.get("status") == "running":  # alive elsewhere: resumable here from the copy
        meta = {**meta, "status": "interrupted",
                "message": f"carried while running on {meta.get('host')} (pid "
                           f"{meta.get('pid')}); resumes from checkpoint step {step}"}
    (out / "run.json").write_text(json.dumps(meta, indent=2))
    return {"run_id": run_id, "entry": meta.get("bench_entry"), "status": meta.get("status"),
            "checkpoint_step": step, "bytes": _tree_bytes(out),
            "checkpoint_bytes": _tree_bytes(out / "checkpoints") if step is not None else 0}


def save(store: RunStore, bench_id: str, dest) -> dict:
    """Write the bench's progress into ``dest`` (replacing what is there); returns the
    manifest, also written as ``dest/progress.json``."""
    dest = Path(dest)
    runs = sorted({m["run_id"] for m in bench_report.bench_runs(store, bench_id).values()})
    fresh = dest.with_name(f".{dest.name}.new")
    shutil.rmtree(fresh, ignore_errors=True)
    fresh.mkdir(parents=True)
    lines = [_copy_run(store, run_id, fresh) for run_id in runs]
    lines += _keep_others(dest, fresh, set(runs))
    manifest = {"bench_id": bench_id, "saved_at": time.strftime("%Y-%m-%dT%H:%M:%SZ",
                                                                time.gmtime()), "runs": lines}
    (fresh / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    old = dest.with_name(f"{dest.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    if dest.exists():
        dest.rename(old)
    fresh.rename(dest)
    shutil.rmtree(old, ignore_errors=True)
    return manifest


def _keep_others(dest: Path, fresh: Path, counted: set[str]) -> list[dict]:
    """Copy into ``fresh`` the runs of the progress folder ``dest`` that this bench does not
    count (another bench's, or one whose request no entry asks for today): a save never
    drops progress it did not write. Their manifest lines are kept, marked ``kept``."""
    if not (dest / MANIFEST).is_file():
        return []
    try:
        old_lines = json.loads((dest / MANIFEST).read_text())["runs"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    kept = []
    for line in old_lines:
        run_id = line.get("run_id") if isinstance(line, dict) else None
        if (not isinstance(run_id, str) or run_id in counted or "/" in run_id
                or not (dest / run_id / "run.json").is_file()):
            continue
        shutil.copytree(dest / run_id, fresh / run_id)
        kept.append({**line, "kept": "not a run of this bench; kept as it was"})
    return kept


def load(src, store: RunStore) -> list[str]:
    """Copy into ``store`` every run of the progress folder ``src`` (or of ``src.old``, left by a
    save cut short) that the store does not hold; returns their ids. A missing folder is no
    progress yet: nothing to copy."""
    src = Path(src)
    if not (src / MANIFEST).is_file() and (src.with_name(f"{src.name}.old") / MANIFEST).is_file():
        src = src.with_name(f"{src.name}.old")
    if not (src / MANIFEST).is_file():
        return []
    copied = []
    for line in json.loads((src / MANIFEST).read_text())["runs"]:
        run_id = line["run_id"]
        if (store.root / run_id).exists() or not (src / run_id / "run.json").is_file():
            continue
        shutil.copytree(src / run_id, store.root / run_id)
        copied.append(run_id)
    return copied


def save_interval() -> float:
    """Seconds between two saves after checkpoints: ``$JAXRL_PROGRESS_EVERY``, else 60."""
    raw = os.environ.get("JAXRL_PROGRESS_EVERY", "60")
    try:
        return max(0.0, float(raw))
    except ValueError:
        raise ValueError(f"JAXRL_PROGRESS_EVERY must be a number of seconds, got {raw!r}") from None


class Mirror:
    """`save` after a checkpoint at most every `save_interval` seconds (an
    `jaxrl.engine.resumption.AFTER_CHECKPOINT` hook: it waits for that checkpoint to be on
    disk, then copies), and at each `flush`."""

    def __init__(self, store: RunStore, bench_id: str, dest):
        self.store, self.bench_id, self.dest = store, bench_id, Path(dest)
        self.every, self.last = save_interval(), -math.inf

    def __call__(self, chunks_done: int, checkpointer) -> None:
        del chunks_done
        if time.monotonic() - self.last >= self.every:
            checkpointer.wait()
            self.flush()

    def flush(self) -> None:
        save(self.store, self.bench_id, self.dest)
        self.last = time.monotonic()

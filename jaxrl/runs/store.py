"""The run store: every training run archived in ``<root>/<run_id>/``.

Layout of one run folder::

    run.json                 metadata (config, command, git commit, versions, device, times,
                             status, final evaluation returns per seed, summary)
    code.diff                uncommitted changes of the code that ran (may be empty)
    metrics/chunk-00000.parquet ...   per-seed per-update metrics, one file per chunk,
                             written as training goes (a crash keeps every finished chunk)
    evaluations.parquet      periodic deterministic evaluations per seed
    report.md, curves.png    the report written when the run ends

Every file is written atomically (temp file in the same folder, then ``os.replace``), so a
reader never sees half a file, and run ids carry a random suffix so two processes starting at
the same second never collide.
"""

from __future__ import annotations

import datetime as _dt
import errno
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd

from envs import families
from jaxrl.repo_data import REPO
from jaxrl.runs.files import (  # noqa: F401  (re-exported: the store's file helpers)
    StoreError,
    atomic_write_bytes,
    atomic_write_parquet,
    atomic_write_text,
    finite_or_none,
    json_default,
    require_free,
    stamped_id,
    write_error,
)
from jaxrl.runs.frames import metrics_frame
from jaxrl.runs.integrity import file_reasons, read_run_json
from jaxrl.runs.kept_checks import CHECKED_FIELD, writer_record
from jaxrl.runs.layout import (  # noqa: F401  (re-exported)
    DEFAULT_ROOT,
    ID_RULE,
    METRICS_DIR,
    chunk_name,
    default_root,
    is_run_id,
    named_runs,
)
from jaxrl.runs.runmeta import STATUSES, as_read, process_identity

RUN_JSON_BYTES = 64 * 1024  # room for a run.json and code.diff, when checking free space
CHUNK_FILE_BYTES = 8 * 1024  # a metrics chunk file: Parquet footer and schema ...
CHUNK_ROW_BYTES = 512  # ... and per seed per update (a few dozen float metrics), generously


def first_chunks_bytes(runs: int, seeds: int, updates_per_chunk: int, chunks: int = 2) -> int:
    """Roughly the bytes ``runs`` new runs of ``seeds`` seeds need for their ``run.json`` and
    first ``chunks`` metrics chunks (checked free before anything compiles)."""
    return runs * (RUN_JSON_BYTES + chunks * (CHUNK_FILE_BYTES
                                              + seeds * updates_per_chunk * CHUNK_ROW_BYTES))


def valid_run_id(run_id, what: str = "run id") -> str:
    """``run_id`` if it names a run folder of a store (`jaxrl.runs.layout.is_run_id`), else a
    one-line `StoreError`: an id is a name, never a path out of the store."""
    if not is_run_id(run_id):
        raise StoreError(f"{run_id!r} is not a {what}: a {what} is {ID_RULE}")
    return run_id


# run.json fields the store writes and reads back: user ``meta`` may not set them
RESERVED_FIELDS = frozenset({
    "run_id", "algo", "env", "seeds", "total_steps_per_seed", "frames_per_step", "status",
    "config", "command", "command_line", "git_commit", "git_dirty", "versions", "platform",
    "device_kind", "device_count", "started_at", "ended_at", "sweep_id", "sweep_index",
    "sweep_params", "final_eval_return", "final_eval_return_mean", "final_eval_return_iqm",
    "compile_seconds", "compile_source", "compile_parts", "run_seconds", "env_steps_per_second",
    "message", "pid", "host", "pid_started", "group", "resumed", "devices", "metric_names",
    "checked"})


def user_meta(meta: dict | None) -> dict:
    """Extra ``run.json`` fields given by a user, checked: a `StoreError` (one line) for a
    non-string key or a field the store owns (`RESERVED_FIELDS`)."""
    meta = dict(meta or {})
    for key in meta:
        if not isinstance(key, str) or key in RESERVED_FIELDS:
            raise StoreError(f"meta key {key!r} is reserved by the run store (it writes "
                             f"run_id, status, pid, ... itself); use another name")
    return meta


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds")


# what benches and ladders write into the checkout while they run (reports, progress
# folders): data, not code, so it never counts as an uncommitted change of the code that ran
NOT_CODE = (":(exclude)benchmarks",)


def code_provenance() -> dict:
    """Git commit and dirty diff of the jaxrl checkout that is running (if it is one), less
    the committed results it writes to (`NOT_CODE`)."""
    repo = REPO

    def git(*args: str) -> str:
        try:
            out = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                                 timeout=20, check=False)
            return out.stdout if out.returncode == 0 else ""
        except (OSError, subprocess.SubprocessError):
            return ""

    return {"git_commit": git("rev-parse", "HEAD").strip() or None,
            "git_diff": git("diff", "HEAD", "--", ".", *NOT_CODE)}


def package_versions(env: str | None = None) -> dict:
    """Versions of jaxrl and the libraries every run uses, and of those ``env``'s family names
    (`envs.families`: Playground's physics, MuJoCo, MJX), with the family's facts (e.g. which
    physics implementation): a result that changes with a release can then be traced to it."""
    from importlib import metadata

    family = families.prefixed_family(env) if env else None
    names = ("jax", "jaxlib", "flax", "optax", "gymnax", "brax", "jaxrl",
             *(family.packages if family else ()))
    out: dict = {}
    for name in dict.fromkeys(names):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    if family is not None:
        out.update(family.facts)
    return out


def device_info() -> dict:
    import jax

    devices = jax.devices()
    return {"platform": devices[0].platform, "device_kind": devices[0].device_kind,
            "device_count": len(devices)}


class RunStore:
    """A folder of runs. ``RunStore()`` uses ``$JAXRL_RUNS_DIR`` or ``./runs``. A root that
    exists and is not a folder (a file, a FIFO) is a `StoreError`: it is not a store, and
    reading it as an empty one would answer "no runs" and "no bad files" about a typo."""

    def __init__(self, root: os.PathLike | None = None):
        self.root = Path(root) if root is not None else default_root()
        if self.root.exists() and not self.root.is_dir():
            raise StoreError(f"run store {str(self.root)!r} is not a folder: a run store is a "
                             "folder of runs (--runs-dir, $JAXRL_RUNS_DIR)")

    def ensure_writable(self, needed_bytes: int = RUN_JSON_BYTES) -> None:
        """A one-line `StoreError` now, before anything trains, if a run cannot be written
        here: the root cannot be created, is read-only (a file is created and removed to
        know, so a read-only mount is found even by root), or has less than ``needed_bytes``
        free."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise StoreError(f"run store {str(self.root)!r} cannot be created: {err.strerror}") from None
        probe = self.root / f".write-probe-{os.getpid()}.tmp"
        try:
            probe.touch()
            probe.unlink()
        except OSError as err:
            if err.errno == errno.EROFS:
                raise StoreError(f"run store {str(self.root)!r} is read-only (a read-only file "
                                 "system): it can be read, not written") from None
            raise write_error(self.root, err) from None
        if not os.access(self.root, os.W_OK):
            raise StoreError(f"run store {str(self.root)!r} is not writable")
        require_free(self.root, needed_bytes, "a new run")

    def new_run(self, algo: str, env: str, config: dict, seeds: int, total_steps: int,
                command: list[str] | None = None, sweep_id: str | None = None,
                frames_per_step: int = 1) -> Run:
        """A new run folder and its ``run.json``. ``frames_per_step``: emulator frames behind
        one env step (Atari's frame skip), so reports can quote a budget in frames too."""
        self.ensure_writable()
        run_id = stamped_id(algo, env)
        folder = self.root / run_id
        try:
            run = self._create(folder, algo, env, config, seeds, total_steps, command,
                               sweep_id, frames_per_step)
        except BaseException as err:  # a full disk, say: leave no half-made run folder
            shutil.rmtree(folder, ignore_errors=True)
            if isinstance(err, OSError):
                raise write_error(folder, err) from None
            raise
        return run

    def _create(self, folder: Path, algo, env, config, seeds, total_steps, command, sweep_id,
                frames_per_step) -> Run:
        run_id = folder.name
        folder.mkdir()
        (folder / "metrics").mkdir()
        prov = code_provenance()
        atomic_write_text(folder / "code.diff", prov["git_diff"])
        meta = {
            "run_id": run_id, "algo": algo, "env": env, "seeds": int(seeds),
            "total_steps_per_seed": int(total_steps), "frames_per_step": int(frames_per_step),
            "status": "running",
            "config": config, "command": command if command is not None else list(sys.argv),
            "command_line": shlex.join(command if command is not None else sys.argv),
            "git_commit": prov["git_commit"], "git_dirty": bool(prov["git_diff"].strip()),
            "versions": package_versions(env), **device_info(),
            "started_at": _now(), "ended_at": None, "sweep_id": sweep_id,
            "final_eval_return": None, "final_eval_return_mean": None,
            "final_eval_return_iqm": None, "compile_seconds": None, "compile_source": None,
            "run_seconds": None,
            "env_steps_per_second": None, "message": None, **process_identity(),
        }
        run = Run(folder, meta)
        run.save_meta()
        return run

    def run_dirs(self) -> list[Path]:
        if not self.root.is_dir():
            return []
        return named_runs(sorted(p for p in self.root.iterdir() if (p / "run.json").is_file()))

    def load(self, run_id: str) -> dict:
        """A run's ``run.json`` as readers report it (`jaxrl.runs.runmeta.as_read`: a dead
        ``running`` run is ``interrupted``; nothing is written). One line (`StoreError`) for a
        run id that is a path, an unknown run or a damaged ``run.json`` (not JSON, the wrong
        shape, a bad value)."""
        path = self.root / valid_run_id(run_id) / "run.json"
        if not path.exists():
            raise StoreError(f"no run {run_id!r} in {str(self.root)!r}")
        meta, problem = read_run_json(path)
        if problem:
            raise StoreError(f"run {run_id!r} is damaged: its run.json is {problem}"
                             if problem.startswith("not ") else
                             f"run {run_id!r} is damaged: its run.json: {problem}")
        return as_read(meta)

    def open(self, run_id: str) -> Run:
        """An existing run folder, to continue writing it (`jaxrl resume`)."""
        return Run(self.root / valid_run_id(run_id), self.load(run_id))


def record_if_dead(folder: Path) -> dict:
    """For a process that writes the store (never a reader): the run's ``run.json`` as read
    (`jaxrl.runs.runmeta.as_read`), written back when it finds the run's process dead, so that
    a copy of the store taken to another host says ``interrupted`` too."""
    meta = json.loads((folder / "run.json").read_text())
    seen = as_read(meta)
    if seen is not meta:
        Run(folder, seen).save_meta()
    return seen


class Run:
    """One run folder being written. Use `write_chunk` as training goes, then `finish`."""

    def __init__(self, folder: Path, meta: dict):
        self.folder = folder
        self.meta = meta

    @property
    def run_id(self) -> str:
        return self.meta["run_id"]

    def save_meta(self) -> None:
        atomic_write_text(self.folder / "run.json",
                          json.dumps(self.meta, indent=2, default=json_default))

    def set_group(self, spec, run_ids: list[str], checkpoint_dir) -> None:
        """Record the program this run is part of (`jaxrl.engine.spec.GroupSpec`, the runs it
        produces, where its checkpoints go), so `jaxrl resume` can rebuild it. A checkpoint
        folder inside the run store is recorded relative to the store, so a store that is
        moved or copied resumes from its own checkpoints."""
        recorded = None
        if checkpoint_dir is not None:
            checkpoint_dir = Path(checkpoint_dir)
            try:
                recorded = checkpoint_dir.relative_to(self.folder.parent).as_posix()
            except ValueError:  # outside the store: keep it absolute
                recorded = str(checkpoint_dir.absolute())
        self.meta["group"] = {"spec": spec.to_dict(), "runs": list(run_ids),
                              "checkpoint_dir": recorded}
        self.save_meta()

    @property
    def checkpoint_dir(self) -> Path | None:
        """Where the group's checkpoints are (absolute), or None if it is not checkpointed."""
        recorded = self.meta.get("group", {}).get("checkpoint_dir")
        return None if not recorded else self.folder.parent / recorded

    def reopen(self) -> None:
        """Mark a stopped run as running again in this process (resume)."""
        for leftover in self.folder.rglob(".*.tmp"):  # a write a kill cut short; never visible
            leftover.unlink(missing_ok=True)
        self.meta.update(status="running", ended_at=None, message=None, **process_identity(),
                         resumed=[*self.meta.get("resumed", []), _now()])
        self.save_meta()

    def read_chunks(self) -> list[dict]:
        """The metrics chunks written so far, in order, as ``{name: [seeds, K]}`` arrays (the
        inverse of `write_chunk`); stops at the first missing chunk. A chunk that cannot join
        the run (truncated, its metric names not those ``run.json`` records: `file_reasons`)
        is a one-line `StoreError` naming it, before anything is trained on top of it."""
        rels = []
        while (self.folder / METRICS_DIR / chunk_name(len(rels))).is_file():
            rels.append(f"{METRICS_DIR}/{chunk_name(len(rels))}")
        bad = [(rel, why) for rel, why in file_reasons(self.folder, rels, meta=self.meta).items()
               if why]
        if bad:
            rel, why = bad[0]
            more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
            raise StoreError(f"run {self.run_id!r} cannot go on from its stored metrics: {rel} "
                             f"is bad: {why}{more}; restore the file, or train the run again")
        return [self._chunk(self.folder / rel) for rel in rels]

    def _chunk(self, path: Path) -> dict:
        """One chunk file as ``{name: [seeds, K]}`` arrays."""
        frame = pd.read_parquet(path).sort_values(["seed", "update"])
        seeds = frame["seed"].nunique()
        names = [c for c in frame.columns if c not in ("run_id", "seed", "update")]
        return {n: frame[n].to_numpy().reshape(seeds, -1) for n in names}

    def write_chunk(self, index: int, metrics: dict, first_update: int) -> None:
        """``metrics``: ``{name: [seeds, K]}`` host arrays of one chunk -> one Parquet file. The
        first chunk's metric names go into ``run.json`` (``metric_names``) before it is
        written: every chunk of the run is checked against them
        (`jaxrl.runs.schema.file_problems`). A run begun before they were recorded goes on
        without them (its chunks are compared with each other)."""
        if index == 0:
            self.meta["metric_names"] = sorted(metrics)
            self.save_meta()
        frame = metrics_frame([metrics])
        frame["update"] += first_update
        frame.insert(0, "run_id", self.run_id)
        atomic_write_parquet(self.folder / METRICS_DIR / chunk_name(index), frame)

    def finish(self, status: str, message: str | None = None, summary: dict | None = None,
               evaluations: pd.DataFrame | None = None) -> None:
        """Record the end state. ``summary``: JSON fields for ``run.json`` (final returns,
        timings, see `jaxrl.trained.results.stored_summary`); ``evaluations``: one row per (evaluation,
        seed), stored as ``evaluations.parquet``."""
        if status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}")
        self.meta.update(status=status, ended_at=_now(), message=message)
        self.meta.update(summary or {})
        if evaluations is not None:
            evals = evaluations.copy()
            evals.insert(0, "run_id", self.run_id)
            atomic_write_parquet(self.folder / "evaluations.parquet", evals)
        self.meta[CHECKED_FIELD] = writer_record(self.folder, self.meta)
        self.save_meta()

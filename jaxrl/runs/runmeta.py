"""What a ``run.json`` may hold, and what it says now (standard library only).

`validate_meta` is the one check of a run's metadata: every reader (the catalog, `RunStore.load`,
``jaxrl runs check``) calls it, so one bad value (``total_steps_per_seed: 1e30``, a string
where a number goes, a status that is none of `STATUSES`) flags its run ``damaged`` instead of
failing a listing of the whole store.

`as_read` is what a reader reports of a run still marked ``running``: if its process (on this
host) is gone, or its PID now belongs to another process (the PID was reused: the start time
recorded at `process_identity` differs), the run is ``interrupted``. Readers never write this
back: reading the store never writes to it (a read-only store stays readable), and the next
writer of the run (``jaxrl resume``) rewrites its ``run.json`` anyway.
"""

from __future__ import annotations

import json
import math
import os
import socket

from jaxrl.runs.layout import is_run_id

STATUSES = ("running", "finished", "failed", "interrupted")
STEP_LIMIT = 2**31 - 1  # the env-step counters are int32 inside the compiled programs
SEEDS_LIMIT = 2**31 - 1
DEAD_MESSAGE = "process ended without finishing (killed)"

REQUIRED = ("algo", "env", "status", "seeds", "total_steps_per_seed", "config")
TEXT = ("run_id", "algo", "env", "started_at", "ended_at", "git_commit", "sweep_id",
        "command_line", "device_kind", "host", "message", "compile_source", "platform",
        "bench_id", "pbt_id")
NUMBERS = ("final_eval_return_mean", "final_eval_return_iqm", "compile_seconds", "run_seconds",
           "env_steps_per_second")
COUNTS = {"seeds": SEEDS_LIMIT, "total_steps_per_seed": STEP_LIMIT, "frames_per_step": 2**16,
          "device_count": 2**20, "pid": 2**31 - 1}
MAPPINGS = ("config", "group", "versions", "compile_parts", "compile_phases")
LISTS = ("final_eval_return", "train_return_last100")
NAME_CHARS = 200  # the longest metric name ``metric_names`` may record


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _is_count(x, limit: int) -> bool:
    return isinstance(x, int) and not isinstance(x, bool) and 1 <= x <= limit


def field_problem(name: str, value) -> str | None:
    """Why ``value`` cannot be the run.json field ``name`` (None: it can, or the field is not
    one the store reads). A missing field is `validate_meta`'s business."""
    if value is None:
        return f"{name} is missing" if name in REQUIRED else None
    if name == "status" and value not in STATUSES:
        return f"status {value!r} is not one of {', '.join(STATUSES)}"
    if name in TEXT and not isinstance(value, str):
        return f"{name} is not text ({type(value).__name__})"
    if name == "run_id" and not is_run_id(value):
        return f"run_id {value!r:.60} is not a run id (a name, never a path)"
    if name in NUMBERS and not _is_number(value):
        return f"{name} is not a finite number ({value!r:.40})"
    if name in COUNTS and not _is_count(value, COUNTS[name]):
        return f"{name} is not a whole number in [1, {COUNTS[name]}] ({value!r:.40})"
    if name in MAPPINGS and not isinstance(value, dict):
        return f"{name} is not a mapping ({type(value).__name__})"
    if name == "config" and (bad := non_finite_paths(value, name)):
        more = f" and {len(bad) - 1} more" if len(bad) > 1 else ""
        return f"config holds a non-finite number at {bad[0]:.60}{more} (NaN or Infinity)"
    if name in LISTS and not (isinstance(value, list)
                              and all(v is None or _is_number(v) for v in value)):
        return f"{name} is not a list of numbers"
    if name == "metric_names" and not (isinstance(value, list) and all(
            isinstance(v, str) and 0 < len(v) <= NAME_CHARS for v in value)):
        return "metric_names is not a list of metric names"
    if name == "git_dirty" and not isinstance(value, bool):
        return f"git_dirty is not true or false ({value!r:.40})"
    return None


def validate_meta(meta) -> list[str]:
    """The problems of a parsed ``run.json``, one short line each ([] if it is sound)."""
    if not isinstance(meta, dict):
        return [f"not a JSON object (a JSON {type(meta).__name__})"]
    names = [*REQUIRED, *(n for n in meta if n not in REQUIRED)]
    return [p for n in names if (p := field_problem(n, meta.get(n))) is not None]


def sound_part(meta: dict) -> dict:
    """``meta`` without its bad fields (what a listing can still show of a damaged run)."""
    return {k: v for k, v in meta.items() if field_problem(k, v) is None}


def non_finite_paths(value, root: str) -> list[str]:
    """Where a parsed JSON ``value`` holds NaN or an infinity (Python's ``json`` reads the
    tokens ``NaN``, ``Infinity`` and ``-Infinity``, which JSON has not): paths such as
    ``config.learning_rate`` or ``summary.returns[3]`` under ``root`` (may be empty), sorted."""
    found, stack = [], [(root, value)]
    while stack:
        path, item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            found.append(path)
        elif isinstance(item, dict):
            stack.extend((f"{path}.{key}" if path else str(key), v) for key, v in item.items())
        elif isinstance(item, list):
            stack.extend((f"{path}[{i}]", v) for i, v in enumerate(item))
    return sorted(found)


def strict_json(meta: dict) -> tuple[str, list[str]]:
    """``meta`` as JSON text (indented) that any JSON reader takes: each NaN or infinity
    written as ``null``; and the paths of those (`non_finite_paths`), for the reader to say."""
    text = json.dumps(json.loads(json.dumps(meta), parse_constant=lambda _token: None), indent=2)
    return text, non_finite_paths(meta, "")


# -- is the process alive ------------------------------------------------------------------------
def process_start_time(pid: int) -> int | None:
    """When process ``pid`` started (Linux: clock ticks since boot, field 22 of
    ``/proc/<pid>/stat``); None where that cannot be read (no such process, not Linux)."""
    try:
        with open(f"/proc/{int(pid)}/stat", "rb") as f:
            stat = f.read().decode(errors="replace")
        return int(stat.rsplit(")", 1)[1].split()[19])  # fields after "(comm)" start at 3
    except (OSError, ValueError, IndexError):
        return None


def process_identity() -> dict:
    """The run.json fields naming this process: ``pid``, ``host`` and ``pid_started``."""
    pid = os.getpid()
    return {"pid": pid, "host": socket.gethostname(), "pid_started": process_start_time(pid)}


def process_alive(pid: int, started: int | None = None) -> bool:
    """Whether process ``pid`` exists and, when its start time ``started`` was recorded and can
    be read now, is the same process (not another that was given the PID later)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        pass
    except (OverflowError, ValueError):
        return False
    now = process_start_time(pid) if started is not None else None
    return now is None or now == started


def is_dead(meta: dict) -> bool:
    """A run marked ``running`` on this host whose process is gone (or is another process)."""
    if meta.get("status") != "running" or meta.get("host") != socket.gethostname():
        return False
    pid, started = meta.get("pid"), meta.get("pid_started")
    if not _is_count(pid, COUNTS["pid"]):
        return False
    return not process_alive(pid, started if isinstance(started, int) else None)


def as_read(meta: dict) -> dict:
    """``meta`` as a reader reports it: a dead ``running`` run (`is_dead`) is ``interrupted``
    (a copy; nothing is written)."""
    if not is_dead(meta):
        return meta
    return {**meta, "status": "interrupted", "message": DEAD_MESSAGE}

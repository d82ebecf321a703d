"""A bench's ``results.json`` read back (``jaxrl runs bench --from-results`` and ``--merge``):
the one check of what such a file may hold, made before anything is written.

`read_results` is the only way the report reads a results file. Each refusal is one line
(`StoreError`) naming the file and, for a row, its index, its entry and the field, with what
was expected and what was found:

* a regular file (not a FIFO, which would block, ``/dev/zero``, which never ends, nor a
  folder) of at most `MAX_BYTES` of UTF-8 (`jaxrl.named_yaml.read_text`), holding JSON nested
  at most `MAX_DEPTH` deep (the committed reports nest 7 deep);
* a JSON object with a ``title`` and at most `MAX_ROWS` rows (``entries``), each an object
  with the fields `ROW_FIELDS` names, of their types, the entry names unique;
* at most `MAX_SEEDS` per-seed values in a row (and seeds in its curve, of at most
  `CURVE_POINTS` steps), and at most `MAX_VALUES` per-seed and curve values in the file:
  judging a row bootstraps its per-seed values (about 0.1 ms per value, 1 s at `MAX_SEEDS`),
  so a million values would take minutes. The committed reports hold at most 32 per row and a
  few thousand in all.

A field a row may lack that the report prints (`NULLABLE`: timings, devices, the reference)
reads as null. The numbers the report computes again from the per-seed values (`judge`: the
IQM, the intervals, the verdict) and the summary it recomputes (``stale``, ``confidence``)
are not checked: they are never read.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from jaxrl.measures import MEASURES
from jaxrl.named_yaml import read_text
from jaxrl.runs.runmeta import SEEDS_LIMIT, STATUSES, STEP_LIMIT
from jaxrl.runs.store import StoreError
from jaxrl.studies.bench import split_evidence
from jaxrl.studies.bench.figure import CURVE_POINTS

__all__ = ["MAX_BYTES", "MAX_DEPTH", "MAX_ROWS", "MAX_SEEDS", "MAX_VALUES", "ROW_FIELDS",
           "check_results", "read_results"]

MAX_BYTES = 64 * 1024 * 1024  # the largest committed report is 200 kB
MAX_DEPTH = 64
MAX_ROWS = 1_000  # the largest committed report has 72
MAX_SEEDS = 10_000  # per-seed values in a row, seeds in a row's curve
MAX_VALUES = 100_000  # per-seed and curve values in a file, all rows together
ROW_STATUSES = (*STATUSES, "not run")


# -- what a value may be: (test, what it is called in an error) --------------------------------
def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _whole(low: int, high: int):
    return (lambda x: isinstance(x, int) and not isinstance(x, bool) and low <= x <= high,
            f"a whole number in [{low:,}, {high:,}]")


TEXT = (lambda x: isinstance(x, str), "text")
NUMBER = (_is_number, "a finite number")
POSITIVE = (lambda x: _is_number(x) and x > 0, "a finite number > 0")
SWITCH = (lambda x: isinstance(x, bool), "true or false")
MAPPING = (lambda x: isinstance(x, dict), "an object")
TEXTS = (lambda x: isinstance(x, list) and all(isinstance(v, str) for v in x), "a list of text")
STEPS = _whole(1, STEP_LIMIT)


def _one_of(names) -> tuple:
    return (lambda x: x in names, "one of " + ", ".join(repr(n) for n in names))


def _values(limit: int) -> tuple:
    """A list of at most ``limit`` values, each a finite number or null."""
    return (lambda x: isinstance(x, list) and len(x) <= limit
            and all(v is None or _is_number(v) for v in x),
            f"a list of at most {limit:,} finite numbers or nulls")


#: row field -> (kind, how it may be given): "required" (present, not null), "nullable" (may be
#: null; reads as null where absent, `NULLABLE`), "optional" (may be absent or null: the report
#: tells an absent field from a null one: ``config`` not recorded from none asked for, a
#: carried row's ``carried_from`` not recorded (the file's bench id) from none).
ROW_FIELDS: dict[str, tuple[tuple, str]] = {
    "entry": (TEXT, "required"), "algo": (TEXT, "required"), "env": (TEXT, "required"),
    "measure": (_one_of(tuple(MEASURES)), "required"), "status": (_one_of(ROW_STATUSES), "required"),
    "total_steps": (STEPS, "required"), "seeds": (_whole(1, SEEDS_LIMIT), "required"),
    "per_seed": (_values(MAX_SEEDS), "required"),
    "run_id": (TEXT, "nullable"), "carried_from": (TEXT, "optional"),
    "reference": (NUMBER, "nullable"), "reference_source": (TEXT, "nullable"),
    "reference_budget": (POSITIVE, "nullable"), "reference_note": (TEXT, "nullable"),
    "reference_uncertainty": (POSITIVE, "nullable"), "wall_seconds": (NUMBER, "nullable"),
    "compile_seconds": (NUMBER, "nullable"), "compile_source": (TEXT, "optional"),
    "run_seconds": (NUMBER, "nullable"), "env_steps_per_second": (NUMBER, "nullable"),
    "devices": (TEXT, "nullable"), "device_kind": (TEXT, "nullable"),
    "git_commit": (TEXT, "nullable"), "git_dirty": (SWITCH, "nullable"),
    "floor": (MAPPING, "nullable"), "curve": (MAPPING, "nullable"),
    "adaptive": (MAPPING, "nullable"),
    "requested_steps": (STEPS, "optional"), "requested_steps_recorded": (SWITCH, "optional"),
    "reference_budget_at_run": (POSITIVE, "optional"), "frames_per_step": (_whole(1, 2**16),
                                                                           "optional"),
    "eval_episodes": (_whole(1, STEP_LIMIT), "optional"), "config": (MAPPING, "optional"),
    "env_kwargs": (MAPPING, "optional"), "run_config": (MAPPING, "optional"),
    "split_evidence": (MAPPING, "optional"),
}
NULLABLE = tuple(k for k, (_, how) in ROW_FIELDS.items() if how == "nullable")

#: top-level field -> kind; each may be absent or null but ``title`` (required) and
#: ``budget_scale`` (1.0 where absent, never null); ``devices`` and ``git_commits`` read as
#: empty lists where absent.
TOP_FIELDS: dict[str, tuple] = {
    "title": TEXT, "bench_id": TEXT, "suite": TEXT, "suite_path": TEXT, "note": TEXT,
    "created_at": TEXT, "first_written_at": TEXT, "report_written_at": TEXT,
    "carried_from": TEXT, "budget_scale": POSITIVE, "devices": TEXTS, "git_commits": TEXTS,
    "git_dirty": SWITCH,
}

FLOOR = {"value": NUMBER, "source": TEXT}
ADAPTIVE = {"batch": _whole(2, SEEDS_LIMIT), "max_batches": _whole(1, SEEDS_LIMIT),
            "alpha": (lambda x: _is_number(x) and 0 < x < 1, "a number in (0, 1)")}


def _shown(value) -> str:
    """What was found, in JSON's words: ``text 'abc'``, ``a list``, ``null``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"text {value!r:.40}"
    if isinstance(value, (int, float)):
        return f"the number {value!r:.40}"
    if isinstance(value, list):
        return f"a list of {len(value):,}"
    return "an object" if isinstance(value, dict) else type(value).__name__


def _expect(where: str, field: str, what: str, value) -> str:
    return f"{where}: {field} must be {what}, got {_shown(value)}"


# -- the checks --------------------------------------------------------------------------------
def read_results(path: str | Path) -> dict:
    """The checked contents of the bench ``results.json`` at ``path`` (`check_results`), read
    within the module's bounds; `StoreError` (one line naming the file) otherwise."""
    name = f"bench results {str(path)!r}"
    text = read_text(path, "bench results", StoreError, max_bytes=MAX_BYTES)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise StoreError(f"{name} is not JSON ({err.msg} at line {err.lineno}, column "
                         f"{err.colno})") from None
    except RecursionError:
        raise StoreError(f"{name} is nested deeper than {MAX_DEPTH} levels") from None
    return check_results(data, name)


def check_results(data, name: str = "bench results") -> dict:
    """``data`` (a parsed results file, from ``name``) with each row's absent `NULLABLE` fields
    null and absent ``devices`` and ``git_commits`` empty; `StoreError` (one line) for the
    first field that breaks the module's bounds."""
    if _depth(data) > MAX_DEPTH:
        raise StoreError(f"{name} is nested deeper than {MAX_DEPTH} levels")
    if not isinstance(data, dict):
        raise StoreError(f"{name} must be a JSON object with entries, got {_shown(data)}")
    for field in ("title", "entries"):
        if data.get(field) is None:
            raise StoreError(f"{name} has no {field}")
    for field, (test, what) in TOP_FIELDS.items():
        given = field in data and (data[field] is not None or field == "budget_scale")
        if given and not test(data[field]):
            raise StoreError(_expect(name, field, what, data[field]))
    rows = data["entries"]
    if not isinstance(rows, list) or len(rows) > MAX_ROWS:
        raise StoreError(_expect(name, "entries", f"a list of at most {MAX_ROWS:,} rows", rows))
    seen: dict[str, int] = {}
    total = 0
    for i, row in enumerate(rows):
        where = f"{name} row {i}"
        _check_row(row, where)
        if row["entry"] in seen:
            raise StoreError(f"{where}: entry {row['entry']!r:.60} was already named by row "
                             f"{seen[row['entry']]}")
        seen[row["entry"]] = i
        total += len(row["per_seed"]) + _curve_values(row.get("curve"), f"{where} "
                                                      f"({row['entry']!r:.60})")
        if total > MAX_VALUES:
            raise StoreError(f"{name} holds more than {MAX_VALUES:,} per-seed and curve values "
                             f"in all (past it at row {i})")
    return {**data, "devices": data.get("devices") or [],
            "git_commits": data.get("git_commits") or [],
            "entries": [{**dict.fromkeys(NULLABLE), **row} for row in rows]}


def _depth(data) -> int:
    """How deep ``data`` nests (a scalar: 0), without recursion."""
    deepest, stack = 0, [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, (dict, list)):
            deepest = max(deepest, depth)
            if depth > MAX_DEPTH:
                return depth
            items = value.values() if isinstance(value, dict) else value
            stack.extend((v, depth + 1) for v in items if isinstance(v, (dict, list)))
    return deepest


def _check_row(row, where: str) -> None:
    """`StoreError` for the first field of ``row`` that is not what `ROW_FIELDS` says."""
    if not isinstance(row, dict):
        raise StoreError(f"{where} must be an object, got {_shown(row)}")
    if isinstance(row.get("entry"), str):
        where = f"{where} ({row['entry']!r:.60})"
    for field, ((test, what), how) in ROW_FIELDS.items():
        value = row.get(field)
        if value is None:
            if how == "required":
                raise StoreError(f"{where}: {field} is missing (expected {what})")
        elif not test(value):
            raise StoreError(_expect(where, field, what, value))
    for field, kinds in (("floor", FLOOR), ("adaptive", ADAPTIVE)):
        for key, (test, what) in kinds.items() if row.get(field) is not None else ():
            if not test(row[field].get(key)):
                raise StoreError(_expect(where, f"{field}.{key}", what, row[field].get(key)))
    evidence = row.get("split_evidence")
    if evidence is not None:
        split_evidence.check(evidence, f"{where}: split_evidence")
        if not TEXT[0](evidence.get("source")):
            raise StoreError(_expect(where, "split_evidence.source", TEXT[1],
                                     evidence.get("source")))
        if any(s >= len(row["per_seed"]) for s in evidence["failing"]):
            raise StoreError(f"{where}: split_evidence.failing names a seed past its "
                             f"{len(row['per_seed'])} per-seed values")
    runs = (row.get("adaptive") or {}).get("runs")
    if runs is not None and not TEXTS[0](runs):
        raise StoreError(_expect(where, "adaptive.runs", TEXTS[1], runs))


def _curve_values(curve, where: str) -> int:
    """How many values a row's curve holds (``{env_steps: [K], seeds: [S], values: [S][K]}``,
    K at most `CURVE_POINTS`, S at most `MAX_SEEDS`); `StoreError` where it is not one."""
    if curve is None:
        return 0
    steps, seeds, values = curve.get("env_steps"), curve.get("seeds"), curve.get("values")
    if not (isinstance(steps, list) and len(steps) <= CURVE_POINTS
            and all(_is_number(x) for x in steps)):
        raise StoreError(_expect(where, "curve.env_steps",
                                 f"a list of at most {CURVE_POINTS} finite numbers", steps))
    if not (isinstance(seeds, list) and len(seeds) <= MAX_SEEDS
            and all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in seeds)):
        raise StoreError(_expect(where, "curve.seeds", f"a list of at most {MAX_SEEDS:,} whole "
                                 "numbers >= 0", seeds))
    if not isinstance(values, list) or len(values) != len(seeds):
        raise StoreError(_expect(where, "curve.values", f"a list of {len(seeds):,} lists (one "
                                 "per seed)", values))
    per_step = _values(len(steps))
    for s, line in enumerate(values):
        if not per_step[0](line) or len(line) != len(steps):
            raise StoreError(_expect(where, f"curve.values[{s}]", f"a list of {len(steps)} finite "
                                     "numbers or nulls (one per env step)", line))
    return len(seeds) * len(steps)

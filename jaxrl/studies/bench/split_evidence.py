"""Seeds that split by what their policies do, where their scores alone do not show it.

`jaxrl.studies.verdicts.seed_split` finds a split in the scores: a gap between two groups many
times the spread within them. A body can fail in a way the scores blur: on brax's halfcheetah
four TRPO seeds that run on their backs score 1,698-1,953 and four upright ones 2,663-4,491 (one
of them learned late and sits between the groups), and the scores show no split. What tells
them apart is measured outside the report (`experiments/posture.py` plays each seed's
policy) and written beside the per-seed measurements as the seeds that fail, by a stated rule::

    {"run_id": "20261201-...", "split": {"by": "posture", "rule": "upside down on more than
     half of its steps", "failing": [0, 1, 2, 5]}, ...}

``failing`` indexes the run's seeds (member 0 first), as the report's ``per_seed`` does.

`read` checks such a file, one line (`StoreError`) naming the file and the field where it is
not one; `attach` records it on the row of the run it names (``split_evidence``: ``source``,
``by``, ``rule`` and ``failing``), and the report judges that row's seeds as split by it
(`jaxrl.studies.verdicts.labelled_split`): ``split (4 of 8 seeds below reference; by
posture)`` where the interval holds the reference and the rank test finds no side. The row
keeps it: a report rebuilt from its ``results.json``, or merged into a later one for the same
run, keeps the split.
"""

from __future__ import annotations

import json
from pathlib import Path

from jaxrl.named_yaml import read_text
from jaxrl.runs.store import StoreError
from jaxrl.studies.bench.judge import judge

__all__ = ["MAX_BYTES", "attach", "check", "kept", "read", "with_evidence"]

MAX_BYTES = 16 * 1024 * 1024  # a posture file of 8 seeds and six checkpoints is 30 kB
MAX_WORDS = 200  # ``by`` and ``rule`` are a word and a sentence


def _text(value, limit: int) -> bool:
    return isinstance(value, str) and 0 < len(value) <= limit


def _seed_list(value) -> bool:
    return (isinstance(value, list) and len(set(value)) == len(value)
            and all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in value))


def check(split, where: str) -> dict:
    """``split`` (``{"by", "rule", "failing"}``) as a row keeps it; `StoreError` naming
    ``where`` and the first field that is not what it should be."""
    if not isinstance(split, dict):
        raise StoreError(f"{where} must be an object with by, rule and failing")
    for field, test, what in (("by", lambda v: _text(v, 40), "text of at most 40 characters"),
                              ("rule", lambda v: _text(v, MAX_WORDS),
                               f"text of at most {MAX_WORDS} characters"),
                              ("failing", _seed_list, "a list of distinct seed indices >= 0")):
        if not test(split.get(field)):
            raise StoreError(f"{where}: {field} must be {what}, got {split.get(field)!r:.60}")
    return {"by": split["by"], "rule": split["rule"], "failing": sorted(split["failing"])}


def read(path: str | Path) -> dict:
    """The split a file records, with the run it is of: ``{"source", "run_id", "by", "rule",
    "failing"}``; `StoreError` (one line naming the file) where it is not JSON or holds no such
    split."""
    name = f"split evidence {str(path)!r}"
    text = read_text(path, "split evidence", StoreError, max_bytes=MAX_BYTES)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise StoreError(f"{name} is not JSON ({err.msg} at line {err.lineno})") from None
    except RecursionError:
        raise StoreError(f"{name} is nested too deep") from None
    if not isinstance(data, dict) or not _text(data.get("run_id"), 200):
        raise StoreError(f"{name} names no run (a run_id)")
    if "split" not in data:
        raise StoreError(f"{name} records no split (its seeds do not split by its rule)")
    return {"source": str(path), "run_id": data["run_id"], **check(data["split"], name)}


def attach(rows: list[dict], evidence: list[dict]) -> list[dict]:
    """``rows`` with each piece of ``evidence`` (`read`) recorded as ``split_evidence`` on the
    row of the run it names (new row objects; the caller judges them again); `StoreError`
    where two files name one run, a run is in no row, or a failing seed is not one of its
    row's seeds."""
    by_run: dict[str, dict] = {}
    for e in evidence:
        if e["run_id"] in by_run:
            raise StoreError(f"split evidence {e['source']!r}: run {e['run_id']} already has "
                             f"its split from {by_run[e['run_id']]['source']!r}")
        by_run[e["run_id"]] = e
    missing = sorted(set(by_run) - {r.get("run_id") for r in rows})
    if missing:
        raise StoreError(f"split evidence {by_run[missing[0]]['source']!r}: run {missing[0]} "
                         "is in no entry of this report")
    out = []
    for row in rows:
        found = by_run.get(row.get("run_id"))
        if found is not None:
            seeds = len(row.get("per_seed") or [])
            if any(s >= seeds for s in found["failing"]):
                raise StoreError(f"split evidence {found['source']!r}: failing seeds "
                                 f"{found['failing']} for {row['entry']!r}, which has {seeds}")
            row = {**row, "split_evidence": {k: found[k] for k in
                                             ("source", "by", "rule", "failing")}}
        out.append(row)
    return out


def with_evidence(report: dict, files) -> dict:
    """``report`` with the split each file in ``files`` records (`read`) on the row of its run,
    those rows judged again; `StoreError` for a file that is not such evidence, or whose run or
    seeds are not in the report."""
    evidence = [read(f) for f in files]
    if not evidence:
        return report
    smoke = report.get("budget_scale", 1.0) != 1.0
    rows = [judge(r, smoke) if r.get("split_evidence") else r
            for r in attach(report["entries"], evidence)]
    return {**report, "entries": rows}


def kept(row: dict, before: dict, smoke: bool) -> dict:
    """``row`` (a report's, freshly judged) with the ``split_evidence`` an earlier report's row
    ``before`` recorded for the same run, judged again; ``row`` itself otherwise."""
    if (not before.get("split_evidence") or row.get("split_evidence")
            or before.get("run_id") != row.get("run_id")):
        return row
    return judge({**row, "split_evidence": before["split_evidence"]}, smoke)

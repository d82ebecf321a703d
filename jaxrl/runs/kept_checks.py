"""A data file's check, kept: what it found, and the identity of the file it holds for.

Checking a run's Parquet files against the run (`jaxrl.runs.integrity.file_checks`: each file
whole, its columns the store's, its ``run_id`` the run's) parses every footer: about a second
for a store of 1,000 runs. A check is kept as ``{"names": ..., "files": {file: [size,
mtime_ns, ctime_ns, schema key]}}`` of the good files, and holds for as long as each file's
identity (`file_identity`) and the metric names of its run (``names``) are the same. Two
places keep one:

- the catalog, in each run's row (``checked``), so that a refresh reads only changed files;
- the store's writer, in ``run.json`` (``checked``) when a run ends (`writer_record`), so that
  a new store's first query need not parse the footers of files its own writer checked.

A file rewritten, replaced or copied in has another ``ctime`` (no tool sets one), so it is
checked again; ``jaxrl runs check`` reads every file whatever was kept.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from jaxrl.runs.integrity import data_files, file_checks
from jaxrl.runs.layout import RUN_JSON

CHECKED_FIELD = "checked"  # the run.json field of the writer's record


def file_identity(path: str) -> tuple[int, int, int]:
    """``(size, mtime_ns, ctime_ns)`` of a data file, what its kept check holds for;
    ``(-1, -1, -1)`` where it cannot be read. A file rewritten in place with its old size and
    mtime (``cp -p``) reads as changed too: its ctime is new."""
    try:
        st = os.stat(path)
    except OSError:
        return -1, -1, -1
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns


def names_digest(meta: dict) -> str | None:
    """What a file's verdict depends on besides the file: the metric names its run records
    (None: none recorded, its chunks are compared with each other)."""
    names = meta.get("metric_names")
    return None if names is None else json.dumps(names)


def record(meta: dict, files: dict[str, list]) -> dict:
    """A kept check of ``files`` (``{file: [size, mtime_ns, ctime_ns, key]}``) of a run whose
    ``run.json`` is ``meta``."""
    return {"names": names_digest(meta), "files": files}


def reusable(checked, meta: dict) -> dict:
    """``{file: [size, mtime_ns, ctime_ns, key]}`` of a kept check (`record`, or anything
    else, which keeps nothing) whose verdicts still hold for the run whose ``run.json`` is
    ``meta``: it records the same metric names. A run that records none has its chunks judged
    together, so each is read again."""
    if not isinstance(checked, dict) or not isinstance(checked.get("files"), dict):
        return {}
    names = names_digest(meta)
    if names is None or checked.get("names") != names:
        return {}
    return {rel: check for rel, check in checked["files"].items()
            if isinstance(check, list) and len(check) == 4}


def writer_record(folder: Path, meta: dict) -> dict:
    """The writer's check of a run's data files as they are now (`record` of the good ones):
    the same `file_checks` a catalog refresh makes, made once where the files were written."""
    rels = [rel for rel in data_files(folder) if rel != RUN_JSON]
    stamps = {rel: file_identity(f"{folder}/{rel}") for rel in rels}  # before: a file changed
    reasons, keys = file_checks(folder, rels, meta=meta)  # while checked reads as changed
    return record(meta, {rel: [*stamps[rel], keys[rel]] for rel in rels
                         if reasons[rel] is None and rel in keys and stamps[rel][0] >= 0})

"""What an experiment's committed results file says about where its numbers came from: the
command, the commit (and whether the code was edited), the libraries, the device and the date.

A run store holds this per run; an experiment's results file outlives the store it ran in (the
store is not committed), so the file carries it itself."""

from __future__ import annotations

import datetime as _dt
import json
import os
import platform
import re
import sys
from pathlib import Path

from jaxrl.runs.files import atomic_write_text, json_default
from jaxrl.runs.integrity import read_run_json
from jaxrl.runs.store import code_provenance, device_info, package_versions


def measured_here(argv: list[str] | None = None) -> dict:
    """``{"command", "git_commit", "git_dirty", "date", "packages", "device", "cpu_count",
    "python"}`` for the process running now; ``argv`` defaults to ``sys.argv``."""
    code = code_provenance()
    return {"command": " ".join(sys.argv if argv is None else argv),
            "git_commit": code["git_commit"],
            "git_dirty": bool(code["git_diff"].strip()),
            "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "packages": package_versions(),
            "device": device_info(),
            "cpu_count": os.cpu_count(),
            "python": platform.python_version()}


def run_facts(result) -> dict:
    """One `jaxrl.trained.results.TrainResult`'s id and cost: ``run_id``, ``seeds``,
    ``total_steps_per_seed``, ``compile_seconds``, ``compile_source``, ``run_seconds``,
    ``env_steps_per_second`` (over all seeds, compile apart) and ``devices``; for a stored run,
    also the ``git_commit`` and ``git_dirty`` its record took as it started."""
    s = result.summary()
    facts = {"run_id": result.run_id,
             **{k: s[k] for k in ("seeds", "total_steps_per_seed", "compile_seconds",
                                  "compile_source", "run_seconds", "env_steps_per_second",
                                  "devices")}}
    return {**facts, **recorded_code(result.run_dir)}


def recorded_code(run_dir) -> dict:
    """``{"git_commit", "git_dirty", "code_diff_files"}`` from a run folder's ``run.json`` and
    ``code.diff`` (the files a dirty run's checkout had changed); ``{}`` without a record."""
    if run_dir is None:
        return {}
    folder = Path(run_dir)
    meta, _ = read_run_json(folder / "run.json")
    if meta is None:
        return {}
    try:
        diff = (folder / "code.diff").read_text()
    except OSError:
        diff = ""
    return {"git_commit": meta.get("git_commit"), "git_dirty": meta.get("git_dirty"),
            "code_diff_files": re.findall(r"^diff --git a/(\S+)", diff, re.MULTILINE)}


def write_results(path, about: dict, **sections) -> None:
    """An experiment's results file: ``{"about": about, **sections}`` as JSON at ``path``,
    written atomically (numpy values as numbers); nothing when ``path`` is None."""
    if path is not None:
        atomic_write_text(Path(path), json.dumps({"about": about, **sections}, indent=2,
                                                 default=json_default))

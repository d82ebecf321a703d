"""An entry whose run ended no episode (a short run of a game with long episodes) keeps no
curve, and the bench's figure draws the suite's other entries beside it: at a thousandth of
its budget Freeway-MinAtar left an all-missing curve that stopped every later report of its
suite (the GPU plan's dry run of 2026-11-30)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pandas as pd

from jaxrl.studies.bench import figure as bench_figure

REPORT = Path(__file__).resolve().parents[3] / "benchmarks" / "jaxenvs-cpu" / "results.json"


def test_a_curve_with_no_value_at_any_step_is_not_kept():
    frame = pd.DataFrame([{"seed": s, "env_steps": x, "value": np.nan}
                          for s in range(2) for x in (512, 1024)])
    assert bench_figure.curve_record(frame) is None


def test_the_figure_draws_beside_an_entry_with_an_empty_curve(tmp_path):
    report = json.loads(REPORT.read_text())
    drawn = [r for r in report["entries"] if (r.get("curve") or {}).get("env_steps")]
    assert drawn, "the committed report keeps curves"
    broken = copy.deepcopy(report)
    empty = next(r for r in broken["entries"] if r["entry"] == drawn[0]["entry"])
    empty["curve"] = {"env_steps": [], "seeds": [], "values": []}  # as older reports kept it
    spec = bench_figure.figure_spec(broken)
    kinds = {ln["entry"]: ln["kind"] for panel in spec["panels"] for ln in panel["lines"]}
    assert kinds.get(empty["entry"]) != "curve"
    bench_figure.plot(broken, tmp_path / "curves.png")
    assert (tmp_path / "curves.png").stat().st_size > 0

"""The dry run's notes (benchmarks/gpu-plan-dryrun/NOTES.md) say what its logs and plan.json
files hold: the sizes carried, the time, the cache check, the resumed rungs and the steps'
outcomes, for its last run (the folder's files) and the run before it (2bbffbb/)."""

import json
import re
from pathlib import Path

import pytest

from tests.experiments.scripts import load

ROOT = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu-plan-dryrun"


@pytest.fixture(scope="module")
def notes():
    text = (ROOT / "NOTES.md").read_text()
    last, before = text.split("## 2026-11-30, at aedc380")[1].split("## 2026-11-30, at 2bbffbb")
    return {"last": last, "before": before}


def _read(folder: Path):
    return (folder / "dryrun.log").read_text(), json.loads((folder / "plan.json").read_text())


@pytest.mark.parametrize("run, folder", [("last", ROOT), ("before", ROOT / "2bbffbb")])
def test_each_runs_figures_are_its_log_and_plan(notes, run, folder):
    text, (log, plan) = notes[run], _read(folder)
    tree, whl, cache, total = re.search(
        r"tree: ([\d.]+) MiB in \d+ files \+ \.whl ([\d.]+) MiB, \.gpu-cache ([\d.]+) MiB = "
        r"([\d.]+) MiB", log).groups()
    assert f"The tree ({tree} MiB), the wheels ({whl} MiB) and the carried cache ({cache} MiB)" \
        f" came to\n  {total} MiB" in text
    seconds = int(re.search(r"dry run: PASSED, (\d+) s in all", log).group(1))
    assert f"took {seconds:,} s" in text
    check = plan["cache_check"]
    assert f"in {check['first_compile_seconds']:.1f} s" in text
    assert f"loaded it in {check['again_compile_seconds']:.1f} s" in text
    (runs,) = [v["ppo-brax-hopper x4"] for v in plan["repeats"].values()]
    assert sum(r["status"] == "ok" for r in runs) == 3


def test_the_last_run_has_no_failed_step_and_the_one_before_had_the_two_faults(notes):
    gpu_plan_limits = load("gpu_plan_limits")
    log, plan = _read(ROOT)
    carried = re.findall(r"resumed: (\d+) rungs carried over, 0 measured again", log)
    assert f"{', then '.join(carried)} rungs carried over" in notes["last"]
    assert gpu_plan_limits.step_failures(plan) == [] and "failed step" not in log
    assert plan["timeline"]["status"] == "ok"
    finished = [k for k, b in plan["benches"].items() if b["status"] == "finished"]
    assert finished == ["ppo-Breakout-MinAtar", "ppo-SpaceInvaders-MinAtar",
                        "ppo-Asterix-MinAtar", "ppo-Freeway-MinAtar"]
    (runs,) = [v["ppo-brax-hopper x4"] for v in plan["repeats"].values()]
    cut = runs[0]["rejax"]["reason"]
    assert runs[0]["status"] == "failed" and cut == "timed out after 33 s" and "33 s" in \
        notes["last"]

    _, before = _read(ROOT / "2bbffbb")
    assert "No module named 'gymnax'" in before["timeline"]["reason"]
    assert "No module named 'gymnax'" in notes["before"]
    failed = [k for k, b in before["benches"].items() if b["status"] == "failed"]
    assert failed == ["ppo-Freeway-MinAtar", "pqn-Breakout-MinAtar", "pqn-SpaceInvaders-MinAtar",
                      "pqn-Asterix-MinAtar"]
    assert len(gpu_plan_limits.step_failures(before)) == 5  # the timeline and the four benches

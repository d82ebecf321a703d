"""The dry run's notes (benchmarks/gpu-plan-dryrun/NOTES.md) say what its logs and plan.json
files hold: the sizes carried, the time, the cache check, the resumed rungs and the steps'
outcomes, for its newest run (the folder's files) and the two before it (aedc380/, 2bbffbb/)."""

import json
import re
import subprocess
from pathlib import Path

import pytest

from tests.experiments.scripts import load

ROOT = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu-plan-dryrun"


@pytest.fixture(scope="module")
def notes():
    text = (ROOT / "NOTES.md").read_text()
    newest, rest = text.split("## 2026-12-06, at 64864e6")[1].split("## 2026-11-30, at aedc380")
    last, before = rest.split("## 2026-11-30, at 2bbffbb")
    return {"newest": newest, "last": last, "before": before}


def _read(folder: Path):
    return (folder / "dryrun.log").read_text(), json.loads((folder / "plan.json").read_text())


@pytest.mark.parametrize("run, folder", [("last", ROOT / "aedc380"), ("before", ROOT / "2bbffbb")])
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


def test_the_aedc380_run_has_no_failed_step_and_the_one_before_had_the_two_faults(notes):
    gpu_plan_limits = load("gpu_plan_limits")
    log, plan = _read(ROOT / "aedc380")
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


def test_the_newest_runs_figures_are_its_log_plan_and_bench_smoke(notes):
    """2026-12-06: the tree as it travels, the time, what resumed, the cache check, the steps'
    outcomes (the draw cut by the deadline, no fault), step 5's second try and step 6."""
    gpu_plan_limits, plan_module = load("gpu_plan_limits"), load("gpu_plan")
    text = " ".join(notes["newest"].split())
    log, plan = _read(ROOT)
    tree, whl, total = re.search(
        r"tree: ([\d.]+) MiB in \d+ files \+ \.whl ([\d.]+) MiB = ([\d.]+) MiB", log).groups()
    assert f"The tree as it travels came to {tree} MiB, with the wheels {whl} MiB = {total} MiB" \
        in text
    seconds = int(re.search(r"dry run: FAILED, (\d+) s in all", log).group(1))
    assert f"Steps 1-5 took {seconds:,} s and ended `FAILED`" in text
    assert "LIMIT: benches.tgz missing" in log
    carried = re.findall(r"resumed: (\d+) rungs carried over, 0 measured again", log)
    assert f"carried over {', then '.join(carried)} rungs, none measured twice" in text
    check = plan["cache_check"]
    assert f"rung in {check['first_compile_seconds']:.1f} s" in text
    assert f"loaded it in {check['again_compile_seconds']:.1f} s" in text
    assert gpu_plan_limits.step_failures(plan) == []
    assert plan["timeline"]["status"] == "ok" and plan["timeline"]["tries"] == 1
    assert f"(`{plan['sac_draw']['reason']}`)" in text
    assert all(v["status"] == "ok" for v in plan["sac_cost"].values()) and len(plan["sac_cost"]) == 3
    (runs,) = [v["ppo-brax-hopper x4"] for v in plan["repeats"].values()]
    ratios = ", ".join(f"{r['ratio']:.2f}" for r in runs)
    assert [r["status"] for r in runs] == ["ok"] * 3 and f"(ratios {ratios}:" in text
    finished = {k: b["seconds"] for k, b in plan["benches"].items() if b["status"] == "finished"}
    assert list(finished) == ["ppo-Breakout-MinAtar", "ppo-SpaceInvaders-MinAtar",
                              "ppo-Asterix-MinAtar", "ppo-Freeway-MinAtar"]
    assert f"({', '.join(f'{s:.0f}' for s in finished.values())} s)" in text
    smoke = json.loads((ROOT / "bench-smoke.json").read_text())
    assert list(smoke) == [b.slug for b in plan_module.smoke_benches()]
    assert all(r["status"] == "finished" for r in smoke.values())
    for bench in plan_module.smoke_benches():
        assert f"`{bench.entry}` ({smoke[bench.slug]['seconds']:.0f} s)" in text


def test_the_tree_at_the_newest_runs_commit_was_over_a_calls_limit(notes):
    """The committed tree at 64864e6, as `git ls-tree` counts it, against what the NOTES say."""
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-tree", "-r", "-l", "--full-tree", "64864e6"],
                            capture_output=True, text=True)
    if listed.returncode != 0:
        pytest.skip("the clone lacks commit 64864e6")
    size = sum(int(line.split()[3]) for line in listed.stdout.splitlines())
    assert f"it was {size / 2**20:.1f} MiB ({size:,} bytes" in " ".join(notes["newest"].split())

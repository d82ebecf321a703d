"""The dry run's notes (benchmarks/gpu-plan-dryrun/NOTES.md) say what its log and plan.json
hold: the sizes carried, the time, the cache check, the resumed rungs and the failures."""

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu-plan-dryrun"


def test_the_notes_figures_are_the_logs_and_the_plans():
    notes = (ROOT / "NOTES.md").read_text()
    log = (ROOT / "dryrun.log").read_text()
    plan = json.loads((ROOT / "plan.json").read_text())
    tree, whl, cache, total = re.search(
        r"tree: ([\d.]+) MiB in \d+ files \+ \.whl ([\d.]+) MiB, \.gpu-cache ([\d.]+) MiB = "
        r"([\d.]+) MiB", log).groups()
    assert f"The tree ({tree} MiB), the wheels ({whl} MiB) and the carried cache ({cache} MiB)" \
        f" came to\n  {total} MiB" in notes
    seconds = int(re.search(r"dry run: PASSED, (\d+) s in all", log).group(1))
    assert f"The run took {seconds:,} s" in notes
    carried = re.search(r"resumed: (\d+) rungs carried over, 0 measured again", log).group(1)
    assert f"{carried} rungs carried over, none measured twice" in notes
    check = plan["cache_check"]
    assert f"in {check['first_compile_seconds']:.1f} s" in notes
    assert f"loaded it in {check['again_compile_seconds']:.1f} s" in notes
    assert plan["timeline"]["tries"] == 2 and "No module named 'gymnax'" in \
        plan["timeline"]["reason"] and "No module named 'gymnax'" in notes
    failed = [k for k, b in plan["benches"].items() if b["status"] == "failed"]
    assert failed == ["ppo-Freeway-MinAtar", "pqn-Breakout-MinAtar", "pqn-SpaceInvaders-MinAtar",
                      "pqn-Asterix-MinAtar"]
    assert {k: v["status"] for k, v in plan["sac_cost"].items()} == {
        "shipped": "ok", "patches 2-4": "ok", "profiled": "ok"}
    (runs,) = [v["ppo-brax-hopper x4"] for v in plan["repeats"].values()]
    assert [r["status"] for r in runs] == ["ok"] * 3

"""experiments/ladder_rules.py: issue 57's rules read off ladder passes, pair by pair; with
``--longest`` each rung keeps only its pairs at the largest budget any pass gave it."""

import json
from pathlib import Path

import pytest

from tests.experiments.scripts import load


@pytest.fixture(scope="module")
def rules():
    return load("ladder_rules")


def _pass(path: Path, steps: int, rungs: dict[tuple[str, int], tuple[float, float]]) -> Path:
    """A ladder pass: for each (workload, members), jaxrl's and rejax's whole-run rates."""
    points = []
    for (workload, members), (ours, theirs) in rungs.items():
        common = {"workload": workload, "members": members, "status": "ok",
                  "steps_per_member": steps}
        points.append({**common, "lib": "jaxrl", "env_steps_per_second": 1.0,
                       "env_steps_per_second_all": ours})
        points.append({**common, "lib": "rejax", "env_steps_per_second": theirs})
    path.write_text(json.dumps({"points": points}))
    return path


def test_pairs_are_read_pass_by_pass_and_longest_keeps_the_largest_budget(rules, tmp_path):
    short = [_pass(tmp_path / f"short{i}.json", 100,
                   {("ppo-cartpole", 4): (90.0, 100.0), ("ppo-brax-hopper", 1): (110.0, 100.0)})
             for i in range(2)]
    long = [_pass(tmp_path / "long.json", 1600, {("ppo-cartpole", 4): (105.0, 100.0)}),
            _pass(tmp_path / "long_failed.json", 1600, {})]
    files = short + long
    every = rules.pair_ratios(files)
    assert sorted(every[("ppo-cartpole", 4)]) == pytest.approx([0.9, 0.9, 1.05])
    longest = rules.pair_ratios(files, longest=True)
    assert longest[("ppo-cartpole", 4)] == pytest.approx([1.05])  # the 100-step pairs dropped
    assert longest[("ppo-brax-hopper", 1)] == pytest.approx([1.1, 1.1])  # its only budget
    assert not rules.verdicts(every)["every rung >= 1.0"]["holds"]
    found = rules.verdicts(longest)
    assert found["every rung >= 1.0"]["holds"]
    assert found["median rung >= 1.3"]["median"] == pytest.approx((1.05 + 1.1) / 2)
    assert not found["MinAtar and hopper >= 1.2 at 1 member"]["holds"]  # MinAtar absent


def test_a_rung_without_its_peer_is_left_out(rules, tmp_path):
    path = _pass(tmp_path / "p.json", 100, {("ppo-cartpole", 1): (1.0, 1.0)})
    data = json.loads(path.read_text())
    data["points"] = [p for p in data["points"] if p["lib"] == "jaxrl"]
    path.write_text(json.dumps(data))
    assert rules.pair_ratios([path], longest=True) == {}

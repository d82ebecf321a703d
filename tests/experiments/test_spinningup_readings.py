"""The mujoco suite's Spinning Up 3M references (read off the published plots) agree with the
values computed from the plots' SVG paths (experiments/benchmarks/spinningup_3m_readings.json),
within each reading's stated uncertainty."""

import json
from pathlib import Path

from jaxrl.studies.bench.suite import load_suite

ROOT = Path(__file__).resolve().parents[2]
READINGS = json.loads((ROOT / "experiments/benchmarks/spinningup_3m_readings.json").read_text())
BODIES = {"halfcheetah": "HalfCheetah", "hopper": "Hopper", "walker2d": "Walker2d", "ant": "Ant"}


def test_every_spinning_up_reference_is_inside_its_svg_reading():
    values = READINGS["values_at_3M"]
    checked = 0
    for entry in load_suite("mujoco").entries:
        if "-3M/" not in entry.name:
            continue
        body = BODIES[entry.env.split(":")[1]]
        table = values["tensorflow"]["trpo"] if entry.algo == "trpo" else values["pytorch"][
            entry.algo]
        value, uncertainty = table[body]
        assert abs(entry.reference["value"] - value) <= uncertainty, entry.name
        # the reading's uncertainty rides with the reference: no verdict finer than it
        assert entry.reference["uncertainty"] == uncertainty, entry.name
        checked += 1
    assert checked >= 12  # VPG, TRPO, PPO on the four bodies, and the off-policy rows

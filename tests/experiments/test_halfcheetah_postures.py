"""benchmarks/mujoco-cpu/NOTES.md's account of reading 002's TRPO halfcheetah split (baselines'
configuration, 1M): the postures of its committed checkpoints' policies, from the posture file
that experiments/posture.py wrote."""

import json
from pathlib import Path

from tests.experiments.reports import flat_notes

MUJOCO = Path(__file__).resolve().parents[2] / "benchmarks/mujoco-cpu"
RUN = "20261129-145535-trpo-brax-halfcheetah-228f66"


def test_the_trpo_baselines_halfcheetah_split_is_posture():
    flat = flat_notes(MUJOCO)
    posture = json.loads((MUJOCO / "posture/trpo-baselines-halfcheetah-1M.json").read_text())
    assert posture["run_id"] == RUN and posture["episodes"] == 4 and "seeds" not in posture
    last = max(posture["checkpoints"], key=lambda c: c["env_steps"])
    rows = {r["seed"]: r for r in last["seeds"]}
    report = {r["entry"]: r for r in json.loads((MUJOCO / "results.json").read_text())[
        "entries"]}["trpo-baselines/brax:halfcheetah"]
    best = max(range(8), key=lambda s: report["per_seed"][s])
    assert best == 0 and rows[0]["upside_down_share"] < 0.01
    assert f"after {last['env_steps']:,} env steps a seed" in flat
    assert (f"seed 0, the one that succeeds ({report['per_seed'][0]:,.1f}), runs upright at "
            f"{rows[0]['mean_speed']:.2f} m/s") in flat
    others = [rows[s] for s in range(1, 8)]
    shares = [100 * r["upside_down_share"] for r in others]
    speeds = [r["mean_speed"] for r in others]
    assert (f"upside down on {min(shares):.1f}% to {max(shares):.1f}% of their steps, at "
            f"{min(speeds):.2f} to {max(speeds):.2f} m/s") in flat
    turned = min(c["env_steps"] for c in posture["checkpoints"]
                 if all(r["upside_down_share"] > 0.9 for r in c["seeds"] if r["seed"] != 0))
    later = [c for c in posture["checkpoints"] if c["env_steps"] >= turned]
    assert all(r["upside_down_share"] > 0.9 for c in later for r in c["seeds"] if r["seed"])
    assert f"They had turned over by {turned:,} env steps, and none turned back" in flat

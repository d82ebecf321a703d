"""The mujoco notes' PPO and TRPO reacher rows in jaxrl's defaults hold in the report and its run."""

import json
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
HERE = ROOT / "benchmarks/mujoco-cpu"
RUNS = {"ppo": HERE / "progress/20261205-043034-ppo-brax-reacher-f567d5",
        "trpo": HERE / "progress/20261205-044236-trpo-brax-reacher-12f967"}


@pytest.mark.parametrize("algo,side", [("ppo", "above"), ("trpo", "below")])
def test_the_reacher_defaults_rows_the_notes_quote(algo: str, side: str):
    RUN = RUNS[algo]
    flat = " ".join((HERE / "NOTES.md").read_text().split())
    (row,) = [e for e in json.loads((HERE / "results.json").read_text())["entries"]
              if e["entry"] == f"{algo}/brax:reacher"]
    meta = json.loads((RUN / "run.json").read_text())
    assert row["run_id"] == RUN.name and meta["status"] == "finished"
    last100 = np.asarray(meta["train_return_last100"])
    assert np.allclose(row["per_seed"], last100) and len(last100) == 8
    beats = last100 > row["reference"]
    assert row["verdict"].startswith(side) and (beats.all() if side == "above" else not beats.any())
    assert (f"{last100.mean():.1f} [{row['mean_ci_low']:.1f}, {row['mean_ci_high']:.1f}] "
            f"against baselines' {row['reference']:.1f}, {side} (IQM {row['iqm']:.1f})") in flat
    assert "Per seed: " + ", ".join(f"{v:.1f}" for v in last100) in flat
    assert (f"{meta['run_seconds']:,.0f} s of training at {meta['env_steps_per_second']:,.0f} "
            f"env-steps/s over 8 seeds, {meta['compile_seconds']:.1f} s of compile, "
            f"{row['wall_seconds']:,.0f} s of wall") in flat

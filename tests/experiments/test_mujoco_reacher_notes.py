"""The mujoco notes' PPO-reacher row in jaxrl's defaults holds in the report and its run."""

import json
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
HERE = ROOT / "benchmarks/mujoco-cpu"
RUN = HERE / "progress/20261205-043034-ppo-brax-reacher-f567d5"


def test_the_ppo_reacher_defaults_row_the_notes_quote():
    flat = " ".join((HERE / "NOTES.md").read_text().split())
    (row,) = [e for e in json.loads((HERE / "results.json").read_text())["entries"]
              if e["entry"] == "ppo/brax:reacher"]
    meta = json.loads((RUN / "run.json").read_text())
    assert row["run_id"] == RUN.name and meta["status"] == "finished"
    last100 = np.asarray(meta["train_return_last100"])
    assert np.allclose(row["per_seed"], last100) and len(last100) == 8
    assert row["verdict"].startswith("above") and (last100 > row["reference"]).all()
    assert (f"{last100.mean():.1f} [{row['mean_ci_low']:.1f}, {row['mean_ci_high']:.1f}] "
            f"against baselines' {row['reference']:.1f}, above (IQM {row['iqm']:.1f})") in flat
    assert "Per seed: " + ", ".join(f"{v:.1f}" for v in last100) in flat
    assert (f"{meta['run_seconds']:,.0f} s of training at {meta['env_steps_per_second']:,.0f} "
            f"env-steps/s over 8 seeds, {meta['compile_seconds']:.1f} s of compile, "
            f"{row['wall_seconds']:,.0f} s of wall") in flat

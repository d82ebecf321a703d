"""The minatar_paper notes' figures hold in the committed report and the run's record
(benchmarks/minatar-paper-cpu/progress/)."""

import json
from pathlib import Path

import numpy as np

from jaxrl import stats
from tests.experiments.test_minatar_notes import iqm_curve

ROOT = Path(__file__).resolve().parents[2]
HERE = ROOT / "benchmarks/minatar-paper-cpu"
FLAT = " ".join((HERE / "NOTES.md").read_text().split())
BREAKOUT = HERE / "progress/20261205-001723-pqn-gymnax-Breakout-MinAtar-ad4ef6"


def entry(path: Path, name: str) -> dict:
    (row,) = [e for e in json.loads(path.read_text())["entries"] if e["entry"] == name]
    return row


def test_the_breakout_row_is_its_sticky_run_and_the_notes_quote_it():
    row = entry(HERE / "results.json", "pqn-sticky/gymnax:Breakout-MinAtar")
    meta = json.loads((BREAKOUT / "run.json").read_text())
    assert row["run_id"] == BREAKOUT.name and meta["status"] == "finished"
    assert meta["group"]["spec"]["env_kwargs"] == {"sticky_action_prob": 0.1,
                                                   "use_minimal_action_set": False}
    last100 = np.asarray(meta["train_return_last100"])
    assert np.allclose(row["per_seed"], last100) and len(last100) == 8
    assert ("Per seed, the mean of the last 100 training episodes (epsilon 0.05): "
            + ", ".join(f"{v:.1f}" for v in last100)) in FLAT
    lo, hi = row["mean_ci_low"], row["mean_ci_high"]
    assert (f"23.1 [{lo:.1f}, {hi:.1f}] (IQM {row['iqm']:.1f})" in FLAT
            and f"{last100.mean():.1f}" == "23.1")
    assert row["verdict"].startswith("above") and 1.8 < last100.min() / row["reference"] < 2
    steps, iqm = iqm_curve(row)
    for level, at in ((10, 0.8e6), (20, 3.7e6)):
        assert abs(steps[np.argmax(iqm >= level)] - at) < 0.1e6
    greedy = np.asarray(meta["final_eval_return"])
    assert f"mean {greedy.mean():.1f}, per seed {greedy.min():.1f} to {greedy.max():.1f}" in FLAT
    assert (f"{meta['run_seconds']:,.0f} s of training, {meta['env_steps_per_second']:,.0f} "
            f"env-steps/s over 8 seeds, {meta['compile_seconds']:.1f} s of compile, "
            f"{row['wall_seconds']:,.0f} s of wall") in FLAT


def test_the_comparison_with_gymnax_setting():
    sticky = entry(HERE / "results.json", "pqn-sticky/gymnax:Breakout-MinAtar")["per_seed"]
    plain = entry(ROOT / "benchmarks/minatar-cpu/results.json",
                  "pqn/gymnax:Breakout-MinAtar")["per_seed"]
    _, p = stats.welch_t_test(plain, sticky)
    diff = np.mean(plain) - np.mean(sticky)
    assert f"scored {np.mean(plain):.1f} (the minatar suite's row), {diff:.1f} more" in FLAT
    assert f"Welch's t-test p {p:.2f} at 8 seeds a side" in FLAT and p > 0.05

"""benchmarks/trpo-value64-cpu/NOTES.md: each finished row's figures, its comparison with the
mujoco suite's defaults row and the value fit of both, from the committed report and runs."""

import json
from pathlib import Path

import numpy as np
import pandas as pd

from tests.experiments.reports import flat_notes, report_row

ROOT = Path(__file__).resolve().parents[2]
HERE = ROOT / "benchmarks/trpo-value64-cpu"
MUJOCO = ROOT / "benchmarks/mujoco-cpu"
HOPPER = HERE / "progress/20261206-072536-trpo-brax-hopper-1617c1"
DEFAULTS_HOPPER = MUJOCO / "progress/20261205-113601-trpo-brax-hopper-6be5e6"
WALKER = HERE / "progress/20261206-081004-trpo-brax-walker2d-bd6d27"
DEFAULTS_WALKER = MUJOCO / "progress/20261205-172211-trpo-brax-walker2d-67f229"


def _residual_variance(run: Path) -> pd.Series:
    """The value's residual variance per update, the mean over seeds."""
    frame = pd.concat(pd.read_parquet(f) for f in sorted((run / "metrics").glob("*.parquet")))
    return frame.groupby("update")["residual_variance"].mean()


def _fit(ours: pd.Series, theirs: pd.Series) -> tuple[list[float], list[float]]:
    """Both runs' residual variance averaged over their last 25 updates, and at the 25th."""
    last = [float(r[r.index >= r.index.max() - 24].mean()) for r in (ours, theirs)]
    return last, [float(r.loc[24]) for r in (ours, theirs)]


def _finished_row(body: str, run: Path) -> tuple[str, dict, dict]:
    """The notes (flat), ``body``'s report row and its run's record, checked against each
    other: the run finished, its per-seed returns are the row's and the notes quote them with
    the count under the reference and the signed-rank p."""
    flat, row = flat_notes(HERE), report_row(HERE, f"trpo-value64/brax:{body}")
    meta = json.loads((run / "run.json").read_text())
    assert row["run_id"] == run.name and meta["status"] == "finished"
    last100 = np.asarray(meta["train_return_last100"])
    assert np.allclose(row["per_seed"], last100) and len(last100) == 8
    assert "Per seed: " + ", ".join(f"{v:,.1f}" for v in last100) in flat
    assert (f"({row['seeds_below']} of 8 under the reference, signed-rank p "
            f"{row['rank_p']:.3f})") in flat
    return flat, row, meta


def test_the_hopper_bullet_quotes_the_report_and_its_run():
    flat, row, meta = _finished_row("hopper", HOPPER)
    assert row["verdict"] == "reference inside CI"
    assert (f"{row['mean']:,.1f} [{row['mean_ci_low']:,.1f}, {row['mean_ci_high']:,.1f}] against "
            f"baselines' {row['reference']:,.1f}, the reference inside the CI (IQM "
            f"{row['iqm']:,.1f})") in flat
    assert (f"{meta['run_seconds']:,.0f} s of training at {meta['env_steps_per_second']:,.0f} "
            f"env-steps/s over 8 seeds, {meta['compile_seconds']:.1f} s of compile, "
            f"{row['wall_seconds']:,.0f} s of wall") in flat


def _level_with_defaults(body: str, run: Path, defaults_run: Path):
    """The defaults row's mean lies inside ``body``'s interval, as the notes say; returns the
    notes (flat) and both runs' value fits (`_fit`)."""
    flat, row = flat_notes(HERE), report_row(HERE, f"trpo-value64/brax:{body}")
    defaults = report_row(MUJOCO, f"trpo/brax:{body}")
    assert row["mean_ci_low"] <= defaults["mean"] <= row["mean_ci_high"]
    assert f"Level with the defaults row's {defaults['mean']:,.1f}" in flat
    return flat, *_fit(_residual_variance(run), _residual_variance(defaults_run))


def test_hopper_is_level_with_the_defaults_row_and_its_value_fit_a_little_better():
    flat, last, early = _level_with_defaults("hopper", HOPPER, DEFAULTS_HOPPER)
    assert last[0] < last[1] and early[0] < early[1]
    assert (f"averages {last[0]:.4f} over the last 25 updates against the defaults row's "
            f"{last[1]:.4f}, and at the 25th update {early[0]:.4f} against {early[1]:.4f}") in flat


def test_the_walker2d_bullet_quotes_the_report_and_its_run():
    flat, row, meta = _finished_row("walker2d", WALKER)
    assert row["verdict"].startswith("inconclusive")
    assert row["mean_ci_low"] > row["reference"] and row["rank_p"] > 0.05
    assert (f"{row['mean']:,.1f} [{row['mean_ci_low']:,.1f}, {row['mean_ci_high']:,.1f}] against "
            f"baselines' {row['reference']:,.1f}, inconclusive (IQM {row['iqm']:,.1f})") in flat
    assert (f"{meta['run_seconds']:,.0f} s of training at {meta['env_steps_per_second']:,.0f} "
            f"env-steps/s over 8 seeds") in flat
    assert f"from the cache, {meta['compile_seconds']:.1f} s), {row['wall_seconds']:,.0f} s" in flat


def test_walker2d_is_level_with_the_defaults_row_and_its_late_value_fit_is_not_better():
    flat, last, early = _level_with_defaults("walker2d", WALKER, DEFAULTS_WALKER)
    assert last[0] > last[1] and early[0] < early[1]
    assert (f"averages {last[0]:.4f} over the last 25 updates against the defaults row's "
            f"{last[1]:.4f}, though at the 25th update it is lower, {early[0]:.4f} against "
            f"{early[1]:.4f}") in flat


def test_the_halfcheetah_entry_is_named_as_running_with_its_checkpoint_committed():
    flat, row = flat_notes(HERE), report_row(HERE, "trpo-value64/brax:halfcheetah")
    assert row["status"] != "finished" and not row["per_seed"]
    assert "**Halfcheetah**: running when the session of 2026-12-06 ended, relayed." in flat
    progress = json.loads((HERE / "progress/progress.json").read_text())
    steps = [r["checkpoint_step"] for r in progress["runs"]
             if r["entry"] == "trpo-value64/brax:halfcheetah" and r["checkpoint_step"]]
    assert len(steps) == 1 and steps[0] >= 1

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
CHEETAH = HERE / "progress/20261206-134752-trpo-brax-halfcheetah-493fd0"
DEFAULTS_CHEETAH = MUJOCO / "progress/20261206-002105-trpo-brax-halfcheetah-82dd47"
POSTURE = "posture/trpo-value64-halfcheetah-1M.json"


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


def _resumed_row(body: str, run: Path, verdict_words: str) -> dict:
    """The notes quote ``body``'s row (a run resumed from its checkpoint, the compile then read
    from the cache) with ``verdict_words``, its cost and its wall over both segments."""
    flat, row, meta = _finished_row(body, run)
    assert (f"{row['mean']:,.1f} [{row['mean_ci_low']:,.1f}, {row['mean_ci_high']:,.1f}] against "
            f"baselines' {row['reference']:,.1f}, {verdict_words} (IQM {row['iqm']:,.1f})") in flat
    assert (f"{meta['run_seconds']:,.0f} s of training at {meta['env_steps_per_second']:,.0f} "
            f"env-steps/s over 8 seeds") in flat
    assert f"from the cache, {meta['compile_seconds']:.1f} s), {row['wall_seconds']:,.0f} s" in flat
    return row


def test_the_walker2d_bullet_quotes_the_report_and_its_run():
    row = _resumed_row("walker2d", WALKER, "inconclusive")
    assert row["verdict"].startswith("inconclusive")
    assert row["mean_ci_low"] > row["reference"] and row["rank_p"] > 0.05


def test_walker2d_is_level_with_the_defaults_row_and_its_late_value_fit_is_not_better():
    flat, last, early = _level_with_defaults("walker2d", WALKER, DEFAULTS_WALKER)
    assert last[0] > last[1] and early[0] < early[1]
    assert (f"averages {last[0]:.4f} over the last 25 updates against the defaults row's "
            f"{last[1]:.4f}, though at the 25th update it is lower, {early[0]:.4f} against "
            f"{early[1]:.4f}") in flat


def test_the_halfcheetah_bullet_quotes_the_report_and_its_run():
    row = _resumed_row("halfcheetah", CHEETAH, "above")
    assert row["verdict"] == "above reference" and row["seeds_below"] == 0


def test_halfcheetah_is_level_with_the_defaults_row_but_for_its_two_best_seeds():
    flat, last, early = _level_with_defaults("halfcheetah", CHEETAH, DEFAULTS_CHEETAH)
    assert last[0] < last[1] and early[0] > early[1]
    assert (f"averages {last[0]:.4f} over the last 25 updates against the defaults row's "
            f"{last[1]:.4f}, and at the 25th update it is higher, {early[0]:.4f} against "
            f"{early[1]:.4f}") in flat
    ours = sorted(report_row(HERE, "trpo-value64/brax:halfcheetah")["per_seed"])
    defaults = report_row(MUJOCO, "trpo/brax:halfcheetah")["per_seed"]
    assert ours[-3] < max(defaults) < ours[-2]
    assert (f"two best seeds ({ours[-2]:,.1f} and {ours[-1]:,.1f}) are above every seed of the "
            f"defaults row (at most {max(defaults):,.1f})") in flat


def test_halfcheetah_splits_by_posture_and_stays_above_the_reference():
    """The posture file's seeds as the notes quote them; the report names the split from it
    and keeps the verdict, every seed's training return being above the reference."""
    flat, row = flat_notes(HERE), report_row(HERE, "trpo-value64/brax:halfcheetah")
    posture = json.loads((HERE / POSTURE).read_text())
    assert posture["run_id"] == CHEETAH.name and posture["episodes"] == 4
    seeds = {s["seed"]: s for s in posture["seeds"]}
    flipped = posture["split"]["failing"]
    assert flipped == [1, 3, 4, 6] and all(seeds[s]["upside_down_share"] > 0.5 for s in flipped)
    upright = [seeds[2], seeds[7]]
    assert all(s["upside_down_share"] == 0 for s in upright)
    assert ("at {:.2f} and {:.2f} m/s, for {:,.1f} and {:,.1f}".format(
        *[s["mean_speed"] for s in upright], *[s["return"] for s in upright])) in flat
    back = [seeds[s] for s in flipped]
    share = [100 * s["upside_down_share"] for s in back]
    assert (f"upside down on {min(share):.1f}% to {max(share):.1f}% of their steps) at "
            f"{min(s['mean_speed'] for s in back):.2f} to "
            f"{max(s['mean_speed'] for s in back):.2f} m/s, for "
            f"{min(s['return'] for s in back):,.1f} to {max(s['return'] for s in back):,.1f}"
            ) in flat
    third = [seeds[0], seeds[5]]
    assert all(0.3 < s["upside_down_share"] < 0.4 for s in third)
    assert ("({:.1f}% and {:.1f}%), at {:.2f} and {:.2f} m/s".format(
        *[100 * s["upside_down_share"] for s in third],
        *[s["mean_speed"] for s in third])) in flat
    assert row["split_evidence"] == {"source": f"benchmarks/trpo-value64-cpu/{POSTURE}",
                                     **posture["split"]}
    assert row["split"]["succeeding"] == 4 and row["verdict"] == "above reference"
    assert f"4 of 8 succeed, their mean {row['split']['success_mean']:,.1f}" in flat
    assert min(row["per_seed"]) > row["reference"]


def test_the_three_bodies_read_together():
    """Every defaults mean lies inside the value-64 row's interval, so the defaults stay."""
    flat = flat_notes(HERE)
    for body in ("hopper", "walker2d", "halfcheetah"):
        row = report_row(HERE, f"trpo-value64/brax:{body}")
        assert row["status"] == "finished"
        defaults = report_row(MUJOCO, f"trpo/brax:{body}")
        assert row["mean_ci_low"] <= defaults["mean"] <= row["mean_ci_high"]
    assert ("TRPO ends level with the defaults row on hopper, walker2d and halfcheetah" in flat
            and "the defaults keep their 4 value minibatches" in flat)
    progress = json.loads((HERE / "progress/progress.json").read_text())
    assert not [r for r in progress["runs"] if r["checkpoint_step"]]

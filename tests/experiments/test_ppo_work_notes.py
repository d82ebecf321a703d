"""benchmarks/ppo-work-cpu/NOTES.md: the ppo_work row's figures, its failing seeds' episode
lengths and postures, and its comparison with the mujoco suite's two PPO walker2d rows, each from
the committed report, run folders and posture file."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import yaml
from scipy.stats import fisher_exact, mannwhitneyu

from jaxrl.algos.ppo import default_config
from tests.experiments.reports import flat_notes, report_row

ROOT = Path(__file__).resolve().parents[2]
HERE = ROOT / "benchmarks/ppo-work-cpu"
MUJOCO = ROOT / "benchmarks/mujoco-cpu"
RUN = HERE / "progress/20261206-061235-ppo-brax-walker2d-e97fd6"
DEFAULTS_RUN = MUJOCO / "progress/20261205-153017-ppo-brax-walker2d-84eba0"
FALLING = 400  # mean training episode length under which a seed counts as falling


def _flat() -> str:
    return flat_notes(HERE)


def _last_lengths(run: Path) -> pd.DataFrame:
    """Each seed's mean training episode length and return over the run's last 25 updates."""
    frame = pd.concat(pd.read_parquet(f) for f in sorted((run / "metrics").glob("*.parquet")))
    last = frame[frame["update"] >= frame["update"].max() - 24]
    return last.groupby("seed")[["episode_length_mean", "episode_return_mean"]].mean()


def _span(values, fmt: str) -> str:
    return f"{min(values):{fmt}} to {max(values):{fmt}}"


def test_the_result_bullet_quotes_the_report():
    flat, row = _flat(), report_row(HERE, "ppo-work5x/brax:walker2d")
    meta = json.loads((RUN / "run.json").read_text())
    assert row["run_id"] == RUN.name and meta["status"] == "finished" and row["n_finite"] == 8
    assert np.allclose(row["per_seed"], meta["train_return_last100"])
    assert row["verdict"] == "split (3 of 8 seeds below reference)"
    assert (f"{row['mean']:,.1f} [{row['mean_ci_low']:,.1f}, {row['mean_ci_high']:,.1f}], "
            f"**split (3 of 8 seeds below reference)**, IQM {row['iqm']:,.1f}") in flat
    assert "Per seed: " + ", ".join(f"{v:,.1f}" for v in row["per_seed"]) in flat
    assert f"(signed-rank p {row['rank_p']:.3f})" in flat
    seeds = np.asarray(row["per_seed"])
    high, low = seeds[seeds > row["reference"]], seeds[seeds < row["reference"]]
    assert row["split"]["succeeding"] == len(high) == 5
    assert np.isclose(row["split"]["success_mean"], high.mean())
    assert (f"Five seeds succeed, at {_span(high, ',.1f')} (their mean "
            f"{row['split']['success_mean']:,.1f}), every one above the reference; three fail, at "
            f"{_span(low, ',.1f')}") in flat
    assert (f"{meta['run_seconds']:,.0f} s of training at {meta['env_steps_per_second']:,.0f} "
            f"env-steps/s over 8 seeds, {meta['compile_seconds']:.1f} s of compile, "
            f"{row['wall_seconds']:,.0f} s of wall") in flat


def test_the_failing_seeds_fall():
    """Short training episodes for exactly the seeds under the reference, in this row and in the
    defaults row; the posture file's falls and speeds."""
    flat, row = _flat(), report_row(HERE, "ppo-work5x/brax:walker2d")
    ours = _last_lengths(RUN)
    failing = [s for s in range(8) if row["per_seed"][s] < row["reference"]]
    short = ours.index[ours.episode_length_mean < FALLING].tolist()
    assert short == failing == [3, 6, 7]
    walking = ours.drop(index=short).episode_length_mean
    assert (f"last {_span(ours.loc[short].episode_length_mean, ',.1f')} steps on average" in flat
            and f"the five others' {_span(walking, ',.1f')}" in flat)
    posture = json.loads((HERE / "posture/ppo-work5x-walker2d-1M.json").read_text())
    assert posture["run_id"] == RUN.name and posture["episodes"] == 4
    seeds = {r["seed"]: r for r in posture["seeds"]}
    assert all(r["upside_down_share"] == 0 for r in seeds.values())
    assert "None runs upside down" in flat
    fell = [s for s, r in sorted(seeds.items()) if max(r["episode_lengths"]) < 1000]
    assert fell == [3, 6]
    lengths = [n for s in fell for n in seeds[s]["episode_lengths"]]
    assert (f"seeds 3 and 6 fall in every episode, after {_span(lengths, 'd')} steps, while moving "
            f"at {_span([seeds[s]['mean_speed'] for s in fell], '.2f')} m/s") in flat
    assert sorted(seeds[7]["episode_lengths"])[1:] == [1000, 1000, 1000]
    assert f"walks at {seeds[7]['mean_speed']:.2f} m/s" in flat
    theirs = _last_lengths(DEFAULTS_RUN)
    (one,) = theirs.index[theirs.episode_length_mean < FALLING].tolist()
    assert one == 1
    assert (f"seed 1 at {theirs.loc[1].episode_return_mean:,.1f} over its last 25 updates, "
            f"episodes of {theirs.loc[1].episode_length_mean:,.1f} steps") in flat
    others = theirs.drop(index=1).episode_length_mean
    assert f"its seven others last {_span(others, ',.1f')}" in flat


def test_the_comparison_with_the_two_mujoco_rows():
    flat, row = _flat(), report_row(HERE, "ppo-work5x/brax:walker2d")
    defaults = report_row(MUJOCO, "ppo/brax:walker2d")
    baselines = report_row(MUJOCO, "ppo-baselines/brax:walker2d")
    assert row["mean_ci_low"] <= defaults["mean"] <= row["mean_ci_high"]
    assert f"({defaults['mean']:,.1f} lies inside this row's interval)" in flat
    walking = [v for v in defaults["per_seed"] if v > 1500]
    assert len(walking) == 7
    assert (f"this row's five average {row['split']['success_mean']:,.1f}, the defaults' seven "
            f"{np.mean(walking):,.1f}") in flat
    p = fisher_exact([[3, 5], [1, 7]]).pvalue
    assert f"a two-sided Fisher exact test gives p {p:.3f}" in flat
    apart = mannwhitneyu(defaults["per_seed"], baselines["per_seed"]).pvalue
    assert (f"the defaults' {defaults['mean']:,.1f} against baselines' configuration's "
            f"{baselines['mean']:,.1f}, a two-sided Mann-Whitney U test on the 8 seeds of each "
            f"gives p {apart:.3f}") in flat
    lowest = min(baselines["per_seed"])
    assert f"No seed of baselines' own configuration ends below {lowest:,.1f}" in flat
    total = json.loads((RUN / "run.json").read_text())["total_steps_per_seed"]
    preset = yaml.safe_load((ROOT / "presets/ppo/baselines-mujoco.yaml").read_text())
    steps = {name: total // (c["num_envs"] * c["num_steps"]) * c["update_epochs"]
             * c["num_minibatches"] for name, c in (("defaults", vars(default_config(
                 "brax:walker2d"))), ("baselines", preset))}
    assert (f"take {steps['defaults']:,} gradient steps over the run, baselines "
            f"{steps['baselines']:,}") in flat


def test_the_settings_named_as_left_are_where_the_preset_differs_from_the_defaults():
    """The notes' list of baselines' other settings is the preset's every difference from the
    defaults beyond the epochs and minibatches this suite moved (and the list spelling of an
    empty tuple)."""
    preset = yaml.safe_load((ROOT / "presets/ppo/baselines-mujoco.yaml").read_text())
    defaults = vars(default_config("brax:walker2d"))
    differ = {k for k, v in preset.items() if defaults.get(k) != v
              and not (isinstance(v, list) and tuple(v) == defaults.get(k))}
    assert differ == {"hidden", "num_envs", "num_steps", "bootstrap_truncation",
                      "clip_value_loss", "update_epochs"}
    flat = _flat()
    width = "x".join(str(w) for w in preset["hidden"])
    assert (f"one env per seed with {preset['num_steps']:,}-step rollouts, {width} networks, the "
            "value loss clipped, and the time limit treated as a termination") in flat
    assert not preset["bootstrap_truncation"] and preset["clip_value_loss"]


def test_the_mujoco_notes_point_to_the_result():
    """The defaults row's bullet in the mujoco notes says what this suite found, as its report
    holds it: level with the defaults row (its mean inside this row's interval) and split."""
    flat = flat_notes(MUJOCO)
    row, defaults = report_row(HERE, "ppo-work5x/brax:walker2d"), report_row(MUJOCO, "ppo/brax:walker2d")
    assert row["verdict"].startswith("split (3 of 8")
    assert row["mean_ci_low"] <= defaults["mean"] <= row["mean_ci_high"]
    assert ("ends level with this row and split, 3 of 8 seeds in a gait that falls "
            "([../ppo-work-cpu/NOTES.md](../ppo-work-cpu/NOTES.md))") in flat

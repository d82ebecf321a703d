"""The mujoco notes' rows for jaxrl's brax defaults hold in the report and in each row's run."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from jaxrl.algos.ppo import default_config
from tests.experiments.reports import flat_notes, report_row

ROOT = Path(__file__).resolve().parents[2]
HERE = ROOT / "benchmarks/mujoco-cpu"
PROGRESS = HERE / "progress"
INCONCLUSIVE_ABOVE = ("inconclusive: the CI lies above the reference but 2 of 8 seeds fall "
                      "below it")
INCONCLUSIVE_BELOW = "inconclusive: the CI lies below the reference but 1 of 8 seeds is above it"
ABOVE_ONE_BELOW = "above: the CI lies above the reference though 1 of 8 seeds falls below it"
# entry -> (run folder in progress/, how the notes word the verdict)
ROWS = {
    "ppo/brax:reacher": ("20261205-043034-ppo-brax-reacher-f567d5", "above"),
    "trpo/brax:reacher": ("20261205-044236-trpo-brax-reacher-12f967", "below"),
    "ppo/brax:hopper": ("20261205-052244-ppo-brax-hopper-27022e", "the reference inside the CI"),
    "trpo/brax:hopper": ("20261205-113601-trpo-brax-hopper-6be5e6", INCONCLUSIVE_ABOVE),
    "ppo/brax:walker2d": ("20261205-153017-ppo-brax-walker2d-84eba0", INCONCLUSIVE_BELOW),
    "trpo/brax:walker2d": ("20261205-172211-trpo-brax-walker2d-67f229",
                           "the reference inside the CI"),
    "ppo/brax:halfcheetah": ("20261205-203422-ppo-brax-halfcheetah-553382",
                             "the reference inside the CI"),
    "trpo/brax:halfcheetah": ("20261206-002105-trpo-brax-halfcheetah-82dd47", ABOVE_ONE_BELOW),
}
VERDICTS = {"above": "above reference", "below": "below reference",
            "the reference inside the CI": "reference inside CI",
            INCONCLUSIVE_ABOVE: "inconclusive (2 of 8 seeds below reference)",
            INCONCLUSIVE_BELOW: "inconclusive (7 of 8 seeds below reference)",
            ABOVE_ONE_BELOW: "above reference"}


@pytest.mark.parametrize("entry", sorted(ROWS))
def test_the_defaults_rows_the_notes_quote(entry: str):
    run_id, side = ROWS[entry]
    run = PROGRESS / run_id
    flat = flat_notes(HERE)
    row = report_row(HERE, entry)
    meta = json.loads((run / "run.json").read_text())
    assert row["run_id"] == run_id and meta["status"] == "finished"
    last100 = np.asarray(meta["train_return_last100"])
    assert np.allclose(row["per_seed"], last100) and len(last100) == 8
    assert row["verdict"] == VERDICTS[side]
    below = int((last100 < row["reference"]).sum())
    assert {"above": below == 0, "below": below == 8}.get(side, 0 < below < 8)
    if side == INCONCLUSIVE_ABOVE:
        assert below == 2 and row["mean_ci_low"] > row["reference"]
    if side == INCONCLUSIVE_BELOW:
        assert below == 7 and row["mean_ci_high"] < row["reference"]
    if side == ABOVE_ONE_BELOW:
        assert below == 1 and row["mean_ci_low"] > row["reference"]
    assert (f"{last100.mean():,.1f} [{row['mean_ci_low']:,.1f}, {row['mean_ci_high']:,.1f}] "
            f"against baselines' {row['reference']:,.1f}, {side} (IQM {row['iqm']:,.1f})") in flat
    assert f"{meta['status']}" == "finished" and f"`{run_id}`, in [progress/](progress/)" in flat
    assert "Per seed: " + ", ".join(f"{v:,.1f}" for v in last100) in flat
    assert f"({below} of 8 under the reference, signed-rank p {row['rank_p']:.3f}" in flat
    assert (f"{meta['run_seconds']:,.0f} s of training at {meta['env_steps_per_second']:,.0f} "
            f"env-steps/s over 8 seeds, {meta['compile_seconds']:.1f} s of compile, "
            f"{row['wall_seconds']:,.0f} s of wall") in flat


def test_the_ppo_walker2d_bullet_quotes_seed_1s_best_and_the_gradient_steps_of_both_configs():
    """Seed 1's highest training return per update, and the gradient steps each configuration
    takes over the run's budget, from the defaults and from the preset file."""
    flat = flat_notes(HERE)
    run = PROGRESS / ROWS["ppo/brax:walker2d"][0]
    frame = pd.concat(pd.read_parquet(f) for f in sorted((run / "metrics").glob("*.parquet")))
    seed1 = frame[frame.seed == 1].reset_index(drop=True)
    best = seed1.loc[seed1["episode_return_mean"].idxmax()]
    assert (f"never passed {best['episode_return_mean']:,.1f} (update {best['update']:.0f}, "
            f"{best['env_steps']:,.0f} env steps)") in flat
    total = json.loads((run / "run.json").read_text())["total_steps_per_seed"]
    defaults = default_config("brax:walker2d")
    baselines = yaml.safe_load((ROOT / "presets/ppo/baselines-mujoco.yaml").read_text())
    steps = {}
    for name, c in (("defaults", vars(defaults)), ("baselines", baselines)):
        batch = c["num_envs"] * c["num_steps"]
        steps[name] = total // batch * c["update_epochs"] * c["num_minibatches"]
        assert (f"{c['update_epochs']} epochs of {c['num_minibatches']}" in flat
                and f"minibatches of {batch // c['num_minibatches']})" in flat)
    assert (f"4,096 env steps ({steps['defaults']:,} gradient steps in the run" in flat
            and f"per 2,048 ({steps['baselines']:,}" in flat)
    assert f"{steps['baselines'] / steps['defaults']:.1f} times as many" in flat


@pytest.mark.parametrize("body", ["hopper", "walker2d"])
def test_trpo_rows_are_level_with_baselines_configuration_and_with_ppo(body: str):
    """"Level with": the baselines-configuration row's mean and PPO's mean in the same defaults
    both lie inside the TRPO defaults row's CI, at the values the notes quote."""
    flat = flat_notes(HERE)
    row = report_row(HERE, f"trpo/brax:{body}")
    theirs = report_row(HERE, f"trpo-baselines/brax:{body}")["mean"]
    ppo = report_row(HERE, f"ppo/brax:{body}")["mean"]
    assert row["mean_ci_low"] <= theirs <= row["mean_ci_high"]
    assert row["mean_ci_low"] <= ppo <= row["mean_ci_high"]
    assert (f"level with the baselines-configuration row's {theirs:,.1f} above and with PPO's "
            f"{ppo:,.1f} in the same defaults") in flat
    own = row["reference_note"].rsplit(": ", 1)[1]
    assert f"The reading's own TRPO scored {int(own):,}." in flat


def test_the_trpo_walker2d_seeds_fall_in_the_two_groups_the_notes_give():
    """Five seeds at about 3,000 and up, three well below, which the report's split rule does
    not call a split."""
    row = report_row(HERE, "trpo/brax:walker2d")
    assert row["split"] is None
    seeds = sorted(row["per_seed"])
    low, high = seeds[:3], seeds[3:]
    assert high[0] - low[-1] > 900  # the gap between the groups outweighs the spread of the top
    assert high[-1] - high[0] < 600
    assert (f"five at {high[0]:,.1f} to {high[-1]:,.1f} and three at {low[0]:,.1f} to "
            f"{low[-1]:,.1f}") in flat_notes(HERE)


def test_ppo_halfcheetah_two_high_seeds_lift_the_mean_and_the_baselines_row_is_level():
    """Six seeds close together under the reference, two above them; the IQM under the
    reference; the baselines-configuration row's mean inside this row's CI."""
    flat = flat_notes(HERE)
    row = report_row(HERE, "ppo/brax:halfcheetah")
    seeds = sorted(row["per_seed"])
    low, high = seeds[:6], seeds[6:]
    assert low[-1] < row["reference"] < high[0] and row["iqm"] < row["reference"]
    assert row["mean_ci_high"] == pytest.approx(high[-1])
    assert (f"six seeds at {low[0]:,.1f} to {low[-1]:,.1f} and two above them, at "
            f"{high[0]:,.1f} and {high[-1]:,.1f}") in flat
    theirs = report_row(HERE, "ppo-baselines/brax:halfcheetah")
    assert row["mean_ci_low"] <= theirs["mean"] <= row["mean_ci_high"]
    assert theirs["verdict"] == "split (7 of 8 seeds below reference)"
    assert (f"level with the baselines-configuration row's {theirs['mean']:,.1f} above (a split "
            "there, 7 of 8 seeds below)") in flat
    own = row["reference_note"].rsplit(": ", 1)[1]
    assert f"The reading's own PPO scored {int(own):,}." in flat


def test_trpo_halfcheetah_splits_by_posture_and_stays_above_the_reference():
    """The posture file's flipped seeds, their speeds and shares as the notes give them; the
    report names the split from the file, and the verdict stays above because the flipped
    seeds' training returns are mostly above the reference too."""
    flat = flat_notes(HERE)
    row = report_row(HERE, "trpo/brax:halfcheetah")
    posture = json.loads((HERE / "posture/trpo-halfcheetah-1M.json").read_text())
    assert posture["run_id"] == ROWS["trpo/brax:halfcheetah"][0] and posture["episodes"] == 4
    seeds = {s["seed"]: s for s in posture["seeds"]}
    flipped = posture["split"]["failing"]
    upright = [s for s in range(8) if s not in flipped]
    assert flipped == [s for s in range(8) if seeds[s]["upside_down_share"] > 0.5]
    assert flipped == [1, 2, 4, 5]
    assert ("seeds 1, 2, 4 and 5 run on their backs" in flat
            and "Seeds 0, 3, 6 and 7 run upright" in flat)

    def span(values, fmt, unit=""):
        return f"{min(values):{fmt}}{unit} to {max(values):{fmt}}{unit}"

    for group, words in ((flipped, "the torso is upside down on "), (upright, "(upside down on ")):
        shares = [100 * seeds[s]["upside_down_share"] for s in group]
        speeds = [seeds[s]["mean_speed"] for s in group]
        assert f"{words}{span(shares, '.1f', '%')} of their steps" in flat
        assert f"at {span(speeds, '.2f')} m/s" in flat
        assert span([seeds[s]["return"] for s in group], ",.1f") in flat
    source = "benchmarks/mujoco-cpu/posture/trpo-halfcheetah-1M.json"
    assert row["split_evidence"] == {"source": source, **posture["split"]}
    assert row["split"]["succeeding"] == 4 and row["verdict"] == "above reference"
    assert f"4 of 8 succeed, their mean {row['split']['success_mean']:,.1f}" in flat
    trained = [row["per_seed"][s] for s in flipped]
    above = sum(v > row["reference"] for v in trained)
    assert above == 3 and f"are {span(trained, ',.1f')}, 3 of the 4 above the reference" in flat
    meta = json.loads((PROGRESS / ROWS["trpo/brax:halfcheetah"][0] / "run.json").read_text())
    assert f"(the run's own final evaluation gave it {meta['final_eval_return'][0]:.1f})" in flat
    theirs = report_row(HERE, "trpo-baselines/brax:halfcheetah")
    ppo = report_row(HERE, "ppo/brax:halfcheetah")["mean"]
    assert theirs["mean"] < row["mean_ci_low"] <= ppo <= row["mean_ci_high"]
    assert (f"lies above the baselines-configuration row's {theirs['mean']:,.1f} (a split there, "
            "6 of 8 seeds below)") in flat
    assert f"level with PPO's {ppo:,.1f} in the same defaults" in flat


def test_the_notes_table_holds_reading_002s_fourteen_cells_from_the_report():
    """The rendered 1M table in the notes: a row per cell of reading 002's table (PPO and TRPO
    on its seven bodies), swimmer's two not run, every other cell finished in both
    configurations with the report's seeds below and verdict, and the reading's own result as
    its reference note gives it."""
    from tests.experiments.scripts import load

    table = load("readme_tables").table_1m().splitlines()[2:]
    assert len(table) == 14
    notes = (HERE / "NOTES.md").read_text()
    for line in table:
        assert line in notes
        cells = [cell.strip() for cell in line.split("|")[1:-1]]
        body, algo = cells[0], cells[1].lower()
        if body == "swimmer":
            assert cells[3].startswith("not run") and cells[6].startswith("not run")
            continue
        for config, at in (("", 3), ("-baselines", 6)):
            row = report_row(HERE, f"{algo}{config}/brax:{body}")
            assert row["status"] == "finished" and row["seeds"] == 8
            assert cells[at + 1] == f"{row['seeds_below']} of 8" and cells[at + 2] == row["verdict"]
        own = report_row(HERE, f"{algo}/brax:{body}")["reference_note"].rsplit(": ", 1)[1]
        assert float(cells[9].replace(",", "").replace("\u2212", "-")) == float(own)


def test_trpo_halfcheetah_seed_0_turned_back_from_its_back():
    """The checkpoints' postures in the committed file: who was on its back after chunks 2 and 7,
    and seed 0 upright at the end after running on its back at chunk 7."""
    flat = flat_notes(HERE)
    posture = json.loads((HERE / "posture/trpo-halfcheetah-1M.json").read_text())
    at = {c["env_steps"]: {r["seed"]: r for r in c["seeds"]} for c in posture["checkpoints"]}
    assert sorted(at) == [221_184, 442_368, 774_144]

    def flipped(seeds):
        return [s for s, r in sorted(seeds.items()) if r["upside_down_share"] > 0.5]

    assert flipped(at[221_184]) == [2, 5]
    assert (f"after 221,184 env steps a seed ({100 * at[221_184][2]['upside_down_share']:.1f}% "
            f"and {100 * at[221_184][5]['upside_down_share']:.1f}% of their steps)") in flat
    late = flipped(at[774_144])
    shares = [100 * at[774_144][s]["upside_down_share"] for s in late]
    assert late == [0, 1, 2, 4, 5]
    assert f"after 774,144 ({min(shares):.1f}% to {max(shares):.1f}%)" in flat
    assert f"seed 0 at {at[774_144][0]['mean_speed']:.2f} m/s" in flat
    final = {r["seed"]: r for r in posture["seeds"]}
    assert final[0]["upside_down_share"] < 0.01 and final[0]["mean_speed"] < 1.0
    run = PROGRESS / ROWS["trpo/brax:halfcheetah"][0]
    frame = pd.concat(pd.read_parquet(f) for f in sorted((run / "metrics").glob("*.parquet")))
    seed0 = (frame[frame.seed == 0].dropna(subset=["episode_return_mean"])
             .sort_values("update").set_index("env_steps")["episode_return_mean"])
    late = seed0[seed0.index >= 770_048]
    assert len(late) == 4 and late.iloc[-1] == late.max()
    assert late.diff().min() > -0.01 * late.iloc[0]  # held: no step down by 1% or more
    assert (f"({late.iloc[0]:,.1f} for the episodes that ended at 770,048 env steps, "
            + ", ".join(f"{v:,.1f} at {s:,.0f}" for s, v in late.iloc[1:].items()) + ")") in flat

"""The mujoco suite's Spinning Up 3M references (read off the published plots) agree with the
values computed from the plots' SVG paths (experiments/benchmarks/spinningup_3m_readings.json),
within each reading's stated uncertainty; the notes' rates for its cells are their files'."""

import json
import statistics
from pathlib import Path

import pandas as pd
import pytest
import yaml

from jaxrl.studies.bench.suite import load_suite
from tests.experiments.reports import flat_notes

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


MUJOCO = ROOT / "benchmarks" / "mujoco-cpu"
PPO_HOPPER = MUJOCO / "progress-spinningup" / "20261130-045916-ppo-brax-hopper-b8d37d" / "metrics"


def test_the_notes_rates_of_the_cells_are_their_files():
    """The mujoco notes' rates for Spinning Up's cells: the 1% timings (spinningup_rates.json)
    and PPO hopper's own chunks on the 2026-11-30 host (its metrics in the progress folder, the
    first 21 chunks), with the hours each rate gives for a cell and for the twelve."""
    notes = flat_notes(MUJOCO)
    timed = {r["algo"]: r["env_steps_per_second"]
             for r in json.loads((MUJOCO / "spinningup_rates.json").read_text())["runs"]}
    assert (f"PPO {timed['ppo']:,.0f}, VPG {timed['vpg']:,.0f} and TRPO {timed['trpo']:,.0f} "
            "env-steps/s over 8 seeds") in notes
    chunks = [pd.read_parquet(f) for f in sorted(PPO_HOPPER.glob("chunk-*.parquet"))]
    assert len(chunks) == 61
    rates = [float(c["env_steps_per_second"].iloc[0]) for c in chunks]
    rate = statistics.median(rates)
    seconds = [8 * 12 * 64 * 64 / r for r in rates]  # 8 seeds x 12 updates x 64 envs x 64 steps
    cell = 3_000_000 * 8 / rate / 3600
    assert (f"Over all 61 chunks its median was {rate:,.0f} env-steps/s over 8 seeds") in notes
    assert f"{statistics.median(seconds):.0f} s a chunk" in notes
    assert f"the run's chunks sum to {sum(seconds):,.0f} s" in notes
    assert f"takes about {cell:.1f} hours here" in notes
    assert f"about {11 * cell:.0f} hours in all" in notes


FINISHED = {"ppo-3M/brax:hopper": PPO_HOPPER.parent,
            "vpg-3M/brax:hopper": MUJOCO / "progress-spinningup"
            / "20261130-141824-vpg-brax-hopper-ee973e",
            "trpo-3M/brax:hopper": MUJOCO / "progress-spinningup"
            / "20261201-002608-trpo-brax-hopper-2163a7",
            "trpo-3M/brax:walker2d": MUJOCO / "progress-spinningup"
            / "20261201-033604-trpo-brax-walker2d-ff2b9a",
            "vpg-3M/brax:walker2d": MUJOCO / "progress-spinningup"
            / "20261201-073901-vpg-brax-walker2d-b5a6be",
            "trpo-3M/brax:halfcheetah": MUJOCO / "progress-spinningup"
            / "20261201-094635-trpo-brax-halfcheetah-49de48",
            "vpg-3M/brax:halfcheetah": MUJOCO / "progress-spinningup"
            / "20261201-150050-vpg-brax-halfcheetah-470149",
            "trpo-3M/brax:ant": MUJOCO / "progress-spinningup"
            / "20261201-204052-trpo-brax-ant-255898",
            "vpg-3M/brax:ant": MUJOCO / "progress-spinningup"
            / "20261201-222929-vpg-brax-ant-f9bbbb",
            "ppo-3M/brax:walker2d": MUJOCO / "progress-spinningup"
            / "20261202-004519-ppo-brax-walker2d-0e623d",
            "ppo-3M/brax:halfcheetah": MUJOCO / "progress-spinningup"
            / "20261202-043507-ppo-brax-halfcheetah-d2261d",
            "ppo-3M/brax:ant": MUJOCO / "progress-spinningup"
            / "20261202-104709-ppo-brax-ant-ddb2dc"}


def _noise_rows() -> dict[float, dict]:
    """The committed random-action ant file's rows by log std."""
    rows = json.loads((MUJOCO / "ant-noise-lengths.json").read_text())["rows"]
    return {r["log_std"]: r for r in rows}


def _report_row(entry: str) -> dict:
    """The mujoco report's row of ``entry``."""
    rows = json.loads((MUJOCO / "results.json").read_text())["entries"]
    return {r["entry"]: r for r in rows}[entry]


def _finished_paragraph(notes: str, entry: str) -> str:
    """The notes' bullet of a finished cell: the one that names its run, to the next bullet."""
    start = notes.rindex(" - **", 0, notes.index(f"run `{FINISHED[entry].name}`"))
    end = notes.find(" - **", start + 1)
    return notes[start:] if end < 0 else notes[start:end]


@pytest.mark.parametrize("entry", sorted(FINISHED))
def test_a_finished_cell_is_its_report_row(entry):
    notes = _finished_paragraph(flat_notes(MUJOCO), entry)
    row = _report_row(entry)
    assert row["status"] == "finished" and len(row["per_seed"]) == 8
    assert f"run `{FINISHED[entry].name}`" in notes
    per_seed = ", ".join(f"{v:,.1f}" for v in row["per_seed"])
    assert f"per seed {per_seed}" in notes
    assert (f"mean {row['mean']:,.1f} [{row['mean_ci_low']:,.1f}, {row['mean_ci_high']:,.1f}]"
            in notes)
    assert f"IQM {row['iqm']:,.1f}" in notes and f"p {row['rank_p']:.3f}" in notes
    assert f"Spinning Up's {row['reference']:,.1f}" in notes
    below = sum(v < row["reference"] for v in row["per_seed"])
    assert below == row["seeds_below"] and f"{below} of 8 below the reference" in notes
    if entry.startswith("vpg") and row["mean"] > 0:
        assert f"the mean is {row['mean'] / row['reference']:.2f}x the reference" in notes
    elif entry.startswith("vpg"):  # a ratio to a positive reference would be negative
        assert f"The mean is {row['reference'] - row['mean']:.1f} under the reference" in notes


def test_the_ppo_hopper_cells_wall_and_run_seconds():
    notes = flat_notes(MUJOCO)
    row = _report_row("ppo-3M/brax:hopper")
    assert f"its {row['wall_seconds']:,.0f} s of wall" in notes
    run = json.loads((PPO_HOPPER.parent / "run.json").read_text())
    assert f"The report's run s ({run['run_seconds']:,.0f} s" in notes


def test_the_trpo_hopper_rate_and_wall_are_its_files():
    notes = _finished_paragraph(flat_notes(MUJOCO),
                                "trpo-3M/brax:hopper")
    run = FINISHED["trpo-3M/brax:hopper"]
    rates = [float(pd.read_parquet(f)["env_steps_per_second"].median())
             for f in sorted((run / "metrics").glob("chunk-*.parquet"))]
    assert len(rates) == 61
    assert (f"a median of {statistics.median(rates):,.0f} env-steps/s over 8 seeds (from "
            f"{min(rates):,.0f} to {max(rates):,.0f})") in notes
    row = _report_row("trpo-3M/brax:hopper")
    assert f"its {row['wall_seconds']:,.0f} s of wall" in notes
    assert f"about {row['wall_seconds'] / 3600:.1f} hours a hopper cell" in notes


def test_the_vpg_walker2d_low_seeds_fall_early():
    """The notes' words on VPG walker2d's three low seeds: their episode lengths and return a
    step over the updates past 2.5M env steps, from the run's committed metrics."""
    notes = _finished_paragraph(flat_notes(MUJOCO),
                                "vpg-3M/brax:walker2d")
    run = FINISHED["vpg-3M/brax:walker2d"]
    rows = pd.concat([pd.read_parquet(f)
                      for f in sorted((run / "metrics").glob("chunk-*.parquet"))])
    late = rows[rows["env_steps"] > 2_500_000].groupby("seed")[
        ["episode_length_mean", "episode_return_mean"]].mean()
    per_step = late["episode_return_mean"] / late["episode_length_mean"]
    row = _report_row("vpg-3M/brax:walker2d")
    low = sorted(range(8), key=lambda s: row["per_seed"][s])[:3]
    high = sorted(set(range(8)) - set(low))
    *first, last = (f"{late['episode_length_mean'][s]:,.1f}" for s in sorted(low))
    assert f"episodes lasted {', '.join(first)} and {last} steps on average" in notes
    others = late["episode_length_mean"][high]
    assert f"against {others.min():,.1f} to {others.max():,.1f} for the other five" in notes
    assert max(late["episode_length_mean"][low]) < others.min()
    assert (f"they earned {per_step[low].min():.2f} to {per_step[low].max():.2f} a step against "
            f"{per_step[high].min():.2f} to {per_step[high].max():.2f}") in notes
    split = row["split"]
    assert split["succeeding"] == 5 and not split.get("by")
    assert (f"the report names the split ({split['succeeding']} of {split['n']} succeed, their "
            f"mean {split['success_mean']:,.1f}) beside its verdict, which stays \"above\"") in notes
    assert row["verdict"] == "above reference" and min(row["per_seed"]) > row["reference"]


def test_the_vpg_walker2d_low_seeds_final_policies_fall():
    """The notes' episode lengths of VPG walker2d's final policies, from the committed
    posture file (experiments/posture.py on the run's stored policy)."""
    notes = _finished_paragraph(flat_notes(MUJOCO),
                                "vpg-3M/brax:walker2d")
    posture = json.loads((MUJOCO / "posture/vpg-walker2d-3M.json").read_text())
    assert posture["run_id"] == FINISHED["vpg-3M/brax:walker2d"].name
    assert posture["episodes"] == 4 and posture["deterministic"]
    lengths = {r["seed"]: r["episode_lengths"] for r in posture["seeds"]}
    row = _report_row("vpg-3M/brax:walker2d")
    low = sorted(range(8), key=lambda s: row["per_seed"][s])[:3]
    short = [n for s in low for n in lengths[s]]
    long = [n for s in set(range(8)) - set(low) for n in lengths[s]]
    assert max(short) < min(long)
    assert (f"those three seeds' episodes ended after {min(short):,} to {max(short):,} steps, "
            f"the other five's lasted {min(long):,} to {max(long):,} (the time limit)") in notes
    assert all(r["upside_down_share"] == 0 for r in posture["seeds"])
    assert "no seed's torso was ever upside down" in notes


def _span(values, fmt: str) -> str:
    return f"{format(min(values), fmt)} to {format(max(values), fmt)}"


def _final_postures(name: str, entry: str) -> tuple[dict, dict]:
    """The committed posture file ``posture/NAME.json`` of ``entry``'s finished run (4 episodes
    a seed, each policy played by its mode) and its final policies' rows by seed."""
    posture = json.loads((MUJOCO / f"posture/{name}.json").read_text())
    assert posture["run_id"] == FINISHED[entry].name
    assert posture["episodes"] == 4 and posture["deterministic"]
    return posture, {r["seed"]: r for r in posture["seeds"]}


def _modes_against_reference(name: str, entry: str) -> tuple[dict, dict, list[float], int]:
    """``entry``'s final policies played by their mode (``posture/NAME.json``): their rows by
    seed, the report's row, their returns and how many of those clear the reference."""
    _, seeds = _final_postures(name, entry)
    row = _report_row(entry)
    played = [r["return"] for r in seeds.values()]
    return seeds, row, played, sum(v > row["reference"] for v in played)


def test_the_trpo_halfcheetah_seeds_split_by_posture():
    """The notes' posture split of TRPO halfcheetah, from the committed posture file: the seeds
    upside down most of the time are named, with their shares, speeds and returns beside the
    upright seeds', and they are exactly the seeds below the reference."""
    flat = flat_notes(MUJOCO)
    posture, seeds = _final_postures("trpo-halfcheetah-3M", "trpo-3M/brax:halfcheetah")
    flipped = sorted(s for s, r in seeds.items() if r["upside_down_share"] > 0.5)
    upright = sorted(s for s, r in seeds.items() if r["upside_down_share"] == 0)
    assert len(flipped) == len(upright) == 4
    assert f"seeds {', '.join(map(str, flipped[:-1]))} and {flipped[-1]} run on their backs" in flat
    assert f"Seeds {', '.join(map(str, upright[:-1]))} and {upright[-1]} run upright" in flat
    share = [100 * seeds[s]["upside_down_share"] for s in flipped]
    assert f"upside down on {_span(share, '.1f').replace(' to', '% to')}% of their steps" in flat
    assert f"at {_span([seeds[s]['mean_speed'] for s in flipped], '.2f')} m/s" in flat
    assert f"returns of {_span([seeds[s]['return'] for s in flipped], ',.1f')}" in flat
    assert f"at {_span([seeds[s]['mean_speed'] for s in upright], '.2f')} m/s" in flat
    assert f"for {_span([seeds[s]['return'] for s in upright], ',.1f')}" in flat
    row = _report_row("trpo-3M/brax:halfcheetah")
    below = [s for s in range(8) if row["per_seed"][s] < row["reference"]]
    assert below == flipped
    assert "The four seeds below the reference are the four on their backs" in flat
    # the report takes the split from the posture file, by the rule the tool states
    assert posture["split"]["failing"] == flipped and posture["split"]["by"] == "posture"
    assert row["split_evidence"] == {"source": "benchmarks/mujoco-cpu/posture/"
                                     "trpo-halfcheetah-3M.json", **posture["split"]}
    assert row["verdict"] == "split (4 of 8 seeds below reference; by posture)"
    assert f'reads "{row["verdict"]}"' in flat


def test_the_trpo_halfcheetah_seeds_turned_over_early():
    """The notes' account of when TRPO halfcheetah's seeds turned over, from the checkpoints'
    postures in the committed file."""
    flat = flat_notes(MUJOCO)
    posture = json.loads((MUJOCO / "posture/trpo-halfcheetah-3M.json").read_text())
    at = {c["env_steps"]: {r["seed"]: r["upside_down_share"] for r in c["seeds"]}
          for c in posture["checkpoints"]}
    final = {r["seed"]: r["upside_down_share"] for r in posture["seeds"]}
    flipped = [s for s in range(8) if final[s] > 0.5]
    early = 491_520
    later = [share[s] for steps, share in at.items() if steps >= early for s in flipped]
    assert min(later) > 0.85
    assert (f"after {early:,} env steps a seed, seeds 0, 1, 2 and 5 were already upside down on "
            f"{100 * min(later):.1f}% to {100 * max(later):.1f}% of their steps") in flat
    assert flipped == [0, 1, 2, 5]
    on_back = [share[4] for steps, share in at.items() if early <= steps < 2_000_000]
    upright = [share[4] for steps, share in at.items() if steps >= 2_000_000] + [final[4]]
    assert f"({100 * min(on_back):.1f}% to {100 * max(on_back):.1f}% of its steps" in flat
    assert max(upright) == 0 and "ran upright from 2,064,384 on (0.0%)" in flat
    assert sorted(s for s in range(8) if at[early][s] > 0.5) == [0, 1, 2, 4, 5]
    assert "one flipped seed of five turned back" in flat
    assert min(at) == 98_304 and sorted(at)[2:4] == [1_081_344, 1_671_168]
    speeds = {r["seed"]: r["mean_speed"] for r in posture["seeds"] if r["seed"] not in flipped}
    assert min(speeds, key=speeds.get) == 4 and "slowest of the upright four" in flat


def _pct(values) -> str:
    return _span([100 * v for v in values], ".1f").replace(" to", "% to") + "%"


def test_the_vpg_halfcheetah_low_seeds_run_on_their_backs():
    """The notes' posture split of VPG halfcheetah, from the committed posture file: the three
    seeds upside down most of the time are the three low ones, and the report's verdict stays
    the side both readings find."""
    flat = flat_notes(MUJOCO)
    posture, seeds = _final_postures("vpg-halfcheetah-3M", "vpg-3M/brax:halfcheetah")
    flipped = sorted(s for s, r in seeds.items() if r["upside_down_share"] > 0.5)
    upright = sorted(set(seeds) - set(flipped))
    assert flipped == [1, 2, 4] and "seeds 1, 2 and 4 run on their backs" in flat
    assert "Seeds 0, 3, 5, 6 and 7 run upright" in flat
    share = [seeds[s]["upside_down_share"] for s in flipped]
    assert f"upside down on {_pct(share)} of their steps" in flat
    assert f"at {_span([seeds[s]['mean_speed'] for s in flipped], '.2f')} m/s" in flat
    assert f"returns of {_span([seeds[s]['return'] for s in flipped], ',.1f')}" in flat
    up = [seeds[s]["upside_down_share"] for s in upright]
    assert f"(upside down on {_pct(up)} of their steps)" in flat
    assert f"at {_span([seeds[s]['mean_speed'] for s in upright], '.2f')} m/s" in flat
    assert f"for {_span([seeds[s]['return'] for s in upright], ',.1f')}" in flat
    row = _report_row("vpg-3M/brax:halfcheetah")
    assert sorted(sorted(range(8), key=lambda s: row["per_seed"][s])[:3]) == flipped
    assert "The three low seeds are the three on their backs" in flat
    assert posture["split"]["failing"] == flipped and posture["split"]["by"] == "posture"
    assert row["split_evidence"] == {"source": "benchmarks/mujoco-cpu/posture/"
                                     "vpg-halfcheetah-3M.json", **posture["split"]}
    assert row["verdict"] == "above reference" and min(row["per_seed"]) > row["reference"]
    assert f'its verdict stays "{row["verdict"]}"' in flat


def test_the_vpg_halfcheetah_flipped_seeds_mostly_turned_back():
    """The notes' account of when VPG halfcheetah's seeds turned over and back, from the
    checkpoints' postures in the committed file."""
    flat = flat_notes(MUJOCO)
    posture = json.loads((MUJOCO / "posture/vpg-halfcheetah-3M.json").read_text())
    at = {c["env_steps"]: {r["seed"]: r["upside_down_share"] for r in c["seeds"]}
          for c in posture["checkpoints"]}
    assert sorted(at) == [98_304, 884_736, 983_040, 1_130_496, 2_850_816]
    assert f"no seed was upside down on more than {100 * max(at[98_304].values()):.1f}%" in flat
    flipped = sorted(s for s, v in at[884_736].items() if v > 0.5)
    assert flipped == [0, 1, 2, 3, 4, 5, 7] and at[884_736][6] == 0
    assert f"seven of the 8 ran on their backs ({_pct([at[884_736][s] for s in flipped])})" in flat
    assert (f"Seeds 0 and 3 had turned back by 1,130,496 env steps ({100 * at[1_130_496][0]:.1f}% "
            f"and {100 * at[1_130_496][3]:.1f}%)") in flat
    assert (f"seeds 5 and 7 by 2,850,816 ({100 * at[2_850_816][5]:.1f}% and "
            f"{100 * at[2_850_816][7]:.1f}%)") in flat
    assert all(at[steps][5] > 0.5 and at[steps][7] > 0.5 for steps in (884_736, 1_130_496))
    stayed = [s for s in flipped if all(at[steps][s] > 0.5 for steps in at if steps >= 884_736)]
    assert stayed == [1, 2, 4] and "seeds 1, 2 and 4 stayed on their backs" in flat
    assert "four of VPG's seven flipped seeds left the posture" in flat


def _chunk_means(entry: str) -> pd.DataFrame:
    """A finished cell's chunks (`run_chunk_means` of its committed run)."""
    return run_chunk_means(FINISHED[entry])


def run_chunk_means(run: Path) -> pd.DataFrame:
    """A committed run's chunks: the last env step, and the means over seeds of the episode
    length, the episode return and the log std; one row a chunk."""
    rows = pd.concat([pd.read_parquet(f).assign(chunk=i) for i, f in
                      enumerate(sorted((run / "metrics").glob("chunk-*.parquet")))])
    return rows.groupby("chunk").agg(steps=("env_steps", "max"),
                                     length=("episode_length_mean", "mean"),
                                     ret=("episode_return_mean", "mean"),
                                     log_std=("log_std_mean", "mean"))


def test_the_trpo_ant_stays_up_late_and_the_noise_alone_does_not_explain_it():
    """The notes' account of TRPO ant's slow start, from the run's committed chunk metrics, and
    the random-action episode lengths from the committed noise file."""
    notes = _finished_paragraph(flat_notes(MUJOCO),
                                "trpo-3M/brax:ant")
    flat = flat_notes(MUJOCO)
    chunks = _chunk_means("trpo-3M/brax:ant")
    early = chunks[chunks.steps <= 884_736]
    assert len(early) == 18
    assert (f"lasted {early.length.min():.1f} to {early.length.max():.1f} steps on average"
            in flat)
    assert (f"log std fell from {early.log_std.iloc[0]:.2f} to {early.log_std.iloc[-1]:.2f}"
            in flat)
    first = chunks[chunks.length > 100].iloc[0]
    assert f"passed 100 steps first in the chunk ending at {first.steps:,.0f} env steps" in flat
    assert f"reached {chunks.length.iloc[-1]:.1f} in the last chunk" in flat
    before = chunks.iloc[-7]
    assert (f"({before.ret:,.1f} over the chunk ending at {before.steps:,.0f} env steps, "
            f"{chunks.ret.iloc[-1]:,.1f} over the last)") in flat
    noise = json.loads((MUJOCO / "ant-noise-lengths.json").read_text())
    by_std = _noise_rows()
    assert noise["envs"] == 64 and noise["healthy_z_range"] == [0.2, 1.0]
    assert (f"after a median of {by_std[0.0]['median_length']:.1f} and "
            f"{by_std[-0.5]['median_length']:.1f} steps") in flat
    assert (f"jumping above the range ({by_std[0.0]['ended_above']} and "
            f"{by_std[-0.5]['ended_above']} of 64)") in flat
    assert f"and -1.0 after {by_std[-1.0]['median_length']:.1f}" in flat
    row = _report_row("trpo-3M/brax:ant")
    assert row["verdict"] == "below reference" and "**below the reference**" in notes
    assert f"the mean is {row['mean'] / row['reference']:.2f}x the reference" in notes


def test_the_trpo_ant_modes_clear_the_reference():
    """The notes' reading of TRPO ant's final policies played by their mode, from the committed
    posture file: every seed above the reference, the episodes' lengths, the largest upside-down
    share."""
    flat = flat_notes(MUJOCO)
    _, seeds = _final_postures("trpo-ant-3M", "trpo-3M/brax:ant")
    row = _report_row("trpo-3M/brax:ant")
    played = [r["return"] for r in seeds.values()]
    assert min(played) > row["reference"]
    assert f"the final policies score {_span(played, ',.1f')} a seed" in flat
    lengths = [n for r in seeds.values() for n in r["episode_lengths"]]
    short = [n for n in lengths if n < 1000]
    assert len(lengths) == 32 and short == [923]
    assert "31 of the 32 episodes reach the time limit (the other ends after 923 steps)" in flat
    most = max(r["upside_down_share"] for r in seeds.values())
    assert f"upside down on more than {100 * most:.1f}% of its steps" in flat
    assert f"policies that score {row['mean']:,.1f} in training" in flat


def test_the_trpo_settings_the_ant_notes_compare_are_the_presets():
    """The notes' list of how jaxrl's brax TRPO defaults differ from Spinning Up's TRPO settings
    is read from the two committed presets."""
    flat = flat_notes(MUJOCO)
    presets = Path(__file__).resolve().parents[2] / "presets" / "trpo"
    ours, theirs = (yaml.safe_load((presets / f"{name}.yaml").read_text())
                    for name in ("brax", "spinningup-mujoco"))
    assert f"hidden layers {ours['hidden']} against {theirs['hidden']}" in flat
    assert f"GAE lambda {ours['gae_lambda']} against {theirs['gae_lambda']}" in flat
    assert (f"a starting log std of {ours['init_log_std']} against {theirs['init_log_std']}"
            in flat)
    assert ours["normalize_obs"] and ours["normalize_reward"]
    assert not (theirs["normalize_obs"] or theirs["normalize_reward"])
    assert "running observation and reward normalization against none" in flat
    assert (f"{ours['num_envs']} envs of {ours['num_steps']} steps against one env of "
            f"{theirs['num_steps']:,}") in flat and theirs["num_envs"] == 1
    assert (f"{ours['value_epochs']} value passes in {ours['value_minibatches']} minibatches "
            f"against {theirs['value_epochs']} full-batch steps") in flat
    assert theirs["value_minibatches"] == 1


def test_the_trpo_ant_slow_start_is_the_rewards_answer_to_its_spread():
    """The notes' per-step worth of random ant episodes from the committed noise file (the
    reward weights read off the env), and the run's shortening episodes and the chunk where its
    return per step turned positive, from its committed chunk metrics."""
    flat = flat_notes(MUJOCO)
    noise = json.loads((MUJOCO / "ant-noise-lengths.json").read_text())
    assert noise["healthy_reward"] == 1.0 and noise["ctrl_cost_weight"] == 0.5
    rows = sorted(noise["rows"], key=lambda r: -r["log_std"])
    assert [r["log_std"] for r in rows] == [0.0, -0.5, -0.7, -1.0]
    costs = [f"{r['ctrl_cost_per_step']:.2f}" for r in rows]
    assert (f"the control cost is {costs[0]} a step at log std 0.0, {costs[1]} at -0.5, "
            f"{costs[2]} at -0.7 and {costs[3]} at -1.0") in flat
    worth = [f"{r['reward_per_step']:+.2f}" for r in rows]
    assert f"a step is worth {worth[0]}, {worth[1]}, {worth[2]} and {worth[3]}" in flat
    assert rows[0]["reward_per_step"] < rows[1]["reward_per_step"] < 0 < rows[2]["reward_per_step"]
    for r in rows:  # a step's worth is its healthy reward less its control cost (forward ~ 0)
        assert abs(r["reward_per_step"] - (1.0 - r["ctrl_cost_per_step"])) < 0.1
    ratio = rows[0]["reward_per_step"] / rows[1]["reward_per_step"]
    assert f"{ratio:.1f} times what a step loses from Spinning Up's" in flat
    chunks = _chunk_means("trpo-3M/brax:ant")
    shortest = chunks.iloc[: chunks.length.idxmin() + 1]
    assert (f"fell from {chunks.length.iloc[0]:.1f} steps in the first chunk to "
            f"{shortest.length.iloc[-1]:.1f} in the chunk ending at "
            f"{shortest.steps.iloc[-1]:,.0f} env steps") in flat
    per_step = chunks.ret / chunks.length
    assert f"rose from {per_step.iloc[0]:.2f}" in flat
    first = chunks[per_step > 0].iloc[0]
    assert (per_step.loc[: first.name - 1] < 0).all()
    assert (f"turned positive first in the chunk ending at {first.steps:,.0f} env steps, at a "
            f"log std of {first.log_std:.2f}") in flat


def test_the_vpg_ant_is_below_its_reference_and_never_found_staying_up_worth_it():
    """VPG ant's verdict, its distance under the reference, and the notes' account of its run
    from the committed chunk metrics: the shortest episodes, the return per step below 0 in every
    chunk, the log std's small fall; the spread it compares with from the noise file."""
    flat = flat_notes(MUJOCO)
    notes = _finished_paragraph(flat, "vpg-3M/brax:ant")
    row = _report_row("vpg-3M/brax:ant")
    assert row["verdict"] == "below reference" and "**below the reference**" in notes
    edge = row["reference"] - row["reference_uncertainty"]
    assert max(row["per_seed"]) < edge and f"under its lower edge ({edge:.1f}) too" in notes
    chunks = _chunk_means("vpg-3M/brax:ant")
    shortest = chunks.iloc[: chunks.length.idxmin() + 1]
    assert (f"fell from {chunks.length.iloc[0]:.1f} steps in the first chunk to "
            f"{shortest.length.iloc[-1]:.1f} in the chunk ending at "
            f"{shortest.steps.iloc[-1]:,.0f} env steps, and was {chunks.length.iloc[-1]:.1f} "
            "in the last") in flat
    per_step = chunks.ret / chunks.length
    assert (per_step < 0).all()
    assert (f"rose from {per_step.iloc[0]:.2f} to {per_step.iloc[-1]:.2f} and stayed below 0 in "
            "every chunk") in flat
    assert (f"log std fell only from {chunks.log_std.iloc[0]:.2f} to "
            f"{chunks.log_std.iloc[-1]:.2f}") in flat
    assert chunks.log_std.iloc[-1] > -0.5
    noise = _noise_rows()
    assert noise[-0.5]["ctrl_cost_per_step"] > 1.0
    assert f"is already {noise[-0.5]['ctrl_cost_per_step']:.2f} a step against the 1.0" in flat


def test_the_vpg_ant_modes_lunge_and_end_the_episode():
    """The notes' reading of VPG ant's final policies played by their mode, from the committed
    posture file: their returns, how many clear the reference, their speeds, and every episode
    ending early."""
    flat = flat_notes(MUJOCO)
    seeds, row, played, above = _modes_against_reference("vpg-ant-3M", "vpg-3M/brax:ant")
    assert (f"the final policies score {_span(played, ',.1f')} a seed (mean "
            f"{statistics.mean(played):.1f}; {above} of 8 above the reference's "
            f"{row['reference']:.1f})") in flat
    assert f"moving forward at {_span([r['mean_speed'] for r in seeds.values()], '.2f')} m/s" in flat
    lengths = [n for r in seeds.values() for n in r["episode_lengths"]]
    assert len(lengths) == 32 and max(lengths) < 1000
    assert (f"every one of the 32 episodes still ends early, after {min(lengths)} to "
            f"{max(lengths)} steps") in flat


def test_the_ant_spread_suite_changes_only_the_starting_log_std():
    """Each ant_spread entry is its mujoco entry (algorithm, body, budget, reference) with the
    starting log std of Spinning Up's preset for that algorithm, and the suite's note quotes the
    noise file's control costs."""
    spread, mujoco = load_suite("ant_spread"), load_suite("mujoco")
    by_name = {e.name: e for e in mujoco.entries}
    presets = Path(__file__).resolve().parents[2] / "presets"
    for e in spread.entries:
        base = by_name[e.name.replace("-logstd-0.5", "")]
        assert (e.algo, e.env, e.total_steps, e.seeds) == (base.algo, base.env, base.total_steps,
                                                           base.seeds)
        assert e.reference == {**base.reference, "note": e.reference["note"]}
        theirs = yaml.safe_load((presets / e.algo / "spinningup-mujoco.yaml").read_text())
        assert base.config == {} and e.config == {"init_log_std": theirs["init_log_std"]}
    noise = _noise_rows()
    note = " ".join(spread.note.split())
    assert (f"the clipped noise costs {noise[0.0]['ctrl_cost_per_step']:.2f} a step at log std "
            f"0.0 and {noise[-0.5]['ctrl_cost_per_step']:.2f} at -0.5") in note


def test_the_ppo_walker2d_passes_its_reference_early_and_ends_highest_of_the_three():
    """The notes' account of PPO walker2d's run from the committed chunk metrics (where its
    training return first passed the reference, its rise at the end, its last episodes' length,
    its log std) and its margins and the three walker2d means from the report."""
    flat = flat_notes(MUJOCO)
    notes = _finished_paragraph(flat, "ppo-3M/brax:walker2d")
    row = _report_row("ppo-3M/brax:walker2d")
    assert row["verdict"] == "above reference" and "**above the reference**" in notes
    assert (f"The mean is {row['mean'] / row['reference']:.2f}x the reference and the weakest "
            f"seed, {min(row['per_seed']):,.1f}, is {min(row['per_seed']) / row['reference']:.2f}x"
            ) in notes
    chunks = _chunk_means("ppo-3M/brax:walker2d")
    first = chunks[chunks.ret > row["reference"]].iloc[0]
    assert first.steps / 3_000_000 == pytest.approx(0.25, abs=0.02)  # "about a quarter"
    assert f"passed the reference first in the chunk ending at {first.steps:,.0f} env steps" in flat
    late, last = chunks.iloc[48], chunks.iloc[-1]
    assert late.ret < last.ret
    assert (f"({late.ret:,.1f} in the chunk ending at {late.steps:,.0f} env steps, "
            f"{last.ret:,.1f} in the last)") in flat
    assert f"its episodes lasted {last.length:.1f} steps on average" in flat
    assert (f"its log std had fallen from {chunks.log_std.iloc[0]:.2f} to "
            f"{last.log_std:.2f}") in flat
    trpo, vpg = _report_row("trpo-3M/brax:walker2d"), _report_row("vpg-3M/brax:walker2d")
    assert row["mean"] > max(trpo["mean"], vpg["mean"])
    assert f"TRPO's mean is {trpo['mean']:,.1f} and VPG's {vpg['mean']:,.1f}" in flat


def test_the_ppo_walker2d_modes_walk_the_whole_episode():
    """The notes' reading of PPO walker2d's final policies played by their mode, from the
    committed posture file: their returns against each seed's training return, their speeds,
    the episodes short of the time limit, no seed upside down."""
    flat = flat_notes(MUJOCO)
    _, seeds = _final_postures("ppo-walker2d-3M", "ppo-3M/brax:walker2d")
    row = _report_row("ppo-3M/brax:walker2d")
    played = [seeds[i]["return"] for i in range(8)]
    gains = [p - t for p, t in zip(played, row["per_seed"])]
    assert min(gains) > 0
    assert (f"the final policies score {_span(played, ',.1f')} a seed (mean "
            f"{statistics.mean(played):,.1f}), every seed above its training return (by "
            f"{_span(gains, ',.1f')}), moving forward at "
            f"{_span([r['mean_speed'] for r in seeds.values()], '.2f')} m/s") in flat
    lengths = [n for r in seeds.values() for n in r["episode_lengths"]]
    short = sorted(n for n in lengths if n < 1000)
    assert len(lengths) == 32 and len(short) == 2
    assert (f"30 of the 32 episodes reach the time limit (the other two end after {short[0]} "
            f"and {short[1]} steps)") in flat
    assert max(r["upside_down_share"] for r in seeds.values()) == 0.0


def _seed_returns(entry: str, chunk: int) -> tuple[int, list[float]]:
    """A finished cell's chunk ``chunk``: its last env step and each seed's mean training return."""
    rows = pd.read_parquet(FINISHED[entry] / "metrics" / f"chunk-{chunk:05d}.parquet")
    return int(rows["env_steps"].max()), rows.groupby("seed")["episode_return_mean"].mean().tolist()


def test_the_ppo_halfcheetah_split_is_the_returns_and_the_posture_file_agrees_but_for_two():
    """The notes' account of PPO halfcheetah's split: the report's split from the returns (seeds
    2 and 3 succeed), the final modes' postures from the committed file (four on their backs,
    two upright, two between) and the late rise of the two between, from the chunk metrics."""
    entry = "ppo-3M/brax:halfcheetah"
    flat = flat_notes(MUJOCO)
    row = _report_row(entry)
    assert row["verdict"] == "split (6 of 8 seeds below reference)" and "split_evidence" not in row
    succeeding = [s for s in range(8) if row["per_seed"][s] > row["reference"]]
    assert succeeding == [2, 3] and row["split"]["succeeding"] == 2
    others = [row["per_seed"][s] for s in range(8) if s not in succeeding]
    assert (f"2 of 8 succeed, seeds 2 and 3, their mean {row['split']['success_mean']:,.1f}, "
            f"{row['split']['success_mean'] / row['reference']:.2f}x the reference, while the "
            f"other six sit at {_span(others, ',.1f')}") in flat
    posture, seeds = _final_postures("ppo-halfcheetah-3M", entry)
    flipped = sorted(s for s, r in seeds.items() if r["upside_down_share"] > 0.5)
    upright = sorted(s for s, r in seeds.items() if r["upside_down_share"] == 0)
    between = sorted(set(seeds) - set(flipped) - set(upright))
    assert (flipped, upright, between) == ([0, 1, 6, 7], [2, 3], [4, 5])
    assert posture["split"]["failing"] == flipped
    assert "seeds 0, 1, 6 and 7 run on their backs" in flat
    assert (f"upside down on {_pct([seeds[s]['upside_down_share'] for s in flipped])} of their "
            f"steps, at {_span([seeds[s]['mean_speed'] for s in flipped], '.2f')} m/s, for "
            f"returns of {_span([seeds[s]['return'] for s in flipped], ',.1f')}") in flat
    assert (f"Seeds 2 and 3 run upright (never upside down), at "
            f"{_span([seeds[s]['mean_speed'] for s in upright], '.2f')} m/s, for "
            f"{_span([seeds[s]['return'] for s in upright], ',.1f')}") in flat
    four, five = seeds[4], seeds[5]
    assert (f"upside down on {100 * four['upside_down_share']:.1f}% and "
            f"{100 * five['upside_down_share']:.1f}% of their steps, for {four['return']:,.1f} "
            f"and {five['return']:,.1f}") in flat
    (late, before), (last, after) = _seed_returns(entry, 48), _seed_returns(entry, 59)
    assert (f"from {before[4]:,.1f} and {before[5]:,.1f} in the chunk ending at {late:,} env "
            f"steps to {after[4]:,.1f} and {after[5]:,.1f} in the chunk ending at {last:,}") in flat
    assert all(0 < after[s] - before[s] < 100 for s in flipped)
    assert "the four on their backs rose by less than 100" in flat


def test_the_ppo_halfcheetah_seeds_all_ran_on_their_backs_first():
    """The notes' account of when PPO halfcheetah's seeds turned over and back, from the
    checkpoints' postures in the committed file, and the upright speeds of the three algorithms
    on the body."""
    flat = flat_notes(MUJOCO)
    posture = json.loads((MUJOCO / "posture/ppo-halfcheetah-3M.json").read_text())
    at = {c["env_steps"]: {r["seed"]: r for r in c["seeds"]} for c in posture["checkpoints"]}
    assert sorted(at) == [540_672, 737_280, 1_277_952, 1_916_928, 2_359_296]
    first = at[540_672]
    backs = [s for s in range(8) if first[s]["upside_down_share"] > 0.5]
    assert backs == [0, 1, 2, 3, 4, 5, 7]
    assert (f"seven of the 8 ran on their backs "
            f"({_pct([first[s]['upside_down_share'] for s in backs])} of their steps)") in flat
    six = first[6]
    assert six["upside_down_share"] == 0 and abs(six["mean_speed"]) < 0.005
    assert f"for {six['return']:,.1f}); by 737,280 seed 6 was on its back too" in flat
    assert f"({100 * at[737_280][6]['upside_down_share']:.1f}%)" in flat
    assert (f"turning over then ({100 * at[737_280][2]['upside_down_share']:.1f}% and "
            f"{100 * at[737_280][3]['upside_down_share']:.1f}%)") in flat
    assert all(at[steps][s]["upside_down_share"] == 0 for steps in at if steps >= 1_277_952
               for s in (2, 3))
    assert all(at[steps][s]["upside_down_share"] > 0.5 for steps in at for s in (4, 5))
    assert (f"({100 * at[2_359_296][4]['upside_down_share']:.1f}% and "
            f"{100 * at[2_359_296][5]['upside_down_share']:.1f}% there)") in flat
    fastest = {}
    for name in ("ppo", "vpg", "trpo"):
        seeds = json.loads((MUJOCO / f"posture/{name}-halfcheetah-3M.json").read_text())["seeds"]
        fastest[name] = max(r["mean_speed"] for r in seeds if r["upside_down_share"] <= 0.5)
    assert fastest["ppo"] > max(fastest["vpg"], fastest["trpo"])
    assert (f"reach {fastest['ppo']:.2f} m/s, against VPG's {fastest['vpg']:.2f} and TRPO's "
            f"{fastest['trpo']:.2f}") in flat


def test_the_notes_table_holds_the_twelve_cells_from_the_report():
    """The rendered table of Spinning Up's cells in the notes: one row a cell (3 algorithms on
    4 bodies), each finished row's mean and verdict the report's, and no ratio where the mean
    is negative."""
    from tests.experiments.scripts import load

    table = load("readme_tables").spinningup_cells().splitlines()[2:]
    assert len(table) == 12
    notes = (MUJOCO / "NOTES.md").read_text()
    for line in table:
        body, algo = (cell.strip() for cell in line.split("|")[1:3])
        assert line in notes
        row = _report_row(f"{algo.lower()}-3M/brax:{body}")
        cells = [cell.strip() for cell in line.split("|")[1:-1]]
        if row["status"] != "finished":
            assert cells[2] == row["status"]
            continue
        assert cells[6] == row["verdict"] and cells[3] == f"{row['seeds_below']} of 8"
        assert (cells[5] == "\u2013") == (row["mean"] < 0)


def _per_step_turn(entry: str) -> pd.Series:
    """The first chunk of ``entry`` whose mean return per step (its mean return over its mean
    episode length) is positive."""
    chunks = _chunk_means(entry)
    return chunks[chunks.ret / chunks.length > 0].iloc[0]


def test_the_ppo_ant_slow_start_is_trpo_ants():
    """The notes' account of PPO ant's start and curve from the committed chunk metrics, beside
    TRPO ant's, and its margins from the report."""
    flat = flat_notes(MUJOCO)
    entry = "ppo-3M/brax:ant"
    row = _report_row(entry)
    assert row["verdict"] == "below reference"
    assert (f"The mean is {row['mean'] / row['reference']:.2f}x the reference and the best "
            f"seed, {max(row['per_seed']):,.1f}, is {max(row['per_seed']) / row['reference']:.2f}x"
            ) in flat
    chunks = _chunk_means(entry)
    shortest = chunks.iloc[:9].length.idxmin()
    assert (f"from a mean of {chunks.length.iloc[0]:.1f} steps in the first chunk to "
            f"{chunks.length[shortest]:.1f} in the chunk ending at "
            f"{chunks.steps[shortest]:,.0f} env steps") in flat
    assert f"rose from {chunks.ret.iloc[0] / chunks.length.iloc[0]:.2f}; it turned" in flat
    ours, trpo = _per_step_turn(entry), _per_step_turn("trpo-3M/brax:ant")
    assert (f"first in the chunk ending at {ours.steps:,.0f} env steps, at a log std of "
            f"{ours.log_std:.2f}, where TRPO ant's turned at {trpo.log_std:.2f}") in flat
    trpo_chunks = _chunk_means("trpo-3M/brax:ant")
    passed, trpo_passed = (c[c.length > 100].iloc[0].steps for c in (chunks, trpo_chunks))
    assert (f"passed 100 steps first in the chunk ending at {passed:,.0f} env steps (TRPO ant's "
            f"at {trpo_passed:,.0f})") in flat
    last = chunks.iloc[-1]
    assert f"was {last.length:.1f} in the last, at a log std of {last.log_std:.2f}" in flat
    assert (f"({chunks.ret.iloc[48]:,.1f} over the chunk ending at {chunks.steps.iloc[48]:,.0f} "
            f"env steps, {last.ret:,.1f} over the last)") in flat
    assert f"(TRPO's mean is {_report_row('trpo-3M/brax:ant')['mean']:,.1f})" in flat


def test_the_ppo_ant_modes_walk_near_the_reference():
    """The notes' reading of PPO ant's final policies played by their mode, from the committed
    posture file."""
    flat = flat_notes(MUJOCO)
    seeds, row, played, above = _modes_against_reference("ppo-ant-3M", "ppo-3M/brax:ant")
    assert (f"the final policies score {_span(played, ',.1f')} a seed (mean "
            f"{statistics.mean(played):,.1f}; {above} of 8 above the reference's "
            f"{row['reference']:,.0f}), moving forward at "
            f"{_span([r['mean_speed'] for r in seeds.values()], '.2f')} m/s") in flat
    lengths = [n for r in seeds.values() for n in r["episode_lengths"]]
    short = [n for n in lengths if n < 1000]
    assert len(lengths) == 32 and len(short) == 1
    assert f"(the other ends after {short[0]} steps)" in flat
    worst = max(r["upside_down_share"] for r in seeds.values())
    assert f"upside down on more than {100 * worst:.1f}% of its steps" in flat


def test_the_twelve_read_together_are_the_reports_verdicts():
    """The notes' summary of the twelve cells by body is the report's verdicts."""
    flat = flat_notes(MUJOCO)
    kinds = {(algo, body): _report_row(f"{algo}-3M/brax:{body}")["verdict"]
             for algo in ("vpg", "trpo", "ppo") for body in BODIES}
    easy = [k for k in kinds if k[1] in ("hopper", "walker2d")]
    assert sum(kinds[k] == "above reference" for k in easy) == 5
    assert kinds["ppo", "hopper"] == "reference inside CI"
    assert kinds["vpg", "halfcheetah"] == "above reference"
    assert all(kinds[a, "halfcheetah"].startswith("split") for a in ("trpo", "ppo"))
    assert all(kinds[a, "ant"] == "below reference" for a in ("vpg", "trpo", "ppo"))
    assert "(5 of the 6 cells) or the reference is inside their interval (PPO hopper)" in flat

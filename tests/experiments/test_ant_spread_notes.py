"""benchmarks/ant-spread-cpu/NOTES.md: every number in it is its committed file's (the report,
the runs' chunk metrics in the progress folders, the posture files), beside the mujoco suite's
ant cells it changes one setting of."""

import json
import statistics
from pathlib import Path

import pandas as pd
from scipy.stats import mannwhitneyu

from tests.experiments.reports import flat_notes, report_row
from tests.experiments.test_spinningup_readings import _span, run_chunk_means

ROOT = Path(__file__).resolve().parents[2]
SPREAD = ROOT / "benchmarks/ant-spread-cpu"
MUJOCO = ROOT / "benchmarks/mujoco-cpu"
TRPO = SPREAD / "progress/20261202-115653-trpo-brax-ant-ff7522"
TRPO_BASE = MUJOCO / "progress-spinningup/20261201-204052-trpo-brax-ant-255898"


def _check_report_paragraph(flat: str, entry: str, run: Path, verdict: str, words: str,
                            cell_words: str) -> tuple[dict, dict]:
    """The notes' paragraph on ``entry`` (run ``run``) is its report row, beside the log std 0.0
    cell of the mujoco suite (below its reference); returns both rows."""
    row = report_row(SPREAD, f"{entry.split('/')[0]}-logstd-0.5/brax:ant")
    base = report_row(MUJOCO, entry)
    assert row["status"] == "finished" and row["run_id"] == run.name and len(row["per_seed"]) == 8
    assert row["config"] == {"init_log_std": -0.5} and base["verdict"] == "below reference"
    assert f"run `{run.name}`" in flat
    assert (f"mean {row['mean']:,.1f} [{row['mean_ci_low']:,.1f}, {row['mean_ci_high']:,.1f}] "
            f"over 8 seeds against Spinning Up's {row['reference']:,.1f} ± "
            f"{row['reference_uncertainty']:.0f}") in flat
    assert row["verdict"] == verdict and f"**{words}**" in flat
    assert f"IQM {row['iqm']:,.1f}; per seed {', '.join(f'{v:,.1f}' for v in row['per_seed'])}" \
        in flat
    assert f"{row['seeds_below']} of 8 below the reference, signed-rank p {row['rank_p']:.3f}" \
        in flat
    assert f"at {row['total_steps']:,} env steps a seed ({row['total_steps'] / 3e6:.4f}x" in flat
    assert f"{cell_words} {base['mean']:,.1f}, below the reference" in flat
    test = mannwhitneyu(row["per_seed"], base["per_seed"], alternative="two-sided")
    assert (f"in {test.statistic:.0f} of the 64 pairs of a seed here and a seed there this run's "
            f"is the higher (Mann-Whitney U {test.statistic:.0f}, two-sided p "
            f"{test.pvalue:.4f})") in flat
    assert (f"run s ({row['run_seconds']:,.0f} s) is its training programs' time; its "
            f"{row['wall_seconds']:,.0f} s of wall") in flat
    assert f"its rate ({row['env_steps_per_second']:,.0f} env-steps/s of run s" in flat
    return row, base


def test_the_trpo_entry_is_its_report_row_and_above_the_log_std_0_cell():
    _check_report_paragraph(flat_notes(SPREAD), "trpo-3M/brax:ant", TRPO, "reference inside CI",
                            "the reference inside the interval", "the mujoco cell scored")


def _check_no_slow_start(run: Path, base_run: Path, cell: str):
    """The notes' chunk readings of ``run`` beside the log std 0.0 cell's (``base_run``, the
    mujoco suite's ``cell``), from both runs' committed metrics: its episodes shortest in the
    first chunk, when its return per step turned positive and its episodes passed 100 steps,
    when it passed the other cell's final return, its log std and its last episodes' length.
    Returns both runs' chunk readings."""
    flat = flat_notes(SPREAD)
    spread, base = run_chunk_means(run), run_chunk_means(base_run)
    assert len(spread) == len(base) == 61
    assert spread.length.idxmin() == 0 and base.length.iloc[0] > base.length.min()
    assert (f"{spread.length.iloc[0]:.1f} steps on average in the first chunk, the shortest of "
            f"the run, where the log std 0.0 cell's fell from {base.length.iloc[0]:.1f} to "
            f"{base.length.min():.1f}") in flat

    def first(chunks, mask) -> str:
        return f"{chunks[mask].steps.iloc[0]:,.0f}"

    assert (f"positive first in the chunk ending at {first(spread, spread.ret > 0)} env steps "
            f"(the other cell's at {first(base, base.ret > 0)})") in flat
    assert (f"passed 100 steps on average in the chunk ending at "
            f"{first(spread, spread.length > 100)} (the other's at "
            f"{first(base, base.length > 100)})") in flat
    final = report_row(MUJOCO, cell)["mean"]
    assert (f"passed the other cell's final {final:,.1f} in the chunk ending at "
            f"{first(spread, spread.ret > final)} env steps") in flat
    assert (f"log std fell from {spread.log_std.iloc[0]:.2f} to {spread.log_std.iloc[-1]:.2f} "
            f"(the other's from {base.log_std.iloc[0]:.2f} to {base.log_std.iloc[-1]:.2f})"
            ) in flat
    assert (f"episodes lasted {spread.length.iloc[-1]:.1f} steps on average (the other's "
            f"{base.length.iloc[-1]:.1f})") in flat
    return spread, base


def test_the_trpo_entry_had_no_slow_start():
    _check_no_slow_start(TRPO, TRPO_BASE, "trpo-3M/brax:ant")


def _posture_seeds(name: str, run: Path) -> list[dict]:
    """The committed posture file ``posture/NAME.json`` of ``run`` (4 episodes a seed, each
    final policy played by its mode): its rows by seed."""
    posture = json.loads((SPREAD / f"posture/{name}.json").read_text())
    assert posture["run_id"] == run.name and posture["episodes"] == 4
    assert posture["deterministic"]
    return posture["seeds"]


def _check_modes_walk(name: str, run: Path, entry: str, base_name: str) -> list[float]:
    """``run``'s final policies played by their mode (the committed posture file
    ``posture/NAME.json``) as the notes quote them: their returns against ``entry``'s reference,
    their speed, the episodes short of the time limit, none upside down; beside the log std 0.0
    cell's modes (the mujoco suite's ``posture/BASE_NAME.json``). Returns the played returns."""
    flat = flat_notes(SPREAD)
    seeds = _posture_seeds(name, run)
    played = [s["return"] for s in seeds]
    reference = report_row(SPREAD, entry)["reference"]
    above = sum(v > reference for v in played)
    assert (f"the final policies score {_span(played, ',.1f')} a seed (mean "
            f"{statistics.mean(played):,.1f}; {above} of 8 above the reference), moving forward "
            f"at {_span([s['mean_speed'] for s in seeds], '.2f')} m/s") in flat
    lengths = [n for s in seeds for n in s["episode_lengths"]]
    short = [str(n) for n in sorted(n for n in lengths if n < 1000)]
    assert len(lengths) == 32
    assert (f"{32 - len(short)} of the 32 episodes reach the time limit (the others end after "
            f"{', '.join(short[:-1])} and {short[-1]} steps)") in flat
    assert max(s["upside_down_share"] for s in seeds) < 0.002
    base = [s["return"] for s in json.loads(
        (MUJOCO / f"posture/{base_name}.json").read_text())["seeds"]]
    assert (f"The log std 0.0 cell's modes scored {_span(base, ',.1f')} (mean "
            f"{statistics.mean(base):,.1f})") in flat
    return played


def test_the_trpo_entry_modes_walk():
    _check_modes_walk("trpo-ant-logstd-0.5-3M", TRPO, "trpo-3M-logstd-0.5/brax:ant",
                      "trpo-ant-3M")


VPG = SPREAD / "progress/20261202-135445-vpg-brax-ant-0b057c"
VPG_BASE = MUJOCO / "progress-spinningup/20261201-222929-vpg-brax-ant-f9bbbb"


def _chunk_rates(run: Path) -> list[float]:
    """Each chunk's median over seeds of the env-steps/s its metrics record."""
    return [float(pd.read_parquet(f)["env_steps_per_second"].median())
            for f in sorted((run / "metrics").glob("chunk-*.parquet"))]


def test_the_vpg_entry_is_its_report_row_and_above_the_reference():
    flat = flat_notes(SPREAD)
    row, _ = _check_report_paragraph(flat, "vpg-3M/brax:ant", VPG, "above reference",
                                     "above the reference",
                                     "From log std 0.0 the mujoco cell scored")
    upper = row["reference"] + row["reference_uncertainty"]
    assert min(row["per_seed"]) > upper
    assert f"Every seed is above the reference's upper edge ({upper:.1f})" in flat
    rates = _chunk_rates(VPG)
    assert len(rates) == 61
    assert (f"Its first 38 chunks, partly beside other work on the 2 cores, ran at a median of "
            f"{statistics.median(rates[:38]):,.0f} env-steps/s over 8 seeds, its last 23, alone "
            f"on the new machine, at {statistics.median(rates[38:]):,.0f} "
            f"({min(rates[38:]):,.0f} to {max(rates[38:]):,.0f})") in flat


def test_the_vpg_entry_learned_to_stay_up():
    """The chunk readings beside the log std 0.0 cell's, from both runs' committed metrics."""
    flat = flat_notes(SPREAD)
    spread, base = run_chunk_means(VPG), run_chunk_means(VPG_BASE)
    assert len(spread) == len(base) == 61
    shortest = spread.length.idxmin()
    assert (spread.ret > 0).idxmax() == shortest and (base.ret <= 0).all()
    assert (f"from {spread.length.iloc[0]:.1f} steps on average in the first chunk to "
            f"{spread.length.min():.1f} in the chunk ending at "
            f"{spread.steps.iloc[shortest]:,.0f} env steps, the chunk in which its return per "
            f"step was first positive (the log std 0.0 cell's never was)") in flat
    assert (f"passing 100 steps on average in the chunk ending at "
            f"{spread[spread.length > 100].steps.iloc[0]:,.0f} and lasting "
            f"{spread.length.iloc[-1]:.1f} in the last (the other cell's "
            f"{base.length.iloc[-1]:.1f})") in flat
    assert (f"log std fell from {spread.log_std.iloc[0]:.2f} to {spread.log_std.iloc[-1]:.2f} "
            f"(the other's from {base.log_std.iloc[0]:.2f} to {base.log_std.iloc[-1]:.2f})"
            ) in flat
    assert (f"{spread.ret.iloc[40]:.1f} over the chunk ending at {spread.steps.iloc[40]:,.0f} "
            f"env steps, {spread.ret.iloc[-1]:.1f} over the last") in flat
    assert spread.ret.iloc[-1] > spread.ret.iloc[40]


def test_the_vpg_entry_modes_stand_still():
    """Its final policies played by their mode, from the committed posture file, beside the log
    std 0.0 cell's."""
    flat = flat_notes(SPREAD)
    seeds = _posture_seeds("vpg-ant-logstd-0.5-3M", VPG)
    played = [s["return"] for s in seeds]
    assert all(n == 1000 for s in seeds for n in s["episode_lengths"])
    assert (f"every one of the 32 episodes reaches the time limit, at {_span(played, ',.1f')} a "
            f"seed (mean {statistics.mean(played):,.1f}), moving forward at "
            f"{_span([s['mean_speed'] for s in seeds], '.2f')} m/s") in flat
    base = json.loads((MUJOCO / "posture/vpg-ant-3M.json").read_text())["seeds"]
    longest = max(n for s in base for n in s["episode_lengths"])
    assert f"The log std 0.0 cell's modes lunged and ended every episode within {longest} steps" \
        in flat


PPO = SPREAD / "progress/20261206-163456-ppo-brax-ant-0ab108"
PPO_BASE = MUJOCO / "progress-spinningup/20261202-104709-ppo-brax-ant-ddb2dc"


def test_the_ppo_entry_is_its_report_row_and_above_the_log_std_0_cell_but_below():
    flat = flat_notes(SPREAD)
    row, base = _check_report_paragraph(flat, "ppo-3M/brax:ant", PPO, "below reference",
                                        "below the reference",
                                        "From log std 0.0 the mujoco cell scored")
    assert f"The mean is {row['mean'] / row['reference']:.2f}x the reference" in flat
    assert round(row["mean"] / base["mean"] - 1, 1) == 0.3  # "lifts PPO ant by about a third"
    rates = _chunk_rates(PPO)
    assert len(rates) == 61
    assert (f"Its first 8 chunks shared the 2 cores with the last Breakout probe run of "
            f"[../minatar-paper-cpu/NOTES.md](../minatar-paper-cpu/NOTES.md) and ran at a median "
            f"of {statistics.median(rates[:8]):,.0f} env-steps/s over 8 seeds; its other 53, "
            f"alone but for this session's light work, at {statistics.median(rates[8:]):,.0f} "
            f"(the report's {row['env_steps_per_second']:,.0f} spans both)") in flat
    assert f"include {row['compile_seconds']:.1f} s of compile" in flat


def test_the_ppo_entry_had_no_slow_start_and_was_still_rising():
    spread, _ = _check_no_slow_start(PPO, PPO_BASE, "ppo-3M/brax:ant")
    assert spread.ret.iloc[-1] > spread.ret.iloc[48]
    assert (f"{spread.ret.iloc[48]:,.1f} over the chunk ending at {spread.steps.iloc[48]:,.0f} "
            f"env steps, {spread.ret.iloc[-1]:,.1f} over the last") in flat_notes(SPREAD)


def test_the_ppo_entry_modes_walk_and_clear_the_reference():
    entry = "ppo-3M-logstd-0.5/brax:ant"
    played = _check_modes_walk("ppo-ant-logstd-0.5-3M", PPO, entry, "ppo-ant-3M")
    assert statistics.mean(played) > report_row(SPREAD, entry)["reference"]
    seeds = _posture_seeds("ppo-ant-logstd-0.5-3M", PPO)
    assert max(s["upside_down_share"] for s in seeds) < 0.001
    assert "upside down on more than 0.1% of its steps" in flat_notes(SPREAD)

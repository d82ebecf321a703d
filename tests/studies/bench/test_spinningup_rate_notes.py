"""benchmarks/mujoco-cpu/NOTES.md's VPG hopper rates: the median, over the committed run's first 32
chunks (beside other work) and over its last 20 (on a quiet machine), of each chunk's own
env-steps per second (the median of its rows)."""

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from tests.experiments.reports import flat_notes

ROOT = Path(__file__).resolve().parents[3]
RUN = ROOT / "benchmarks/mujoco-cpu/progress-spinningup/20261130-141824-vpg-brax-hopper-ee973e"


def _chunk_rates(run: Path, count: int) -> list[float]:
    """Each of a run's first `count` chunks' own env-steps per second (the median of its rows)."""
    return [float(pd.read_parquet(run / "metrics" / f"chunk-{i:05d}.parquet")[
        "env_steps_per_second"].median()) for i in range(count)]


def _median_sentence(rates: list[float]) -> str:
    """The notes' words for a finished cell's 61 chunk rates: their median, range and seconds."""
    rate = float(np.median(rates))
    return (f"Its 61 chunks ran at a median of {rate:,.0f} env-steps/s over 8 seeds (from "
            f"{min(rates):,.0f} to {max(rates):,.0f}; {8 * 12 * 64 * 64 / rate:.0f} s a chunk)")


def _notes() -> str:
    """The mujoco notes with their line breaks and indents folded into single spaces."""
    return flat_notes(ROOT / "benchmarks/mujoco-cpu")


def _hours_a_cell(rate: float) -> float:
    """Hours of training for a 3M cell of 8 seeds at ``rate`` env-steps/s over the 8 seeds."""
    return 3_000_000 * 8 / rate / 3600


def _cell_hours(run: Path) -> float:
    """Hours of training for a 3M cell of 8 seeds at ``run``'s median rate over its 61 chunks."""
    return _hours_a_cell(float(np.median(_chunk_rates(run, 61))))


def _assert_median_beside(flat: str, run: Path, other: Path,
                          other_words: str) -> tuple[list[float], float]:
    """Asserts the notes' median sentence for ``run``'s 61 chunks, with its ratio to ``other``'s
    median (``other_words``: how the notes name it); returns the chunk rates and the hours a
    cell takes at their median."""
    rates = _chunk_rates(run, 61)
    rate = float(np.median(rates))
    beside = float(np.median(_chunk_rates(other, 61)))
    assert f"{_median_sentence(rates)}, {rate / beside:.2f}x {other_words}".format(
        beside=f"{beside:,.0f}") in flat
    return rates, _hours_a_cell(rate)


def _report_row(entry: str) -> dict:
    rows = json.loads((ROOT / "benchmarks/mujoco-cpu/results.json").read_text())["entries"]
    return {r["entry"]: r for r in rows}[entry]


def _assert_run_and_wall(flat: str, entry: str) -> None:
    """Asserts the notes' sentence giving ``entry``'s run s and wall as the report's, for a cell
    whose wall holds more than its training (checkpoints, evaluations, a session's gap)."""
    row = _report_row(entry)
    assert (f"The report's run s ({row['run_seconds']:,.0f} s) is its training programs' time; "
            f"its {row['wall_seconds']:,.0f} s of wall") in flat


def test_the_vpg_hopper_rate_is_its_first_32_chunks_median():
    notes = (ROOT / "benchmarks/mujoco-cpu/NOTES.md").read_text()
    (quoted,) = re.findall(r"<!-- vpg-rate -->([\d,]+)<!-- /vpg-rate -->", notes)
    rates = _chunk_rates(RUN, 32)
    assert f"{np.median(rates):,.0f}" == quoted
    assert (f"from {min(rates):,.0f} to {max(rates):,.0f}:"
            in " ".join(notes.split())), (min(rates), max(rates))


def test_the_vpg_hopper_quiet_rate_is_its_last_20_chunks():
    """Chunks 41-60 ran on 2026-12-01 with nothing else running; the notes' hours a cell and for
    the ten cells left come from their median rate."""
    notes = (ROOT / "benchmarks/mujoco-cpu/NOTES.md").read_text()
    flat = " ".join(notes.split())
    rates = _chunk_rates(RUN, 61)
    quiet = rates[41:]
    rate = float(np.median(quiet))
    (quoted,) = re.findall(r"<!-- vpg-quiet-rate -->([\d,]+)<!-- /vpg-quiet-rate -->", notes)
    assert quoted == f"{rate:,.0f}"
    assert f"from {min(quiet):,.0f} to {max(quiet):,.0f}; {8 * 12 * 64 * 64 / rate:.0f} s a chunk" in flat
    assert f"the fastest of which ran at {max(rates[32:41]):,.0f}" in flat
    assert f"Over all 61 chunks its median was {float(np.median(rates)):,.0f} env-steps/s" in flat
    cell = 3_000_000 * 8 / rate / 3600
    assert f"a hopper cell takes about {cell:.1f} hours" in flat
    assert f"the ten cells left about {10 * cell:.0f} hours" in flat
    meta = json.loads((RUN / "run.json").read_text())
    assert (f"the report's run s ({meta['run_seconds']:,.0f} s) and its "
            f"{meta['env_steps_per_second']:,.0f} env-steps/s include the pauses") in flat



TRPO_WALKER = ROOT / "benchmarks/mujoco-cpu/progress-spinningup/20261201-033604-trpo-brax-walker2d-ff2b9a"
TRPO_HOPPER = ROOT / "benchmarks/mujoco-cpu/progress-spinningup/20261201-002608-trpo-brax-hopper-2163a7"


def test_the_trpo_walker2d_rate_and_the_estimate_for_the_cells_left():
    """The finished walker2d cell's rate in the notes is the median of its 61 chunks' own rates,
    beside TRPO hopper's over all 61, with the hours it gives; its run s and wall are the
    report's."""
    flat = _notes()
    assert not (TRPO_WALKER / "metrics" / "chunk-00061.parquet").exists()
    rates, cell = _assert_median_beside(flat, TRPO_WALKER, TRPO_HOPPER,
                                           "TRPO hopper's {beside}")
    assert f"a walker2d cell takes about {cell:.1f} hours of training here" in flat
    assert f"the eight cells after it about {8 * cell:.0f} hours" in flat
    first, last = float(np.median(rates[:51])), float(np.median(rates[51:]))
    assert (f"its first 51 chunks ran at a median of {first:,.0f} and its last 10 (51-60, after "
            f"the resume, on the same machine and as quiet) at {last:,.0f} (from "
            f"{min(rates[51:]):,.0f} to {max(rates[51:]):,.0f}), {last / first:.2f}x") in flat
    _assert_run_and_wall(flat, "trpo-3M/brax:walker2d")


VPG_WALKER = ROOT / "benchmarks/mujoco-cpu/progress-spinningup/20261201-073901-vpg-brax-walker2d-b5a6be"


def test_the_vpg_walker2d_rate_and_the_hours_for_the_cells_left():
    """VPG walker2d's rate in the notes is the median of its 61 chunks' own rates, with the
    hours it gives a cell and the seven cells after it; its run s and wall are the report's."""
    flat = _notes()
    _, cell = _assert_median_beside(flat, VPG_WALKER, TRPO_WALKER, "TRPO walker2d's")
    assert f"a cell takes about {cell:.1f} hours of training at VPG walker2d's rate" in flat
    assert f"the seven cells left about {7 * cell:.0f} hours" in flat
    row = _report_row("vpg-3M/brax:walker2d")
    assert (f"The report's run s ({row['run_seconds']:,.0f} s) and wall "
            f"({row['wall_seconds']:,.0f} s)") in flat


TRPO_CHEETAH = (ROOT / "benchmarks/mujoco-cpu/progress-spinningup"
                / "20261201-094635-trpo-brax-halfcheetah-49de48")



def _assert_a_cell_and_the_cells_left(flat: str, run: Path, other: Path, other_words: str,
                                      cell_words: str, left: tuple[int, str],
                                      entry: str) -> None:
    """Asserts a finished cell's rate paragraph: its median beside ``other``'s, the hours a
    cell takes at it (``cell_words``: how the notes name the cell), the hours for the ``left``
    cells (their count and its word) from VPG walker2d's rate to this one's, and the report's
    run s and wall for ``entry``."""
    _, cell = _assert_median_beside(flat, run, other, other_words)
    fastest = _cell_hours(VPG_WALKER)
    count, word = left
    assert f"a {cell_words} cell takes about {cell:.1f} hours of training here" in flat
    assert (f"the {word} cells left between about {count * fastest:.0f} hours (at VPG "
            f"walker2d's rate) and {count * cell:.0f} hours (at this one's)") in flat
    _assert_run_and_wall(flat, entry)


def test_the_trpo_halfcheetah_rate_and_the_hours_for_the_cells_left():
    """TRPO halfcheetah's rate in the notes is the median of its 61 chunks' own rates, beside
    TRPO walker2d's; the hours for the six cells left run from VPG walker2d's rate to this one's;
    its run s and wall are the report's."""
    _assert_a_cell_and_the_cells_left(_notes(), TRPO_CHEETAH, TRPO_WALKER,
                                      "TRPO walker2d's {beside}", "halfcheetah", (6, "six"),
                                      "trpo-3M/brax:halfcheetah")


VPG_CHEETAH = (ROOT / "benchmarks/mujoco-cpu/progress-spinningup"
               / "20261201-150050-vpg-brax-halfcheetah-470149")


def test_the_vpg_halfcheetah_rate_and_the_hours_for_the_cells_left():
    """VPG halfcheetah's rate in the notes is the median of its 61 chunks' own rates, beside
    TRPO halfcheetah's; the hours for the five cells left run from VPG walker2d's rate to this
    one's; its run s and wall are the report's."""
    _assert_a_cell_and_the_cells_left(_notes(), VPG_CHEETAH, TRPO_CHEETAH,
                                      "TRPO halfcheetah's {beside}", "VPG halfcheetah",
                                      (5, "five"), "vpg-3M/brax:halfcheetah")


TRPO_ANT = ROOT / "benchmarks/mujoco-cpu/progress-spinningup/20261201-204052-trpo-brax-ant-255898"


def test_the_trpo_ant_rate_and_the_hours_for_the_four_cells_left():
    """TRPO ant's rate in the notes is the median of its 61 chunks' own rates, beside TRPO
    halfcheetah's; the four cells left are estimated at the rates of their nearest finished
    cells (ant at this one's, PPO walker2d at VPG walker2d's, PPO halfcheetah at VPG
    halfcheetah's); its run s and wall are the report's."""
    flat = _notes()
    _, cell = _assert_median_beside(flat, TRPO_ANT, TRPO_CHEETAH, "TRPO halfcheetah's {beside}")
    walker, cheetah = _cell_hours(VPG_WALKER), _cell_hours(VPG_CHEETAH)
    assert f"an ant cell takes about {cell:.1f} hours of training here" in flat
    assert f"the four cells left take about {2 * cell + walker + cheetah:.1f} hours" in flat
    row = _report_row("trpo-3M/brax:ant")
    assert (f"The report's run s ({row['run_seconds']:,.0f} s) and wall "
            f"({row['wall_seconds']:,.0f} s) are the cell's") in flat


VPG_ANT = ROOT / "benchmarks/mujoco-cpu/progress-spinningup/20261201-222929-vpg-brax-ant-f9bbbb"


def test_the_vpg_ant_rate_and_the_hours_for_the_three_cells_left():
    """VPG ant's rate in the notes is the median of its 61 chunks' own rates, beside TRPO ant's;
    the three cells left are estimated at the rates of their nearest finished cells (PPO walker2d
    at VPG walker2d's, PPO halfcheetah at VPG halfcheetah's, PPO ant at this one's); its run s
    and wall are the report's."""
    flat = _notes()
    _, cell = _assert_median_beside(flat, VPG_ANT, TRPO_ANT, "TRPO ant's {beside}")
    walker, cheetah = _cell_hours(VPG_WALKER), _cell_hours(VPG_CHEETAH)
    assert f"a VPG ant cell takes about {cell:.1f} hours of training here" in flat
    assert f"the three cells left take about {cell + walker + cheetah:.1f} hours" in flat
    # the ant_spread suite: TRPO and VPG ant again
    assert f"8 seeds at 3M (about {cell + _cell_hours(TRPO_ANT):.0f} hours here)" in flat
    _assert_run_and_wall(flat, "vpg-3M/brax:ant")


PPO_WALKER = (ROOT / "benchmarks/mujoco-cpu/progress-spinningup"
              / "20261202-004519-ppo-brax-walker2d-0e623d")


def test_the_ppo_walker2d_rate_and_the_hours_for_the_two_cells_left():
    """PPO walker2d's rate in the notes is the median of its 61 chunks' own rates, beside VPG
    walker2d's, with the two presets' update shapes that explain it; the two PPO cells left are
    estimated at their VPG cells' rates times the same ratio; its run s and wall are the
    report's."""
    flat = _notes()
    rates, cell = _assert_median_beside(flat, PPO_WALKER, VPG_WALKER, "VPG walker2d's {beside}")
    ratio = float(np.median(rates)) / float(np.median(_chunk_rates(VPG_WALKER, 61)))
    ppo, vpg = (yaml.safe_load((ROOT / f"presets/{a}/brax.yaml").read_text())
                for a in ("ppo", "vpg"))
    assert (f"a PPO update takes {ppo['update_epochs']} epochs of {ppo['num_minibatches']} "
            f"minibatches over its rollout where VPG's takes one policy step and "
            f"{vpg['value_epochs']} value passes of {vpg['value_minibatches']} minibatches"
            ) in flat and vpg["policy_epochs"] == 1
    assert f"a PPO walker2d cell takes about {cell:.1f} hours of training here" in flat
    cheetah, ant = _cell_hours(VPG_CHEETAH) / ratio, _cell_hours(VPG_ANT) / ratio
    assert (f"If PPO keeps that {ratio:.2f}x of VPG's rate on the other bodies, PPO halfcheetah "
            f"takes about {cheetah:.1f} hours and PPO ant about {ant:.1f}, "
            f"{cheetah + ant:.1f} hours for the two cells left") in flat
    _assert_run_and_wall(flat, "ppo-3M/brax:walker2d")


PPO_CHEETAH = (ROOT / "benchmarks/mujoco-cpu/progress-spinningup"
               / "20261202-043507-ppo-brax-halfcheetah-d2261d")


def test_the_ppo_halfcheetah_rate_by_machine_and_the_hours_for_ppo_ant():
    """PPO halfcheetah's rate in the notes is the median of its 61 chunks' own rates, beside VPG
    halfcheetah's, and split by the machine that ran them (the first 15 chunks on the machine that
    was lost, the rest on the one that resumed from checkpoint 15); PPO ant is estimated at VPG
    ant's rate times this cell's ratio to VPG; its run s and wall are the report's."""
    flat = _notes()
    rates, cell = _assert_median_beside(flat, PPO_CHEETAH, VPG_CHEETAH,
                                        "VPG halfcheetah's {beside}")
    assert (f"the 15 chunks the first machine ran had a median of {np.median(rates[:15]):,.0f}, "
            f"the 46 of the second {np.median(rates[15:]):,.0f}") in flat
    assert f"a PPO halfcheetah cell takes about {cell:.1f} hours of training here" in flat
    ratio = float(np.median(rates)) / float(np.median(_chunk_rates(VPG_CHEETAH, 61)))
    walker = float(np.median(_chunk_rates(PPO_WALKER, 61))) / float(
        np.median(_chunk_rates(VPG_WALKER, 61)))
    assert (f"against the {_cell_hours(VPG_CHEETAH) / walker:.1f} estimated from PPO walker2d's "
            f"ratio to VPG") in flat
    assert (f"If PPO ant keeps this cell's {ratio:.2f}x of VPG's rate, it takes about "
            f"{_cell_hours(VPG_ANT) / ratio:.1f} hours") in flat
    _assert_run_and_wall(flat, "ppo-3M/brax:halfcheetah")


PPO_ANT = ROOT / "benchmarks/mujoco-cpu/progress-spinningup/20261202-104709-ppo-brax-ant-ddb2dc"


def _lengths_and_rates(run: Path) -> tuple[np.ndarray, np.ndarray]:
    """Each of a run's 61 chunks' mean episode length (over its rows) and own rate."""
    lengths = [float(pd.read_parquet(run / "metrics" / f"chunk-{i:05d}.parquet")[
        "episode_length_mean"].mean()) for i in range(61)]
    return np.array(lengths), np.array(_chunk_rates(run, 61))


def test_the_ppo_ant_rate_and_what_short_episodes_cost():
    """PPO ant's rate in the notes is the median of its 61 chunks' own rates, beside VPG ant's;
    its chunks of short and of long episodes, and VPG ant's episode lengths, are the files';
    its run s and wall are the report's."""
    flat = _notes()
    rates, _ = _assert_median_beside(flat, PPO_ANT, VPG_ANT, "VPG ant's {beside}")
    walker = float(np.median(_chunk_rates(PPO_WALKER, 61))) / float(
        np.median(_chunk_rates(VPG_WALKER, 61)))
    cheetah = float(np.median(_chunk_rates(PPO_CHEETAH, 61))) / float(
        np.median(_chunk_rates(VPG_CHEETAH, 61)))
    assert f"PPO ran {walker:.2f}x and {cheetah:.2f}x VPG" in flat
    lengths, rates = _lengths_and_rates(PPO_ANT)
    short, long = rates[lengths < 30], rates[lengths > 300]
    assert (f"this run's {len(short)} chunks whose episodes averaged under 30 steps ran at a "
            f"median of {np.median(short):,.0f}, its {len(long)} chunks over 300 steps at "
            f"{np.median(long):,.0f}") in flat
    vpg_lengths, _ = _lengths_and_rates(VPG_ANT)
    assert (f"VPG ant's episodes averaged {vpg_lengths.min():.1f} to {vpg_lengths.max():.1f} "
            f"steps in every chunk") in flat
    row = _report_row("ppo-3M/brax:ant")
    assert (f"The report's run s ({row['run_seconds']:,.0f} s) and wall "
            f"({row['wall_seconds']:,.0f} s) are the cell's") in flat

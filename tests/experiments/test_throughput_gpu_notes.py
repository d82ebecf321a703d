"""The GPU loan notes' figures (benchmarks/throughput-gpu/NOTES.md, the second loan) are the
committed results' own: the table's rows, and the arithmetic the bullets draw from them."""

import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "benchmarks" / "throughput-gpu"
NAMES = {"ppo-cartpole": "PPO CartPole-v1 (PureJaxRL's)",
         "ppo-breakout-minatar": "PPO Breakout-MinAtar (rejax's)",
         "ppo-brax-hopper": "PPO brax hopper (rejax's)"}
HEADLINE = [("ppo-cartpole", 1), ("ppo-cartpole", 2048), ("ppo-breakout-minatar", 256),
            ("ppo-brax-hopper", 256)]
LOAN = "2026-11-29"
TIMES = "\u00d7"  # the notes' multiplication sign


def _points(path: Path) -> dict:
    return {(p["workload"], p["members"], p["lib"]): p
            for p in json.loads(path.read_text())["points"]
            if p["status"] == "ok" and p["measured_at"] >= LOAN}


@pytest.fixture(scope="module")
def calls():
    return [_points(ROOT / "results.json"), _points(ROOT / "repeat" / "results.json")]


@pytest.fixture(scope="module")
def notes():
    return (ROOT / "NOTES.md").read_text()


def _rate(x: float) -> str:
    return f"{x / 1e6:.2f}M" if x >= 1e6 else f"{x / 1e3:.1f}k"


def _first_and_later(p: dict) -> tuple[float, float]:
    """jaxrl's first chunk and a later one (s), from the whole-run and steady rates."""
    n, total = p["chunks"], p["members"] * p["steps_per_member"]
    later = (n - 1) / n * total / p["env_steps_per_second"]
    return p["run_seconds"] - later, later / (n - 1)


def _peer_compile(p: dict) -> float:
    return p["lower_seconds"] + p["compile_seconds"]


def test_every_row_of_the_second_loans_table_is_the_results(calls, notes):
    for w, m in HEADLINE:
        cells = [NAMES[w], f"{m:,}"]
        for c in calls:
            j, r = c[(w, m, "jaxrl")], c[(w, m, "rejax")]
            ratio = j["env_steps_per_second_all"] / r["env_steps_per_second"]
            cells.append(f"{_rate(j['env_steps_per_second_all'])} / "
                         f"{_rate(r['env_steps_per_second'])}, {ratio:.3f}{TIMES}")
        first, later = _first_and_later(calls[0][(w, m, "jaxrl")])
        cells.append(f"{first:.2f} / {later:.2f}")
        j, r = calls[0][(w, m, "jaxrl")], calls[0][(w, m, "rejax")]
        cells.append(f"{j['compile_seconds']:.1f} / {_peer_compile(r):.1f}")
        assert "| " + " | ".join(cells) + " |" in notes, (w, m)


def test_the_bullets_arithmetic(calls, notes):
    first_call, second_call = calls
    rate = lambda p: p["env_steps_per_second_all" if p["lib"] == "jaxrl" else
                       "env_steps_per_second"]
    spread = max(abs(rate(first_call[k]) / rate(second_call[k]) - 1)
                 for k in first_call if k in second_call)
    assert spread < 0.01 and "within 1% on every rung" in notes
    ratios = [_first_and_later(first_call[(w, m, "jaxrl")]) for w, m in HEADLINE]
    assert min(f / lt for f, lt in ratios) >= 2.05 and max(f / lt for f, lt in ratios) < 2.25
    assert "2.1-2.2 times a later one" in notes
    off = {}  # the steady rate against (n-1)/(n-2) times the whole-run rate
    for w, m in HEADLINE:
        p = first_call[(w, m, "jaxrl")]
        n = p["chunks"]
        off[(w, m)] = abs(p["env_steps_per_second"] / ((n - 1) / (n - 2)
                                                       * p["env_steps_per_second_all"]) - 1)
    assert max(off[("ppo-cartpole", 1)], off[("ppo-cartpole", 2048)]) < 0.001
    assert 0.001 < off[("ppo-breakout-minatar", 256)] < 0.0025
    assert round(off[("ppo-brax-hopper", 256)], 3) == 0.010
    assert re.search(r"within 0\.1% of\s+the steady rate on both CartPole rungs, 0\.2% on "
                     r"MinAtar and 1\.0% on hopper", notes)
    hopper = (first_call[("ppo-brax-hopper", 256, "jaxrl")]["run_seconds"]
              - first_call[("ppo-brax-hopper", 256, "rejax")]["run_seconds"][0])
    assert f"{hopper:.2f} s over 8 chunks" in notes
    cold = [first_call[(w, m, "jaxrl")]["compile_seconds"]
            / _peer_compile(first_call[(w, m, "rejax")]) for w, m in HEADLINE]
    assert f"{min(cold):.2f}-{max(cold):.2f}{TIMES}" in notes
    cached_j = [second_call[(w, m, "jaxrl")]["compile_seconds"] for w, m in HEADLINE]
    cached_r = [_peer_compile(second_call[(w, m, "rejax")]) for w, m in HEADLINE]
    assert (f"jaxrl took {min(cached_j):.1f}-{max(cached_j):.1f} s and rejax "
            f"{min(cached_r):.1f}-{max(cached_r):.1f} s") in notes
    one = second_call[("ppo-breakout-minatar", 1, "jaxrl")]
    assert f"{_rate(one['env_steps_per_second_all'])}\n  env-steps/s, compile " \
           f"{one['compile_seconds']:.1f} s" in notes

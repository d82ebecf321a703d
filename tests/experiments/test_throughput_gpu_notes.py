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


# -- the third loan (2026-11-30) ------------------------------------------------------------------
def _compute_stream(summary: dict) -> dict:
    return next(line for line in summary["lines"]
                if line["plane"].startswith("/device:") and "Compute" in line["line"])


def test_the_third_loans_profile_table_and_bullets():
    plan = json.loads((ROOT / "plan.json").read_text())
    notes = (ROOT / "NOTES.md").read_text()
    profile = plan["profile"]
    assert profile["rung"] == "ppo-brax-hopper x256" and f"({profile['ratio_to_rejax']:.3f}{TIMES})" in notes
    j, r = _compute_stream(profile["jaxrl"]), _compute_stream(profile["rejax"])
    busy, events = j["busy_seconds"] / r["busy_seconds"], j["events"] / r["events"]
    assert (f"| busy seconds | {j['busy_seconds']:.3f} | {r['busy_seconds']:.3f} | "
            f"{busy:.3f} |") in notes
    assert f"| kernels and copies | {j['events']:,} | {r['events']:,} | {events:.3f} |" in notes
    assert f"busy {100 * (busy - 1):.1f}% longer, on {100 * (events - 1):.1f}% more" in notes
    assert f"1.18 times rejax's (1 / {profile['ratio_to_rejax']:.3f})" in notes
    assert round(1 / profile["ratio_to_rejax"], 2) == 1.18
    assert 0.4 < (busy - 1) / (1 / profile["ratio_to_rejax"] - 1) < 0.6  # "about half"
    copies = [line for line in profile["jaxrl"]["lines"] if line["line"].endswith("(MemcpyD2D)")]
    assert len(copies) == 4 and {c["events"] for c in copies} == {2112}
    rejax_top = {e["name"]: e["count"] for e in profile["rejax"]["top"]}
    graphs = sum(c for n, c in rejax_top.items() if n.startswith("cuGraphLaunch"))
    assert (f"{rejax_top['command_buffer::execute']:,} `command_buffer::execute` events, "
            f"{graphs:,}\n  `cuGraphLaunch`") in notes


def test_the_third_loans_sac_draw_and_ladder_points():
    plan = json.loads((ROOT / "plan.json").read_text())
    notes = (ROOT / "NOTES.md").read_text()
    drawn = plan["sac_draw"]["point"]
    assert drawn["ablation"] == "draw_with_replacement" and drawn["members"] == 256
    points = {(p["lib"], p["workload"], p["members"], p["measured_at"][:10]): p
              for p in json.loads((ROOT / "results.json").read_text())["points"]
              if p["status"] == "ok"}
    own = points[("rejax", "sac-brax-hopper", 256, "2026-11-28")]
    jaxrl = points[("jaxrl", "sac-brax-hopper", 256, "2026-11-28")]
    assert (f"rung in {drawn['run_seconds'][0]:.2f} s: {drawn['env_steps_per_second']:,.0f} "
            f"env-steps/s, against {own['run_seconds'][0]:.2f} s "
            f"({own['env_steps_per_second']:,.0f} env-steps/s)") in notes
    assert (f"ran {jaxrl['run_seconds']:.2f} s ({jaxrl['env_steps_per_second']:,.0f} "
            f"env-steps/s) on the first loan, at {jaxrl['commit'][:7]}") in notes
    ratio = jaxrl["env_steps_per_second"] / drawn["env_steps_per_second"]
    assert f"jaxrl's SAC runs {ratio:.2f}{TIMES} rejax's" in notes
    j = points[("jaxrl", "ppo-breakout-minatar", 1, "2026-11-30")]
    r = points[("rejax", "ppo-breakout-minatar", 1, "2026-11-30")]
    ratio = j["env_steps_per_second_all"] / r["env_steps_per_second"]
    assert (f"jaxrl {_rate(j['env_steps_per_second_all'])} env-steps/s whole-run "
            f"({_rate(j['env_steps_per_second'])} steady), rejax\n  "
            f"{_rate(r['env_steps_per_second'])}, **{ratio:.2f}{TIMES}**") in notes
    assert (f"jaxrl's {j['chunks']} chunks took {j['run_seconds']:.2f} s against rejax's "
            f"{r['run_seconds'][0]:.2f} s") in notes
    earlier = _points(ROOT / "repeat" / "results.json")[("ppo-breakout-minatar", 1, "jaxrl")]
    assert abs(earlier["env_steps_per_second_all"] / j["env_steps_per_second_all"] - 1) < 0.001
    h = points[("jaxrl", "ppo-brax-hopper", 1, "2026-11-30")]
    assert (f"jaxrl {_rate(h['env_steps_per_second_all'])} env-steps/s whole-run "
            f"({_rate(h['env_steps_per_second'])} steady), compile {h['compile_seconds']:.1f} s") in notes


def test_the_readme_says_what_the_third_loan_measured():
    plan = json.loads((ROOT / "plan.json").read_text())
    readme = (ROOT.parents[1] / "README.md").read_text()
    drawn = plan["sac_draw"]["point"]["env_steps_per_second"]
    jaxrl = next(p for p in json.loads((ROOT / "results.json").read_text())["points"]
                 if p["status"] == "ok" and p["lib"] == "jaxrl"
                 and (p["workload"], p["members"]) == ("sac-brax-hopper", 256))
    j, r = (_compute_stream(plan["profile"][lib]) for lib in ("jaxrl", "rejax"))
    assert (f"{100 * (j['busy_seconds'] / r['busy_seconds'] - 1):.1f}% more busy\ntime on "
            f"{100 * (j['events'] / r['events'] - 1):.1f}% more kernels") in readme
    assert (f"ran {drawn / 1e6:.2f}M env-steps/s on the same rung, and jaxrl's SAC runs "
            f"{jaxrl['env_steps_per_second'] / drawn:.2f}{TIMES} that") in readme

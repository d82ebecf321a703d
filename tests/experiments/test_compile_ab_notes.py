"""The compile A/B notes' table is the committed results' (benchmarks/compile-ab-cpu), and the
script's table puts each tree's mean wait, the ratio and rejax's level in the right cells."""

import json
import statistics
from pathlib import Path

import pytest

from tests.experiments.reports import flat_notes
from tests.experiments.scripts import load

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
ROOT = BENCHMARKS / "compile-ab-cpu"
EVAL_BEHIND = BENCHMARKS / "compile-ab-eval-behind-cpu"
LINALG = BENCHMARKS / "cpu-linalg-ab-cpu"
EVAL_ONCE = BENCHMARKS / "compile-ab-eval-once-cpu"


@pytest.mark.parametrize("root", [ROOT, EVAL_BEHIND, LINALG, EVAL_ONCE], ids=lambda p: p.name)
def test_the_notes_table_is_the_results(root):
    compile_ab = load("compile_ab")
    data = json.loads((root / "results.json").read_text())
    peers = json.loads(compile_ab.PEER_RESULTS.read_text())["points"]
    notes = (root / "NOTES.md").read_text()
    inside = notes.split(compile_ab.TABLE_START)[1].split(compile_ab.TABLE_END)[0].strip()
    assert inside == compile_ab.table(data, peers)


def test_the_linalg_notes_hopper_rates_are_its_records():
    records = {(r["workload"], r["tree"]): r
               for r in json.loads((LINALG / "results.json").read_text())["records"]
               if r["workload"].endswith("brax-hopper")}
    notes = flat_notes(LINALG)
    for algo in ("ppo", "sac"):
        lapack, xla = (records[(f"{algo}-brax-hopper", t)] for t in ("before", "after"))
        a, b = lapack["env_steps_per_second"], xla["env_steps_per_second"]
        assert (f"{a:,.0f} env-steps/s with LAPACK, {b:,.0f} without ({b / a:.2f}x); compile "
                f"{lapack['compile_seconds']:.2f} s against {xla['compile_seconds']:.2f} s"
                ) in notes, algo


def test_the_eval_behind_notes_figures_are_its_records():
    compile_ab = load("compile_ab")

    def first_steps(root: Path, task: str) -> dict:
        return {r["tree"]: compile_ab.first_step_wait(r)
                for r in json.loads((root / "results.json").read_text())["records"]
                if r["workload"] == task and r["status"] == "ok"}

    notes = flat_notes(EVAL_BEHIND)  # one line
    for task, name in (("ppo-craftax-symbolic-bench", "Craftax-Symbolic"),
                       ("ppo-playground-cartpolebalance-bench", "Playground CartpoleBalance")):
        w = first_steps(EVAL_BEHIND, task)
        assert (f"{name} from {w['before']:.2f} s to {w['after']:.2f} s "
                f"({w['after'] / w['before']:.2f}x)") in notes, name
    craftax = {r["tree"]: r["compile_phases"]["eval"]
               for r in json.loads((EVAL_BEHIND / "results.json").read_text())["records"]
               if r["workload"] == "ppo-craftax-symbolic-bench"}
    assert (f"traced in {craftax['after']['trace']:.2f} s against "
            f"{craftax['before']['trace']:.2f} s and lowered in {craftax['after']['lower']:.2f} "
            f"s against {craftax['before']['lower']:.2f} s") in notes
    earlier = first_steps(ROOT, "ppo-craftax-symbolic-bench")  # 691ced1's pair, another day
    now = first_steps(EVAL_BEHIND, "ppo-craftax-symbolic-bench")
    chained = earlier["after"] / earlier["before"] * now["after"] / now["before"]
    assert (f"({earlier['after']:.2f} s against {earlier['before']:.2f} s" in notes
            and f"together about {chained:.2f}x" in notes)


def test_a_row_is_the_mean_of_its_pairs_beside_the_peer():
    compile_ab = load("compile_ab")

    def rec(tree, wait, parts):
        return {"workload": "w", "members": 1, "tree": tree, "status": "ok", "eval_episodes": 0,
                "compile_seconds": wait, "compile_parts": parts}

    data = {"records": [rec("before", 5.0, {"init": 1.0, "chunk": 4.0}),
                        rec("after", 3.0, {"init": 1.0, "chunk": 2.5}),
                        rec("before", 7.0, {"init": 1.0, "chunk": 6.0}),
                        rec("after", 5.0, {"init": 1.5, "chunk": 4.5}),
                        {**rec("after", 1.0, {}), "status": "failed"}]}
    peers = [{"lib": "rejax", "status": "ok", "workload": "w", "members": 1,
              "lower_seconds": 1.25, "compile_seconds": 3.5}]
    row = compile_ab.table(data, peers).splitlines()[-1]
    assert row == "| w | 1 | 0 | 6.00 | 4.00 | 0.67x | 6.00 / 4.00 | 1.25 / 3.50 | 4.75 |"


def test_the_first_step_wait_leaves_out_the_wait_at_the_first_evaluation():
    compile_ab = load("compile_ab")
    after = {"compile_seconds": 30.0, "compile_phases": {"eval": {"compile": 20.0, "waited": 4.5}}}
    assert compile_ab.first_step_wait(after) == 25.5
    before = {"compile_seconds": 30.0, "compile_phases": {"eval": {"compile": 20.0}}}
    assert compile_ab.first_step_wait(before) == 30.0


def test_the_same_minutes_table_is_its_results():
    root = BENCHMARKS / "compile-vs-rejax-cpu"
    points = {(p["workload"], p["members"], p["lib"]): p
              for p in json.loads((root / "results.json").read_text())["points"]}
    notes = (root / "NOTES.md").read_text()
    for w, m in [("ppo-breakout-minatar", 16), ("ppo-breakout-minatar", 64),
                 ("dqn-cartpole", 16), ("dqn-cartpole", 64)]:
        ours, peer = points[(w, m, "jaxrl")], points[(w, m, "rejax")]
        theirs = peer["lower_seconds"] + peer["compile_seconds"]
        row = (f"| {m} | {ours['compile_seconds']:.2f} | {theirs:.2f} | "
               f"{ours['compile_seconds'] / theirs:.2f}x |")
        assert row in notes, (w, m)
    rates = {w: [points[(w, m, "jaxrl")]["env_steps_per_second_all"]
                 / points[(w, m, "rejax")]["env_steps_per_second"] for m in (16, 64)]
             for w in ("ppo-breakout-minatar", "dqn-cartpole")}
    flat = " ".join(notes.split())
    for w, label in (("ppo-breakout-minatar", "rejax's on MinAtar"),
                     ("dqn-cartpole", "on DQN CartPole")):
        assert f"{min(rates[w]):.1f}-{max(rates[w]):.1f}x {label}" in flat, w


def minatar_pairs(members: int) -> list[tuple[float, float]]:
    """PPO Breakout-MinAtar's (jaxrl's wait, rejax's lowering + compile) in seconds, runs 1-5
    of benchmarks/compile-vs-rejax-cpu in order (run 1 its results.json, the rest repeat/)."""
    root = BENCHMARKS / "compile-vs-rejax-cpu"
    runs = [json.loads((root / "results.json").read_text())] + [
        json.loads((root / "repeat" / f"run{n}" / "results.json").read_text())
        for n in (2, 3, 4, 5)]
    pairs = []
    for run in runs:
        points = {(p["workload"], p["members"], p["lib"]): p for p in run["points"]}
        peer = points[("ppo-breakout-minatar", members, "rejax")]
        pairs.append((points[("ppo-breakout-minatar", members, "jaxrl")]["compile_seconds"],
                      peer["lower_seconds"] + peer["compile_seconds"]))
    return pairs


def test_the_three_runs_of_minatar_are_their_results():
    notes = (BENCHMARKS / "compile-vs-rejax-cpu" / "NOTES.md").read_text()
    for m in (16, 64):
        ours, theirs = zip(*minatar_pairs(m)[:3], strict=True)
        a, b = statistics.median(ours), statistics.median(theirs)
        row = (f"| {m} | {', '.join(f'{x:.2f}' for x in ours)} | "
               f"{', '.join(f'{x:.2f}' for x in theirs)} | "
               f"{', '.join(f'{x / y:.2f}x' for x, y in zip(ours, theirs, strict=True))} | "
               f"{a:.2f} / {b:.2f} = {a / b:.2f}x |")
        assert row in notes, m


def test_runs_four_and_five_of_minatar_are_their_results():
    """Runs 4 and 5 (another host) beside rejax's, and the median of all five runs' ratios
    (each run a pair in the same minutes; seconds of two hosts are not pooled)."""
    notes = (BENCHMARKS / "compile-vs-rejax-cpu" / "NOTES.md").read_text()
    for m in (16, 64):
        pairs = minatar_pairs(m)
        later = pairs[3:]
        median = statistics.median(a / b for a, b in pairs)
        row = (f"| {m} | {', '.join(f'{a:.2f}' for a, _ in later)} | "
               f"{', '.join(f'{b:.2f}' for _, b in later)} | "
               f"{', '.join(f'{a / b:.2f}x' for a, b in later)} | {median:.2f}x |")
        assert row in notes, m
        assert f"median of the five ratios is {median:.2f}x" in " ".join(notes.split()), m


def test_the_eval_once_notes_figures_are_its_records():
    """Each workload's evaluation build (trace + lower + compile) and its wait at the first
    evaluation, mean over pairs, as the notes quote them."""
    by: dict[tuple, list[dict]] = {}
    for r in json.loads((EVAL_ONCE / "results.json").read_text())["records"]:
        by.setdefault((r["workload"], r["tree"]), []).append(r["compile_phases"]["eval"])
    mean = lambda phases, f: statistics.mean(f(p) for p in phases)
    own = lambda p: p["trace"] + p["lower"] + p["compile"]
    notes = flat_notes(EVAL_ONCE)
    names = {"ppo-craftax-symbolic-bench": "Craftax-Symbolic", "sac-brax-hopper": "SAC brax hopper",
             "ppo-playground-cartpolebalance-bench": "Playground CartpoleBalance",
             "ppo-navix-doorkey": "Navix DoorKey-8x8", "ppo-jumanji-maze": "Jumanji Maze",
             "ppo-xminigrid-doorkey": "XLand-MiniGrid DoorKey-8x8"}
    for workload, name in names.items():
        before, after = (mean(by[(workload, t)], own) for t in ("before", "after"))
        assert f"{name}: {before:.2f} s to {after:.2f} s ({after / before:.2f}x)" in notes, name
    waits = {"ppo-playground-cartpolebalance-bench": "Playground", "sac-brax-hopper": "SAC hopper",
             "ppo-navix-doorkey": "Navix", "ppo-jumanji-maze": "Jumanji",
             "ppo-xminigrid-doorkey": "XLand-MiniGrid"}
    for workload, name in waits.items():
        before, after = (mean(by[(workload, t)], lambda p: p["waited"]) for t in ("before", "after"))
        assert f"{name} {before:.2f} s to {after:.2f} s" in notes, name


def test_the_craftax_emitters_figures_are_its_records():
    """Craftax-Symbolic's compile and chunk seconds under the two fusion emitters, and the chunk
    program's XLA compile in the A/B's after record, as the eval-once notes quote them."""
    doc = json.loads((EVAL_ONCE / "craftax-fusion-emitters.json").read_text())
    runs = {r["label"]: r for r in doc["runs"]}
    notes = flat_notes(EVAL_ONCE)
    default, older = runs["default"], runs["fusion_emitters_off"]
    assert (f"{default['compile_seconds']:.2f} s with the default emitters and "
            f"{older['compile_seconds']:.2f} s with the older ones") in notes
    per_update = {label: statistics.median(r["chunk_seconds"][1:])
                  / doc["updates_per_chunk"][label] for label, r in runs.items()}
    assert f"{statistics.median(default['chunk_seconds'][1:]):.2f} s for a chunk of 2" in notes
    assert f"against {statistics.median(older['chunk_seconds'][1:]):.2f} s for a chunk of 1" in notes
    ratio = per_update["fusion_emitters_off"] / per_update["default"]
    assert f"{ratio:.2f}x slower per update" in notes
    after = next(r for r in json.loads((EVAL_ONCE / "results.json").read_text())["records"]
                 if r["workload"] == "ppo-craftax-symbolic-bench" and r["tree"] == "after")
    chunk = after["compile_phases"]["chunk"]["compile"]
    assert f"the chunk program's XLA compile is {chunk:.2f} s" in notes

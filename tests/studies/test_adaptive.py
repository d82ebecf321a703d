"""Seeds bought until a comparison is decided (`jaxrl.studies.adaptive`): AdaStop as jaxrl drives it
gives the decisions of AdaStop's own tutorial on its own data, decides a clear difference at
the first interim, and runs to its cap on two equal sides. No training (scores are given)."""

import json
import typing
from pathlib import Path

import numpy as np
import pytest

from jaxrl.studies import adaptive

WALKER = json.loads((Path(__file__).parents[1] / "fixtures" / "adastop_walker.json").read_text())


def test_the_published_walker_example_is_decided_as_published():
    """Five of the six decisions hold whatever the permutations drawn; DDPG vs TRPO, decided at
    the last interim, sits at the boundary: the tutorial's "smaller" comes out for 14 of 20
    permutation seeds here (adastop's own CLI, unseeded, printed "smaller" when tried)."""
    sides = ["PPO", "DDPG", "SAC", "TRPO"]

    def scores(side, k):
        return WALKER["batches"][k][side]  # a KeyError: a batch the tutorial did not need

    boundary = []
    for seed in range(20):
        result = adaptive.decide(sides, scores, batch=5, max_batches=5, alpha=0.05, seed=seed)
        assert result.seeds == WALKER["scores_used"] and result.interims == 5
        clear = {k: v for k, v in result.decisions.items() if k != "DDPG vs TRPO"}
        assert clear == {k: v for k, v in WALKER["decisions"].items() if k != "DDPG vs TRPO"}
        boundary.append(result.decisions["DDPG vs TRPO"])
    assert set(boundary) == {"smaller", "equal"} and boundary.count("smaller") == 14


def test_a_clear_difference_stops_at_the_first_interim_and_equal_sides_run_to_the_cap():
    rng = np.random.default_rng(0)
    far = adaptive.decide(["a", "b"], lambda side, k: rng.normal(100 if side == "a" else 0, 1, 5),
                          batch=5, max_batches=4)
    assert far.decisions == {"a vs b": "larger"} and far.seeds == {"a": 5, "b": 5}
    same = adaptive.decide(["a", "b"], lambda side, k: rng.normal(0, 1, 5), batch=5,
                           max_batches=3)
    assert same.decisions == {"a vs b": "equal"} and same.seeds == {"a": 15, "b": 15}


def test_bad_input_is_one_line():
    with pytest.raises(ValueError, match="two or more distinct"):
        adaptive.decide(["a"], lambda s, k: [0.0] * 5)
    with pytest.raises(ValueError, match="batch 0 must be 5 finite scores"):
        adaptive.decide(["a", "b"], lambda s, k: [0.0, np.nan, 1.0, 2.0, 3.0])


def test_a_stored_comparison_trains_more_seeds_of_each_run(tmp_path):
    """Two tiny stored runs of 2 seeds: 2 + 2 seeds cannot reject at 5% (6 permutations), so the
    test asks for a second batch, trained from each run's own spec on new seeds and stored."""
    from jaxrl.api import train
    from jaxrl.runs import query
    from jaxrl.runs.store import RunStore

    kw = dict(seeds=2, total_steps=1024, runs_dir=str(tmp_path), progress=False, num_envs=4,
              num_steps=32, eval_episodes=2)
    a = train("ppo", "CartPole-v1", **kw).run_id
    b = train("ppo", "CartPole-v1", learning_rate=1e-3, **kw).run_id
    store = RunStore(str(tmp_path))
    result = adaptive.compare_runs(a, b, store, batch=2, max_batches=2)
    assert result.seeds == {a: 4, b: 4} and result.interims == 2
    assert result.decisions == {f"{a} vs {b}": "equal"}  # the cap, with nothing found
    for first in (a, b):
        first_meta, added = (query.show(r, store) for r in result.runs[first])
        assert added["adds_seeds_to"] == first  # a top-level run.json field
        assert added["config"] == first_meta["config"] and added["seeds"] == 2
        assert added["group"]["spec"]["seed"] != first_meta["group"]["spec"]["seed"]
        assert result.scores[first][:2] == first_meta["final_eval_return"]


def test_the_cli_flag_routes_to_the_adaptive_command_and_bad_runs_are_one_line(tmp_path, capsys):
    from jaxrl.cli import build_parser, main

    args = build_parser().parse_args(["compare", "a", "b", "--adaptive"])
    assert args.handler == ("training", "cmd_compare_adaptive")
    assert build_parser().parse_args(["compare", "a", "b"]).handler == ("store", "cmd_compare")
    assert main(["compare", "nope-a", "nope-b", "--adaptive", "--runs-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("jaxrl: ") and "\n" not in err, err


# -- a bench entry's seeds: adaptive ------------------------------------------------------------
class _FakePool:
    """`adaptive.SeedPool` with scores drawn, not trained: ``grow`` adds a batch."""

    draws: typing.ClassVar[list] = []

    def __init__(self, run_id, store, measure, batch, progress):
        self.batch_size, self.spec = batch, {"total_steps": 1000}
        self.scores = list(self.draws.pop(0))
        self.grown = 0

    def grow(self):
        self.grown += 1
        self.scores += list(self.draws.pop(0))


@pytest.mark.parametrize("shift, batches, side", [(-30.0, 1, "below"), (30.0, 1, "above"),
                                                  (0.0, 4, None)])
def test_an_adaptive_entry_adds_batches_until_a_side_is_found_or_the_cap(monkeypatch, shift,
                                                                         batches, side):
    """Far from the reference the first batch decides; level with it every batch of the cap
    runs, and what it calls then is not a side (each look at alpha / max_batches)."""
    rng = np.random.default_rng(3)
    _FakePool.draws = [100.0 + shift + rng.normal(0, 5, 8) for _ in range(4)]
    seen = []
    monkeypatch.setattr(adaptive, "SeedPool",
                        lambda *a: seen.append(_FakePool(*a)) or seen[-1])
    verdict = adaptive.grow_entry("r", None, {"batch": 8, "max_batches": 4, "alpha": 0.05},
                                  100.0, "final_eval")
    assert len(seen[0].scores) == 8 * batches
    assert verdict.endswith(f"(sequential: {8 * batches} seeds, {batches} of at most 4 batches)")
    assert verdict.startswith(side) if side else not verdict.startswith(("above", "below"))


def test_the_sequential_level_is_stricter_than_one_look():
    """Seven of 8 seeds a little above: one look at 0.05 finds a side (p = 0.016 < 0.05);
    four planned looks at 0.0125 each do not."""
    from jaxrl.studies.bench.judge import judge, sequential_level

    values = [101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0, 99.5]
    row = {"per_seed": values, "reference": 100.0, "reference_budget": None, "run_id": "r",
           "status": "finished", "total_steps": 1000}
    assert judge(dict(row))["verdict"] == "above reference"
    looks = {"batch": 8, "max_batches": 4, "alpha": 0.05}
    assert sequential_level(looks) == 0.0125
    assert judge({**row, "adaptive": looks})["verdict"].startswith("reference inside CI")


def test_a_suite_entry_with_adaptive_seeds(tmp_path):
    """``seeds: adaptive`` runs its first batch, adds batches to the stored run until the cap
    (4 seeds can give no verdict), and its row takes every seed, curve included."""
    import yaml

    from jaxrl.studies.bench import runner as benchmod
    from jaxrl.studies.bench.suite import SuiteError, load_suite

    entry = {"algo": "ppo", "env": "CartPole-v1", "total_steps": 512,
             "config": {"num_envs": 4, "num_steps": 32}, "eval_episodes": 2,
             "seeds": {"adaptive": {"batch": 2, "max_batches": 2}},
             "reference": {"value": 1.0e6, "measure": "final_eval", "source": "none"}}
    path = tmp_path / "ada.yaml"
    path.write_text(yaml.safe_dump({"name": "ada", "entries": [entry]}))
    assert load_suite(str(path)).entries[0].adaptive == {"batch": 2, "max_batches": 2,
                                                         "alpha": 0.05}
    result = benchmod.bench(str(path), runs_dir=str(tmp_path / "runs"), progress=False)
    report = json.loads((Path(result.report_dir) / "results.json").read_text())
    row = report["entries"][0]
    assert len(row["per_seed"]) == 4 and len(row["adaptive"]["runs"]) == 2
    assert len(row["curve"]["seeds"]) == 4
    assert row["verdict"].startswith("too few seeds")
    again = benchmod.bench(str(path), runs_dir=str(tmp_path / "runs"), progress=False)
    assert len(json.loads((Path(again.report_dir) / "results.json").read_text())
               ["entries"][0]["adaptive"]["runs"]) == 2  # at its cap: nothing trained again
    for bad, fragment in [({"adaptive": {"batch": 1}}, "batch >= 2"),
                          ({"adaptive": {"size": 4}}, "unknown seeds.adaptive keys"),
                          ("lots", "positive integer")]:
        path.write_text(yaml.safe_dump({"entries": [{**entry, "seeds": bad}]}))
        with pytest.raises(SuiteError, match=fragment):
            load_suite(str(path))
    path.write_text(yaml.safe_dump({"entries": [{**entry, "seeds": "adaptive",
                                                 "reference": None}]}))
    with pytest.raises(SuiteError, match="decides against a reference"):
        load_suite(str(path))


def test_an_adaptive_row_is_counted_and_shows_the_interval_its_verdict_used():
    """The report's summary counts an adaptive row's verdict (its text carries the sequential
    suffix), and the mean's cell prints the interval the decision used, at its own level (1 -
    0.05 / 4 = 98.75%), not the 95% one under a 95% header."""
    from jaxrl.studies.bench import judge as bench_judge
    from jaxrl.studies.bench.markdown import markdown

    looks = {"batch": 8, "max_batches": 4, "alpha": 0.05}
    base = {"reference_budget": None, "status": "finished", "total_steps": 1000,
            "algo": "dqn", "env": "X", "seeds": 16, "measure": "final_eval",
            "reference_source": "a test", "wall_seconds": 1.0, "env_steps_per_second": 1.0,
            "devices": "cpu", "frames_per_step": 1}
    below = bench_judge.judge({**base, "entry": "dqn/below", "run_id": "a", "adaptive": looks,
                               "per_seed": [90.0 + 0.5 * k for k in range(16)],
                               "reference": 100.0})
    inside = bench_judge.judge({**base, "entry": "dqn/inside", "run_id": "b", "adaptive": looks,
                                "per_seed": [96.0 + 0.5 * k for k in range(16)],
                                "reference": 100.0})
    assert below["verdict"].startswith("below reference (sequential")
    assert bench_judge.verdict_kind(below["verdict"]) == "below reference"
    assert bench_judge.verdict_kind(f"interrupted: {inside['verdict']}") == "reference inside CI"
    assert below["decision_confidence"] == pytest.approx(0.9875)
    assert below["decision_ci_low"] < below["mean_ci_low"]  # the wider of the two
    text = markdown({"title": "t", "bench_id": "b", "suite": "s", "devices": [],
                     "git_commits": [], "report_written_at": "2026-11-29T00:00:00+00:00",
                     "confidence": 0.95, "bootstrap_reps": 2000, "entries": [below, inside]})
    assert "verdicts: reference inside the CI 1, above 0, below 1," in text
    low, high = below["decision_ci_low"], below["decision_ci_high"]
    assert f"[{low:,.1f}, {high:,.1f}] (98.75% CI, the verdict's)" in text
    assert "ours: mean [95% CI unless marked]" in text


def test_the_committed_adaptive_report_counts_its_rows():
    """benchmarks/classic-adaptive-cpu's summary line counts its one "below" and one "inside"
    row, and prints the 98.75% intervals its verdicts were decided on."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2]
            / "benchmarks/classic-adaptive-cpu/report.md").read_text()
    assert "verdicts: reference inside the CI 1, above 0, below 1," in text
    assert text.count("(98.75% CI, the verdict's)") == 2

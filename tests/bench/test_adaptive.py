"""Seeds bought until a comparison is decided (`jaxrl.adaptive`): AdaStop as jaxrl drives it
gives the decisions of AdaStop's own tutorial on its own data, decides a clear difference at
the first interim, and runs to its cap on two equal sides. No training (scores are given)."""

import json
from pathlib import Path

import numpy as np
import pytest

from jaxrl import adaptive

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

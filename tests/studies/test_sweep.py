"""Sweeps: configs x seeds in one program per static group, equal to separate runs; parsing;
the stored sweep; resume. (Ray: tests/studies/test_ray_cluster.py.)"""

import json

import jax
import numpy as np
import pandas as pd
import pytest

from jaxrl import api
from jaxrl.config import ConfigError
from jaxrl.engine import programs
from jaxrl.runs.runmeta import process_identity
from jaxrl.runs.store import StoreError
from jaxrl.studies.sweep.runner import (
    load_sweep,
    make_configs,
    parse_distribution,
    parse_grid,
    parse_random,
    split_values,
    sweep,
)

SMALL = dict(num_envs=4, num_steps=16, hidden=(16, 16), update_epochs=2, num_minibatches=2)
STEPS = 64 * 8  # 8 updates


def _chunk_programs() -> int:
    """Chunk programs compiled so far in this process."""
    return programs.COMPILED["chunk"]


def test_three_learning_rates_compile_once_and_equal_separate_runs(tmp_path):
    lrs = ["1e-3", "3e-3", "1e-2"]
    before = _chunk_programs()
    s = sweep("ppo", seeds=8, total_steps=STEPS, grid={"learning_rate": lrs}, seed=5,
              runs_dir=str(tmp_path), progress=False, max_chunk_updates=4,
              **{**SMALL, "hidden": (16, 8)})  # a static shape no other test compiles
    assert s.groups == [[0, 1, 2]]
    assert _chunk_programs() == before + 1  # one program for 3 configs x 8 seeds
    for i, lr in enumerate(lrs):
        alone = api.train("ppo", store=False, seeds=8, total_steps=STEPS, seed=5, progress=False,
                                        max_chunk_updates=4, learning_rate=float(lr),
                                        **{**SMALL, "hidden": (16, 8)})
        for a, b in zip(jax.tree.leaves(s.results[i].state.params),
                        jax.tree.leaves(alone.state.params)):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(s.results[i].final_eval_return, alone.final_eval_return,
                                   rtol=1e-5)
    # stored as one sweep: three runs, one sweep id, the same ranked table
    stored = load_sweep(s.sweep_id, str(tmp_path))
    assert list(stored["learning_rate"]) == list(s.table["learning_rate"])
    np.testing.assert_allclose(stored["iqm"], s.table["iqm"])
    assert set(stored["seeds"]) == {8} and list(s.table["rank"]) == [1, 2, 3]
    assert (np.diff(s.table["iqm"].to_numpy()) <= 0).all()


def test_a_static_change_makes_a_separate_group():
    s = sweep("ppo", seeds=2, total_steps=STEPS, grid={"hidden": ["(16,16)", "(8,8)"],
                                                       "learning_rate": ["1e-3", "3e-3"]},
              store=False, progress=False, **{k: v for k, v in SMALL.items() if k != "hidden"})
    assert s.groups == [[0, 1], [2, 3]]
    assert [r.config.hidden for r in s.results] == [(16, 16), (16, 16), (8, 8), (8, 8)]
    assert s.sweep_id is None and s.table["run_id"].isna().all()


def test_parsing_and_random_search():
    assert split_values("(64,64),(32,32)") == ["(64,64)", "(32,32)"]
    assert parse_grid(["hidden=(64,64),(32,32)", "lr=1,2"]) == {"hidden": ["64,64", "32,32"],
                                                               "lr": ["1", "2"]}
    d = parse_distribution("loguniform(1e-4, 1e-2)")
    rng = np.random.default_rng(0)
    draws = np.array([d.sample(rng) for _ in range(2000)])
    assert draws.min() >= 1e-4 and draws.max() <= 1e-2
    assert abs(np.mean(np.log10(draws)) + 3) < 0.05  # uniform in log space
    configs = make_configs({"a": [1, 2]}, parse_random(["b=uniform(0,1)", "c=choice(x,y)"]),
                           trials=3, seed=1)
    assert len(configs) == 6 and {c["c"] for c in configs} <= {"x", "y"}
    assert configs[:3] == make_configs({"a": [1]}, {"b": "uniform(0,1)", "c": "choice(x,y)"},
                                       trials=3, seed=1)  # same draws for every grid point
    for bad in ("loguniform(0,1)", "uniform(2,1)", "normal(0,1)", "uniform(a,b)"):
        with pytest.raises(ConfigError):
            parse_distribution(bad)
    with pytest.raises(ConfigError, match="trials"):
        make_configs({"a": [1]}, trials=4)


def test_bad_sweep_values_are_rejected_before_compiling():
    with pytest.raises(ConfigError, match="learning_rat"):
        sweep("ppo", seeds=2, total_steps=STEPS, grid={"learning_rat": ["1e-3"]}, store=False)
    with pytest.raises(ConfigError, match="expects"):
        sweep("ppo", seeds=2, total_steps=STEPS, grid={"num_envs": ["four"]}, store=False)


def test_resume_runs_only_the_groups_that_did_not_finish(tmp_path):
    kw = dict(seeds=2, total_steps=STEPS, grid={"learning_rate": ["1e-3", "3e-3", "1e-2"]},
              configs_per_group=1, runs_dir=str(tmp_path), progress=False, **SMALL)
    first = sweep("ppo", **kw)
    assert first.groups == [[0], [1], [2]]
    # config 1's group failed (as a lost task or a crash leaves it)
    path = tmp_path / first.table.set_index("config").loc[1, "run_id"] / "run.json"
    meta = json.loads(path.read_text())
    path.write_text(json.dumps({**meta, "status": "failed", "message": "lost"}))
    ended = {i: json.loads((tmp_path / r / "run.json").read_text())["ended_at"]
             for i, r in first.table.set_index("config")["run_id"].items()}
    again = sweep("ppo", resume=True, **kw)
    assert again.sweep_id == first.sweep_id
    assert [r is None for r in again.results] == [True, False, True]  # only group 1 ran
    pd.testing.assert_frame_equal(again.table, first.table)  # same runs, same numbers
    runs = {i: json.loads((tmp_path / r / "run.json").read_text())
            for i, r in again.table.set_index("config")["run_id"].items()}
    assert [runs[i]["status"] for i in range(3)] == ["finished"] * 3
    assert runs[0]["ended_at"] == ended[0] and runs[2]["ended_at"] == ended[2]
    assert len(load_sweep(first.sweep_id, str(tmp_path))) == 3  # one run per config
    # a sweep whose process still runs is not resumed from under it
    path.write_text(json.dumps({**json.loads(path.read_text()), "status": "running",
                                **process_identity()}))
    with pytest.raises(StoreError, match="still running"):
        sweep("ppo", resume=True, **kw)
    with pytest.raises(ConfigError, match="configs_per_group"):
        sweep("ppo", configs_per_group=0, **{k: v for k, v in kw.items()
                                             if k != "configs_per_group"})

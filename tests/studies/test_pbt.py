"""`jaxrl.pbt`: the exploit copies its source member exactly (but its envs and key), the explore
step stays in the space, a population trains as one program with one exploit program, and a
stopped population resumes to what an uninterrupted one does."""

import json

import jax
import numpy as np
import pytest

import jaxrl
from jaxrl.cli import main
from jaxrl.engine import programs
from jaxrl.engine.loop import build_programs, place_members
from jaxrl.engine.spec import group_spec, resolve_group
from jaxrl.studies.pbt import store as pbt_store
from jaxrl.studies.pbt.program import apply_exploit
from jaxrl.studies.pbt.schedule import Rule, explore, sources
from jaxrl.studies.search.space import SpaceError, parse_space

SPACE = {"learning_rate": "loguniform(1e-4, 1e-2)", "ent_coef": "uniform(0, 0.05)"}
TINY = dict(env="CartPole-v1", seeds=2, total_steps=8192, progress=False, num_envs=4,
            num_steps=64, eval_episodes=2, max_chunk_updates=4)
RULE = Rule(interval=2, fraction=0.25, window=4)


def test_the_bottom_copy_the_top_per_seed_and_a_nan_score_is_the_worst():
    scores = np.array([[1.0, 5.0], [np.nan, 4.0], [3.0, 1.0], [4.0, 2.0]])  # [P=4, S=2]
    src = sources(scores, 0.25, np.random.default_rng(0))
    assert src[:, 0].tolist() == [0, 3, 2, 3]  # slot 1 (NaN) copies slot 3 (the best)
    assert src[:, 1].tolist() == [0, 1, 0, 3]  # slot 2 (worst on seed 1) copies slot 0
    again = sources(scores, 0.25, np.random.default_rng(0))
    assert (again == src).all()


def test_explore_perturbs_or_resamples_inside_the_space():
    dists = parse_space({"learning_rate": "loguniform(1e-4, 1e-2)"})
    values = {"learning_rate": np.array([[1e-2, 1e-3], [5e-3, 2e-4]])}
    src = np.array([[0, 0], [0, 1]])  # slot 1, seed 0 copies slot 0
    rule = Rule(perturb=(0.8, 1.2), resample_probability=0.0)
    new = explore(values, src, dists, rule, np.random.default_rng(1))["learning_rate"]
    assert new[1, 0] in (0.8e-2, 1e-2)  # 1.2 x 1e-2 is clipped to the space's 1e-2
    assert new[0, 0] == 1e-2 and new[0, 1] == 1e-3 and new[1, 1] == 2e-4  # kept
    resampled = explore(values, src, dists, Rule(resample_probability=1.0),
                        np.random.default_rng(2))["learning_rate"]
    assert 1e-4 <= resampled[1, 0] <= 1e-2


def _leaves(tree) -> list:
    keyed = lambda x: jax.random.key_data(x) if jax.dtypes.issubdtype(
        x.dtype, jax.dtypes.prng_key) else x
    return [np.asarray(keyed(x)) for x in jax.tree.leaves(tree)]


def test_an_exploit_copies_its_source_exactly_but_its_envs_and_key():
    configs = [{"learning_rate": lr, "num_envs": 4, "num_steps": 64} for lr in (1e-3, 3e-4)]
    spec = group_spec("ppo", "CartPole-v1", 2, 2048, configs, eval_episodes=0)
    r = resolve_group(spec)
    placed = place_members(spec, r)
    progs, state = build_programs(spec, r, placed, 2)
    state, _ = progs.chunk_fn(state)  # trained a little: every member differs
    before = jax.device_get(state)
    source = np.array([3, 1, 2, 3])  # member 0 (config 0, seed 0) takes member 3's state
    lr = np.array([7e-4, 1e-3, 3e-4, 3e-4])
    after = jax.device_get(apply_exploit(state, source, {"learning_rate": lr}, placed, r))
    row = lambda tree, m: [x[m] for x in _leaves(tree)]
    for a, b in zip(row(after.params, 0), row(before.params, 3)):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(row(after.opt_state, 0), row(before.opt_state, 3)):
        np.testing.assert_array_equal(a, b)
    for part in ("carry", "key"):  # its own envs and PRNG stream
        for a, b in zip(row(getattr(after, part), 0), row(getattr(before, part), 0)):
            np.testing.assert_array_equal(a, b)
    for m in (1, 2, 3):  # the others unchanged
        for a, b in zip(row(after.params, m), row(before.params, m)):
            np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(np.asarray(after.hparams.learning_rate)[:4], lr, rtol=1e-6)


def _final(result) -> list:
    return [[np.asarray(r.metrics.sort_values(["seed", "update"]).episode_return_mean)
             for r in result.results], result.final.to_dict("records")]


def test_a_population_is_one_program_and_a_stopped_one_resumes_to_the_same(tmp_path,
                                                                          monkeypatch):
    compiled = dict(programs.COMPILED)
    whole = jaxrl.pbt("ppo", space=SPACE, population=4, rule=RULE, runs_dir=tmp_path / "a",
                      checkpoint_every=1, **TINY)
    assert programs.COMPILED["chunk"] - compiled.get("chunk", 0) <= 1
    assert programs.COMPILED["pbt_exploit"] - compiled.get("pbt_exploit", 0) <= 1
    assert sorted(whole.lineage, key=int) == ["1", "3", "5"]  # every 2 chunks but the last
    assert len(whole.final) == 2 and len(whole.results) == 4
    real, calls = pbt_store.record_exploit, []

    def stopped_at_the_second_exploit(root, pbt_id, chunk, entry):
        calls.append(chunk)
        if len(calls) == 2:
            raise KeyboardInterrupt
        real(root, pbt_id, chunk, entry)

    monkeypatch.setattr(pbt_store, "record_exploit", stopped_at_the_second_exploit)
    with pytest.raises(KeyboardInterrupt):
        jaxrl.pbt("ppo", space=SPACE, population=4, rule=RULE, runs_dir=tmp_path / "b",
                  checkpoint_every=1, **TINY)
    monkeypatch.setattr(pbt_store, "record_exploit", real)
    (folder,) = (tmp_path / "b" / "pbt").iterdir()
    resumed = jaxrl.pbt("ppo", space=SPACE, population=4, rule=RULE, runs_dir=tmp_path / "b",
                        checkpoint_every=1, resume=folder.name, **TINY)
    assert resumed.lineage == whole.lineage
    (a_returns, a_final), (b_returns, b_final) = _final(whole), _final(resumed)
    assert a_final == b_final
    for x, y in zip(a_returns, b_returns):
        np.testing.assert_array_equal(x, y)
    run_id = json.loads((folder / pbt_store.REQUEST).read_text())["run_ids"][0]
    assert main(["resume", run_id, "--runs-dir", str(tmp_path / "b")]) == 2  # pbt resumes it


@pytest.mark.parametrize("space, fragment", [
    ({"num_envs": "int(4, 8)"}, "num_envs is static"),
    ({"learning_rate": "categorical(0.001, 0.01)"}, "perturbs float ranges"),
    ({"learning_rat": "uniform(0.1, 0.2)"}, "not a field of PPOConfig"),
])
def test_a_space_pbt_cannot_perturb_is_one_line(space, fragment):
    with pytest.raises(SpaceError, match=fragment):
        jaxrl.pbt("ppo", space=space, population=2, **TINY)


def test_a_population_of_one_is_refused():
    with pytest.raises(ValueError, match="at least 2 slots"):
        jaxrl.pbt("ppo", space=SPACE, population=1, **TINY)


def test_the_cli_runs_a_population(tmp_path, capsys):
    assert main(["pbt", "ppo", "--param", "learning_rate=loguniform(1e-4,1e-2)",
                 "--population", "2", "--seeds", "2", "--total-steps", "4096", "--interval", "1",
                 "--set", "num_envs=4", "--set", "num_steps=64", "--max-chunk-updates", "4",
                 "--eval-episodes", "2", "--runs-dir", str(tmp_path), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "a population of 2 x 2 seeds, 3 exploits" in out and "final evaluation over seeds" in out
    assert main(["pbt", "ppo", "--runs-dir", str(tmp_path)]) == 2
    assert "a search space is needed" in capsys.readouterr().err

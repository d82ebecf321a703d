"""`jaxrl.search`: a space parsed into Optuna's distributions (bad ones refused in one line), a
batch of trials trained as one sweep, later batches of the same shapes compiling nothing, and a
search stopped between or inside batches resumed to what an uninterrupted one finds. Pruned: a
refilled slot starts afresh with its own hyperparameters while the others go on bit for bit,
with no recompile; a killed pruned search resumes to the same trials; a bad rule is one line."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxrl
from jaxrl import algos
from jaxrl.cli import main
from jaxrl.config import ConfigError
from jaxrl.engine import programs
from jaxrl.engine.loop import build_programs, place_members, run_group
from jaxrl.engine.spec import group_spec, resolve_group
from jaxrl.runs.store import RunStore
from jaxrl.studies.pbt.program import apply_refill
from jaxrl.studies.search import pruned, runner
from jaxrl.studies.search import store as search_store
from jaxrl.studies.search.space import SpaceError, parse_space
from jaxrl.studies.search.store import search_dir

SPACE = {"learning_rate": "loguniform(1e-4, 1e-2)", "ent_coef": {"uniform": [0.0, 0.05]}}
TINY = dict(env="CartPole-v1", seeds=2, total_steps=2048, progress=False, num_envs=4,
            num_steps=64, eval_episodes=2)
PPO = algos.get("ppo").default_config("CartPole-v1")


def test_a_space_in_every_form_becomes_optunas_distributions():
    dists = parse_space({"learning_rate": "loguniform(1e-5, 1e-3)",
                         "ent_coef": {"uniform": [0, 0.05]},
                         "num_minibatches": "int(2, 8)",
                         "update_epochs": {"int": [1, 16], "log": True},
                         "hidden": [[64, 64], [128, 128]],
                         "activation": "categorical(tanh, relu)"}, PPO)
    assert dists["learning_rate"].log and dists["learning_rate"].low == 1e-5
    assert (dists["num_minibatches"].low, dists["num_minibatches"].high) == (2, 8)
    assert dists["update_epochs"].log
    assert dists["hidden"].choices == ("64,64", "128,128")  # carried as text, read as --set
    assert dists["activation"].choices == ("tanh", "relu")


@pytest.mark.parametrize("space, fragment", [
    ({}, "non-empty mapping"),
    ({"learning_rat": "loguniform(1e-5, 1e-3)"}, "not a field of PPOConfig (did you mean "
                                                  "learning_rate?)"),
    ({"learning_rate": "loguniform(0, 1e-3)"}, "needs 0 < low < high"),
    ({"learning_rate": "uniform(1e-3, 1e-4)"}, "needs low < high"),
    ({"learning_rate": "normal(0, 1)"}, "is not one of loguniform(...)"),
    ({"learning_rate": "uniform(a, 1)"}, "bounds must be numbers"),
    ({"learning_rate": "uniform(0, inf)"}, "finite"),
    ({"num_minibatches": "int(1.5, 4)"}, "whole numbers"),
    ({"learning_rate": {"uniform": [0, 1], "scale": 2}}, "a mapping names one of"),
    ({"learning_rate": "uniform(-1, 1)"}, "-1.0 is not a value the config takes"),
    ({"gamma": "uniform(0.9, 1.5)"}, "1.5 is not a value the config takes"),
    ({"learning_rate": 3}, "expected a distribution"),
])
def test_a_bad_space_is_one_line(space, fragment):
    with pytest.raises(SpaceError) as err:
        parse_space(space, PPO)
    assert fragment in str(err.value) and "\n" not in str(err.value)


def _rows(result) -> list[tuple]:
    """(trial, learning_rate, ent_coef, value) of each trial, by trial number."""
    table = result.table.sort_values("trial")
    return list(zip(table.trial, table.learning_rate, table.ent_coef, table.value))


def test_later_batches_compile_nothing_and_a_resumed_search_finds_what_one_run_does(tmp_path):
    whole = jaxrl.search("ppo", space=SPACE, trials=4, batch=2, runs_dir=tmp_path / "a", **TINY)
    assert len(whole.table) == 4 and set(whole.table.state) == {"COMPLETE"}
    assert whole.best_value == whole.table.value.max()
    # stopped after its first batch, then extended to the same 4 trials
    first = jaxrl.search("ppo", space=SPACE, trials=2, batch=2, runs_dir=tmp_path / "b", **TINY)
    chunks = programs.COMPILED["chunk"]
    resumed = jaxrl.search("ppo", space=SPACE, trials=4, batch=2, runs_dir=tmp_path / "b",
                           resume=first.search_id, **TINY)
    assert programs.COMPILED["chunk"] == chunks  # the second batch reused the first's program
    assert _rows(resumed) == _rows(whole)
    assert (search_dir(tmp_path / "b", first.search_id) / "journal.log").is_file()


def test_a_search_killed_inside_a_batch_resumes_to_the_same_trials(tmp_path, monkeypatch):
    whole = jaxrl.search("ppo", space=SPACE, trials=4, batch=2, runs_dir=tmp_path / "a", **TINY)
    real, calls = runner.sweep, []

    def dies_on_the_second_batch(**kwargs):
        calls.append(kwargs["configs"])
        if len(calls) == 2:
            raise KeyboardInterrupt  # asked, never told
        return real(**kwargs)

    monkeypatch.setattr(runner, "sweep", dies_on_the_second_batch)
    with pytest.raises(KeyboardInterrupt):
        jaxrl.search("ppo", space=SPACE, trials=4, batch=2, runs_dir=tmp_path / "b", **TINY)
    monkeypatch.setattr(runner, "sweep", real)
    (folder,) = (tmp_path / "b" / "searches").iterdir()
    resumed = jaxrl.search("ppo", space=SPACE, trials=4, batch=2, runs_dir=tmp_path / "b",
                           resume=folder.name, **TINY)
    assert _rows(resumed) == _rows(whole)


def test_the_cli_searches_and_refuses_what_it_cannot_run(tmp_path, capsys):
    runs = str(tmp_path)
    assert main(["search", "ppo", "--param", "learning_rate=loguniform(1e-4,1e-2)",
                 "--trials", "2", "--batch", "2", "--seeds", "2", "--total-steps", "2048",
                 "--set", "num_envs=4", "--set", "num_steps=64", "--eval-episodes", "2",
                 "--runs-dir", runs, "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "2 trials x 2 seeds (tpe, batches of 2)" in out and "best: {'learning_rate':" in out
    for argv, fragment in [
        (["search", "ppo", "--runs-dir", runs], "a search space is needed"),
        (["search", "ppo", "--param", "lr", "--runs-dir", runs], "--param expects KEY=DIST"),
        (["search", "ppo", "--param", "clip=uniform(0,1)", "--runs-dir", runs],
         "not a field of PPOConfig"),
        (["search", "ppo", "--param", "learning_rate=uniform(0.1,0.2)", "--no-store"],
         "--no-store cannot be given"),
        (["search", "ppo", "--param", "learning_rate=uniform(0.1,0.2)", "--runs-dir", runs,
          "--resume", "search-nope"], "no search 'search-nope'"),
    ]:
        assert main(argv) == 2
        lines = capsys.readouterr().err.strip().splitlines()
        assert len(lines) == 1 and fragment in lines[0], lines


def test_a_resume_with_another_request_is_refused(tmp_path):
    first = jaxrl.search("ppo", space=SPACE, trials=2, batch=2, runs_dir=tmp_path, **TINY)
    with pytest.raises(Exception, match=r"was another request \(space differ\)"):
        jaxrl.search("ppo", space={"learning_rate": "loguniform(1e-4, 1e-3)"}, trials=2,
                     batch=2, runs_dir=tmp_path, resume=first.search_id, **TINY)


# ---- pruning without waste: rungs between chunks, pruned slots refilled in the same program ---

PRUNED = dict(env="CartPole-v1", seeds=2, total_steps=8192, progress=False, num_envs=4,
              num_steps=64, eval_episodes=2, max_chunk_updates=4)  # 8 chunks of 4 updates
RULE = "rung=1,eta=2,window=4"


def _tree_rows(tree, members) -> list:
    """Each leaf's rows ``members`` as host arrays (typed keys as their data)."""
    keyed = lambda x: jax.random.key_data(x) if jax.dtypes.issubdtype(
        x.dtype, jax.dtypes.prng_key) else x
    return [np.asarray(keyed(x))[members] for x in jax.tree.leaves(tree)]


def _assert_same(a, b) -> None:
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)


def test_a_refilled_slot_starts_afresh_and_the_others_go_on_bit_for_bit():
    configs = [{"learning_rate": lr, "num_envs": 4, "num_steps": 64} for lr in (1e-3, 3e-4)]
    spec = group_spec("ppo", "CartPole-v1", 2, 2048, configs, eval_episodes=0)
    r = resolve_group(spec)
    placed = place_members(spec, r)
    progs, _ = build_programs(spec, r, placed, 2)
    new_keys = jax.random.split(jax.random.key(7), 2)
    new_hp = r.config.replace(learning_rate=5e-3, ent_coef=0.02).hparams()
    # the refilled slot's own start: what the init program gives its keys and hyperparameters
    keys = jnp.concatenate([new_keys, placed.keys[2:]])
    hps = [new_hp, new_hp, r.configs[1].hparams(), r.configs[1].hparams()]
    hparams = jax.tree.map(lambda *xs: jnp.stack(xs), *hps)
    fresh = progs.init_fn(keys, hparams)
    fresh_state = jax.device_get(fresh)
    alone, alone_metrics = progs.chunk_fn(fresh)  # the new trial's first chunk from its start
    # the same program without a refill, and with slot 0 refilled after its first chunk
    plain, _ = progs.chunk_fn(progs.init_fn(placed.keys, placed.hparams))
    plain, plain_metrics = progs.chunk_fn(plain)
    state, _ = progs.chunk_fn(progs.init_fn(placed.keys, placed.hparams))
    before = jax.device_get(state)
    compiled = dict(programs.COMPILED)
    state = apply_refill(state, np.array([0, 1]), new_keys, [new_hp, new_hp], placed, r)
    after = jax.device_get(state)
    _assert_same(_tree_rows(after, [0, 1]), _tree_rows(fresh_state, [0, 1]))  # all of it fresh
    _assert_same(_tree_rows(after, [2, 3]), _tree_rows(before, [2, 3]))
    np.testing.assert_allclose(np.asarray(after.hparams.learning_rate), [5e-3, 5e-3, 3e-4, 3e-4],
                               rtol=1e-6)
    state, metrics = progs.chunk_fn(state)
    for name in metrics:  # the others go on as if nothing happened; the refilled as if alone
        np.testing.assert_array_equal(np.asarray(metrics[name])[2:],
                                      np.asarray(plain_metrics[name])[2:], err_msg=name)
        np.testing.assert_array_equal(np.asarray(metrics[name])[:2],
                                      np.asarray(alone_metrics[name])[:2], err_msg=name)
    _assert_same(_tree_rows(state, [2, 3]), _tree_rows(plain, [2, 3]))
    _assert_same(_tree_rows(state, [0, 1]), _tree_rows(alone, [0, 1]))
    again = apply_refill(state, np.array([2, 3]), new_keys, [new_hp, new_hp], placed, r)
    jax.block_until_ready(again)
    assert programs.COMPILED["refill"] - compiled.get("refill", 0) <= 1
    assert {k: v for k, v in programs.COMPILED.items() if k != "refill"} == \
           {k: v for k, v in compiled.items() if k != "refill"}  # no chunk or init recompiled


def _pruned_rows(result) -> list[tuple]:
    table = result.table.sort_values("trial")
    values = [None if np.isnan(v) else v for v in table.value]  # a pruned trial's: NaN
    return list(zip(table.trial, table.learning_rate, table.ent_coef, values, table.state,
                    table.slot, table.budget))


def test_a_pruned_search_refills_slots_in_one_program(tmp_path):
    compiled = dict(programs.COMPILED)
    result = jaxrl.search("ppo", space=SPACE, trials=6, batch=3, runs_dir=tmp_path, prune=RULE,
                          **PRUNED)
    assert programs.COMPILED["chunk"] - compiled.get("chunk", 0) <= 1
    assert programs.COMPILED["refill"] - compiled.get("refill", 0) <= 1
    table = result.table
    assert len(table) == 6 and set(table.state) == {"PRUNED", "COMPLETE"}
    assert table.value.notna().sum() == (table.state == "COMPLETE").sum() == 3  # a slot each
    assert result.best_value == table.value.max()
    frozen = {t.number: t for t in result.study.get_trials()}
    for t in table.itertuples():  # every trial reported its rungs; a pruned one stopped there
        steps = sorted(frozen[t.trial].intermediate_values)
        assert steps and steps[0] == 1024
        if t.state == "PRUNED":
            assert steps[-1] == t.budget
    records = search_store.batch_records(tmp_path, result.search_id)["0"]
    for slot in range(3):  # each slot's chunks are its trials', one after another
        segs = sorted((s for s in records["segments"] if s["slot"] == slot),
                      key=lambda s: s["first_chunk"])
        assert [s["first_chunk"] for s in segs] == [0] + [s["end_chunk"] for s in segs[:-1]]
        assert segs[-1]["end_chunk"] == 8
    # against the same three first trials trained without pruning: each slot is bit for bit
    # theirs until its first refill, and a slot never refilled all the way
    first = [frozen[n] for n in records["trials"]]
    spec = group_spec("ppo", "CartPole-v1", 2, 8192, [{"num_envs": 4, "num_steps": 64,
                                                       **t.params} for t in first],
                      eval_episodes=2, max_chunk_updates=4)
    plain = run_group(spec, progress=False)
    for slot, trial in enumerate(records["trials"]):
        seg = next(s for s in records["segments"] if s["trial"] == trial)
        ours = search_store.trial_metrics(tmp_path, result.search_id, trial)
        theirs = plain.config_result(slot, "ppo", "CartPole-v1").metrics
        theirs = theirs[theirs["update"] < seg["end_chunk"] * 4]
        ours, theirs = (f.sort_values(["seed", "update"]) for f in (ours, theirs))
        assert len(ours) == len(theirs) == 2 * 4 * (seg["end_chunk"] - seg["first_chunk"])
        for name in set(theirs.columns) - {"env_steps_per_second"}:  # all but a timing
            np.testing.assert_array_equal(ours[name], theirs[name], err_msg=name)
    later = search_store.trial_metrics(tmp_path, result.search_id, 5)  # a refill's own updates
    assert later["update"].min() == 0 and later.env_steps.min() == 256


def _dies(real, when):
    """``real``, but raising KeyboardInterrupt on the call ``when(args)`` first says yes to."""
    done = []

    def dies(*args):
        if not done and when(args):
            done.append(True)
            raise KeyboardInterrupt
        return real(*args)

    return dies


@pytest.mark.parametrize("where, checkpoint_every", [("rung", None), ("rung", 1), ("end", None)])
def test_a_killed_pruned_search_resumes_to_the_same_trials(tmp_path, monkeypatch, capsys, where,
                                                             checkpoint_every):
    args = dict(space=SPACE, trials=6, batch=3, prune=RULE, checkpoint_every=checkpoint_every,
                **PRUNED)
    whole = jaxrl.search("ppo", runs_dir=tmp_path / "a", **args)
    if where == "rung":  # at its second rung: trials reported, a loser told, a new one asked
        target, name = search_store, "record_rungs"
        when = lambda a: a[3] == 1 and a[4]["pruned"]
    else:  # trained to its end, before its trials were told
        target, name, when = pruned, "tell_finals", lambda a: True
    monkeypatch.setattr(target, name, _dies(getattr(target, name), when))
    with pytest.raises(KeyboardInterrupt):
        jaxrl.search("ppo", runs_dir=tmp_path / "b", **args)
    monkeypatch.undo()
    (folder,) = (tmp_path / "b" / "searches").iterdir()
    resumed = jaxrl.search("ppo", runs_dir=tmp_path / "b", resume=folder.name, **args)
    assert _pruned_rows(resumed) == _pruned_rows(whole)
    assert (search_store.rung_records(tmp_path / "b", folder.name)
            == search_store.rung_records(tmp_path / "a", whole.search_id))
    assert len(resumed.study.get_trials()) == 6  # the trial asked before the kill, not again
    reopened = {bool(RunStore(tmp_path / "b").load(r).get("resumed"))
                for r in resumed.table.run_id}
    assert reopened == {where == "rung"}  # trained to its end: not trained again
    if checkpoint_every:  # a slot's run is the search's to resume, not `jaxrl resume`'s
        assert main(["resume", resumed.table.run_id.iloc[0], "--runs-dir",
                     str(tmp_path / "b")]) == 2
        assert "is a slot of pruned search" in capsys.readouterr().err


@pytest.mark.parametrize("prune, extra, fragment", [
    ("eta=1", {}, "prune eta must be a whole number >= 2, got 1"),
    ({"rung": 0}, {}, "prune rung must be a whole number >= 1"),
    ("speed=2", {}, "prune: unknown setting 'speed'"),
    ("rung", {}, "prune expects key=value settings"),
    (2.5, {}, "prune must be true, a mapping"),
    ("rung=8", {}, "first rung is after 8 chunks, but the program has 8 chunk(s)"),
    (True, {"trials": 3}, "prune needs more trials than a batch's slots"),
    (True, {"space": {"num_envs": "int(4, 8)"}}, "num_envs is static"),
])
def test_a_bad_prune_setting_is_one_line(tmp_path, prune, extra, fragment):
    args = {"space": SPACE, "trials": 6, "batch": 3, **PRUNED, **extra}
    with pytest.raises(ConfigError) as err:
        jaxrl.search("ppo", runs_dir=tmp_path, prune=prune, **args)
    assert fragment in str(err.value) and "\n" not in str(err.value)
    assert not (tmp_path / "searches").exists()  # refused before anything is stored


def test_the_cli_prunes_and_refuses_a_bad_rule(tmp_path, capsys):
    base = ["search", "ppo", "--param", "learning_rate=loguniform(1e-4,1e-2)", "--trials", "3",
            "--batch", "2", "--seeds", "2", "--total-steps", "2048", "--set", "num_envs=4",
            "--set", "num_steps=64", "--max-chunk-updates", "2", "--eval-episodes", "2",
            "--runs-dir", str(tmp_path), "--no-progress"]
    assert main([*base, "--prune", "eta=2,window=2"]) == 0
    out = capsys.readouterr().out
    assert "3 trials x 2 seeds (tpe, batches of 2, pruned 1)" in out
    assert main([*base, "--prune", "eta=one"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "prune eta must be a whole number, got 'one'" in lines[0]

"""`jaxrl.search`: a space parsed into Optuna's distributions (bad ones refused in one line), a
batch of trials trained as one sweep, later batches of the same shapes compiling nothing, and a
search stopped between or inside batches resumed to what an uninterrupted one finds."""

import pytest

import jaxrl
from jaxrl import algos
from jaxrl.cli import main
from jaxrl.engine import programs
from jaxrl.studies.search import runner
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

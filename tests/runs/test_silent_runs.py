"""A run that could measure nothing says so (issue 77 item 10): a budget that ends before any
training episode does, and a final evaluation whose episodes outlast its step cap, each give one
line on stderr and in report.md (episode length, envs, steps per env, what to raise), and the
figure draws what there is, with no matplotlib "No artists with labels" warning."""

import warnings

import numpy as np
import pandas as pd

from jaxrl.cli import main
from jaxrl.runs.plots import plot_runs
from jaxrl.runs.silent import (
    no_episode_line,
    run_notes,
    seeds_without_episodes,
    steps_for_one_episode,
    unfinished_eval_line,
)

# probe:truncation never terminates; a time limit of 1M: no episode ends in 4 envs x 128 steps,
# and evaluation episodes stop at jaxrl.parts.evaluate.EVAL_MAX_STEPS (100,000) unfinished
SILENT = ["train", "ppo", "--env", "probe:truncation", "--env-arg", "time_limit=1000000",
          "--seeds", "2", "--total-steps", "512", "--set", "num_envs=4", "--set", "num_steps=64",
          "--eval-episodes", "2", "--no-progress"]
TRAIN_LINE = ("jaxrl: no training episode ended: episodes last up to 1,000,000 steps (the env's "
              "time_limit) and each of the 4 envs took 128 steps; raise --total-steps (at least "
              "4,000,000 for one episode per env) or lower num_envs")
EVAL_LINE = ("jaxrl: no final evaluation episode ended: evaluation episodes stop at 100,000 steps "
             "(the cap on an evaluation episode; the env's time_limit is 1,000,000); their final "
             "eval return is n/a, not 0")


def _only_run(runs_dir):
    (folder,) = [p for p in runs_dir.iterdir() if (p / "run.json").is_file()]
    return folder


def test_a_run_whose_budget_ends_before_any_episode_says_so(tmp_path, capsys):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rc = main([*SILENT, "--runs-dir", str(tmp_path)])
    out, err = capsys.readouterr()
    assert rc == 0, err
    lines = err.strip().splitlines()
    assert [line for line in lines if "no training episode ended" in line] == [TRAIN_LINE]
    assert [line for line in lines if "no final evaluation episode" in line] == [EVAL_LINE]
    assert "no mean or IQM" in out
    report = (_only_run(tmp_path) / "report.md").read_text()
    assert TRAIN_LINE.removeprefix("jaxrl: ") in report
    assert EVAL_LINE.removeprefix("jaxrl: ") in report
    assert "per seed: n/a n/a" in report
    assert (_only_run(tmp_path) / "curves.png").stat().st_size > 1000
    assert not [w for w in caught if "No artists" in str(w.message)], \
        [str(w.message) for w in caught]


def test_a_run_whose_episodes_end_says_nothing_of_it(tmp_path, capsys):
    rc = main(["train", "ppo", "--env", "CartPole-v1", "--seeds", "2", "--total-steps", "2048",
               "--set", "num_steps=64", "--no-progress", "--runs-dir", str(tmp_path)])
    out, err = capsys.readouterr()
    assert rc == 0, err
    assert "episode ended" not in err and "no mean or IQM" not in out
    assert "**Note:**" not in (_only_run(tmp_path) / "report.md").read_text()


def _metrics(counts: dict[int, list[float]]) -> pd.DataFrame:
    rows = [{"seed": s, "update": u, "episode_count": c,
             "episode_return_mean": 1.0 if c else np.nan}
            for s, cs in counts.items() for u, c in enumerate(cs)]
    return pd.DataFrame(rows)


def test_seeds_without_episodes():
    assert seeds_without_episodes(_metrics({0: [0, 0], 1: [0, 3], 2: [0, 0]})) == [0, 2]
    assert seeds_without_episodes(_metrics({0: [1, 0]})) == []
    only_means = _metrics({0: [0, 0], 1: [2, 0]}).drop(columns="episode_count")
    assert seeds_without_episodes(only_means) == [0]
    assert seeds_without_episodes(pd.DataFrame({"seed": [0], "bc_nll": [1.0]})) == []  # BC


def test_the_line_names_the_seeds_when_only_some_ended_none():
    line = no_episode_line([1], 2, 199_680, 256, 7_680, ("episode_length", 1000))
    assert line == ("no training episode ended on seed 1 of 2: episodes last up to 1,000 steps "
                    "(the env's episode_length) and each of the 256 envs took 780 steps; raise "
                    "--total-steps (at least 261,120 for one episode per env) or lower num_envs")
    assert no_episode_line([0, 2], 4, 100, 4, 4, None).startswith(
        "no training episode ended on seeds 0 and 2 of 4: each of the 4 envs took 25 steps and "
        "the env names no time limit")
    assert no_episode_line([], 2, 100, 4, 4, None) is None


def test_the_budget_for_one_episode_is_whole_updates():
    # BallInCup's first command on a CPU: 1,000-step episodes, Playground's PPO (256 x 30)
    assert steps_for_one_episode(1000, 256, 256 * 30) == 34 * 7_680
    assert steps_for_one_episode(1000, 2048, 2048) == 2_048_000
    # 33 updates give each env 990 steps, one short of an episode; 34 give 1,020
    assert 33 * 30 < 1000 <= 34 * 30


def test_evaluation_lines():
    assert unfinished_eval_line([1.0, 2.0], 2, 500, ("max_steps_in_episode", 500)) is None
    assert unfinished_eval_line([1.0, np.nan], 2, 10_000, None) == (
        "no final evaluation episode ended on seed 1 of 2: evaluation episodes stop at 10,000 "
        "steps (the env names no time limit); its final eval return is n/a, not 0")
    # a run that evaluated nothing (eval_episodes=0) has NaN returns but no evaluation line
    assert run_notes(_metrics({0: [1]}), [np.nan], 1, 8, 4, 4, None, None) == []


def test_an_empty_panel_has_a_note_and_no_legend_warning():
    from matplotlib.figure import Figure

    frame = _metrics({0: [0, 0], 1: [0, 0]}).assign(env_steps=lambda f: (f["update"] + 1) * 64)
    ax = Figure().subplots()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib's "No artists with labels" is a UserWarning
        plot_runs({"ppo": frame}, "episode_return_mean", "training", ax=ax,
                  empty="no training episode ended within the budget")
    assert ax.get_legend() is None and not ax.lines
    assert [t.get_text() for t in ax.texts] == ["no training episode ended within the budget"]

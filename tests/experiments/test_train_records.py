"""The training runs made again into files (benchmarks/experiments-cpu/train): each file is the
run its record names, and the notes' table is the one `experiments/train_records.py table`
renders from the files."""

import json
import shlex
from pathlib import Path

import numpy as np
import pytest

from jaxrl import stats
from tests.experiments.reports import flat_notes
from tests.experiments.scripts import load as load_script

ROOT = Path(__file__).resolve().parents[2]
HERE = ROOT / "benchmarks/experiments-cpu/train"
NOTES = flat_notes(ROOT / "benchmarks/experiments-cpu")
records = load_script("train_records")


def option(args: str, name: str) -> str:
    words = shlex.split(args)
    return words[words.index(name) + 1]


def same(setting, written: str) -> bool:
    """A config's value is the one ``--set`` wrote (``false``, ``7e-4``, ``pytorch``)."""
    if isinstance(setting, bool | str):
        return str(setting).lower() == written.lower()
    return float(setting) == float(written)


@pytest.mark.parametrize("record", [r for r in records.RECORDS if not r.expect_error],
                         ids=lambda r: r.name)
def test_each_file_is_the_run_its_record_names(record):
    d = json.loads((HERE / f"{record.name}.json").read_text())
    about = d["about"]
    assert about["git_dirty"] is False and about["device"]["platform"] == "cpu"
    assert record.args in about["command"]  # the CLI wrote the file as it ran
    assert shlex.split(record.args)[1] == d["algo"] and option(record.args, "--env") == d["env"]
    assert d["seeds"] == int(option(record.args, "--seeds"))
    for run in d.get("configs", [d]):
        assert len(run["final_eval_return"]) == d["seeds"]
    if "total_steps_per_seed" in d:
        budget = int(option(record.args, "--total-steps"))
        assert 0.98 * budget <= d["total_steps_per_seed"] <= budget
    words = shlex.split(record.args)
    for key, value in (words[i + 1].split("=", 1) for i, w in enumerate(words) if w == "--set"):
        assert same(d["config"][key], value), key


def test_the_notes_table_is_rendered_from_the_files():
    for row in records.table(HERE).splitlines()[2:]:
        assert " ".join(row.split()) in NOTES, row


def test_the_sweep_is_one_program_and_one_compile():
    d = json.loads((HERE / "ppo_cartpole_lr_sweep.json").read_text())
    assert len(d["configs"]) == 3 and len(d["groups"]) == 1
    compiles = sorted(c["compile_seconds"] for c in d["configs"])
    assert compiles[0] == compiles[-1]  # the one program's compile, shared by its configs


def test_the_memory_plan_refuses_before_compiling():
    d = json.loads((HERE / "sac_memory_refused.json").read_text())
    assert d["returncode"] == 2 and len(d["message"]) == 1  # one line, no trace
    (line,) = d["message"]
    assert line.startswith("jaxrl: memory plan: 10000 seeds of sac need") and "seeds fit" in line
    assert d["seconds"] < 30  # JAX's import and the plan: nothing was compiled
    assert f"at most {line.rsplit('at most ', 1)[1]}" in NOTES


def final(name: str) -> np.ndarray:
    return np.asarray(json.loads((HERE / f"{name}.json").read_text())["final_eval_return"])


def quoted(*parts: str) -> None:
    for part in parts:
        assert " ".join(part.split()) in NOTES, part


def test_what_the_notes_say_of_the_records():
    for name in ("acer_cartpole", "a2c_cartpole", "trpo_cartpole", "vpg_cartpole"):
        assert len(final(name)) == 16 and (final(name) == 500).all()
    vpg = final("vpg_pendulum")
    quoted(f"its seeds from {vpg.max():.1f} to {vpg.min():.1f}")
    defaults, zoo, zoo2 = final("a2c_pendulum"), final("a2c_pendulum_zoo"), final(
        "a2c_pendulum_zoo_logstd-2")
    c = stats.compare(defaults, zoo)
    quoted(f"Welch's t-test p {c['welch_p']:.3f}, probability that the defaults beat the zoo's "
           f"settings {c['prob_improvement']:.3f}",
           f"every seed there between {zoo2.min():.1f} and {zoo2.max():.1f}")
    assert c["welch_p"] < 0.05 and stats.iqm(zoo2) < stats.iqm(zoo) < stats.iqm(defaults)
    once, refit = final("pqn_cartpole_replay0"), final("pqn_cartpole_replay2")
    assert (once == 500).all() and (refit == 500).sum() == 7
    quoted(f"7 of 8 (one at {refit[refit < 500][0]:.1f})")
    r0, r2 = (json.loads((HERE / f"pqn_cartpole_replay{k}.json").read_text()) for k in (0, 2))
    quoted(f"at {r2['run_seconds'] / r0['run_seconds']:.1f} times the training seconds")
    sweep = json.loads((HERE / "ppo_cartpole_lr_sweep.json").read_text())
    quoted(f"compiled once ({sweep['configs'][0]['compile_seconds']:.1f} s")
    by_lr = {c["overrides"]["learning_rate"]: np.asarray(c["final_eval_return"])
             for c in sweep["configs"]}
    assert (by_lr["3e-4"] == 500).all() and (by_lr["1e-3"] == 500).all()
    quoted(f"1e-4 at IQM {stats.iqm(by_lr['1e-4']):.1f}")
    refusal = json.loads((HERE / "sac_memory_refused.json").read_text())
    quoted(f"{refusal['seconds']:.1f} s after the call")


def test_the_classic_notes_and_suite_quote_the_zoo_records():
    zoo, defaults, zoo2 = (stats.iqm(final(n)) for n in ("a2c_pendulum_zoo", "a2c_pendulum",
                                                         "a2c_pendulum_zoo_logstd-2"))
    notes = flat_notes(ROOT / "benchmarks/classic-cpu")
    suite = (ROOT / "experiments/benchmarks/classic.yaml").read_text()
    for text in (notes, suite):
        assert f"IQM {zoo:.1f} at an initial log-std of 0" in text
        assert f"{zoo2:.1f} at its own -2" in text and f"{defaults:.1f}" in text

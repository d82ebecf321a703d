"""What an adaptive comparison or entry is given: `jaxrl compare --adaptive` refuses two runs of
different envs (one line naming both) and says when their budgets differ; `jaxrl bench --seeds`
on an entry with ``seeds: adaptive`` is held to the suite file's own rule (batch >= 2); a stale
report names the suite file it was checked against. No training (scores are drawn)."""

import numpy as np
import pytest
import yaml

from jaxrl.studies import adaptive
from jaxrl.studies.bench import report as bench_report
from jaxrl.studies.bench import runner as benchmod
from jaxrl.studies.bench.markdown import suite_file_shown
from jaxrl.studies.bench.suite import SuiteError, load_suite
from tests.runs.test_faults import cli, one_line_error
from tests.studies.bench.test_verdicts import synthetic_store

SPECS = {"a": {"algo": "ppo", "env": "CartPole-v1", "total_steps": 1000},
         "b": {"algo": "dqn", "env": "CartPole-v1", "total_steps": 1000}}


class _Pool:
    """`adaptive.SeedPool` over ``SPECS``, scores drawn instead of trained."""

    def __init__(self, run_id, store, measure, batch, progress):
        self.spec, self.run_ids = SPECS[run_id], [run_id]
        self.rng = np.random.default_rng(len(run_id))

    def batch(self, k):
        return self.rng.normal(0.0, 1.0, 5)


@pytest.fixture
def pools(monkeypatch):
    monkeypatch.setattr(adaptive, "SeedPool", _Pool)
    monkeypatch.setitem(SPECS, "b", dict(SPECS["b"]))
    return SPECS


def test_runs_of_different_envs_are_refused_naming_both(pools, capsys, tmp_path):
    """Before: the two runs were compared, and called "equal" without a word."""
    pools["b"]["env"] = "Acrobot-v1"
    rc, out, err = cli(capsys, "compare", "a", "b", "--adaptive", "--runs-dir", tmp_path)
    one_line_error(rc, err, "run a is on CartPole-v1 and run b on Acrobot-v1")
    assert out == ""
    pools["b"].update(env="CartPole-v1", env_kwargs={"max_steps": 3})  # options: another env
    with pytest.raises(ValueError, match=r'run b on CartPole-v1 \{"max_steps": 3\}'):
        adaptive.compare_runs("a", "b", None)


def test_runs_of_one_env_are_compared_and_different_budgets_are_said(pools, capsys, tmp_path):
    pools["b"]["env"] = "gymnax:CartPole-v1"  # the same env by its other name
    rc, out, _ = cli(capsys, "compare", "a", "b", "--adaptive", "--runs-dir", tmp_path)
    assert rc == 0 and "a vs b: " in out and "note:" not in out
    pools["b"]["total_steps"] = 2000
    rc, out, _ = cli(capsys, "compare", "a", "b", "--adaptive", "--runs-dir", tmp_path)
    assert rc == 0 and ("note: the runs' budgets differ (a: 1,000 env steps per seed, b: "
                        "2,000 env steps per seed)") in out


def _adaptive_suite(tmp_path):
    path = tmp_path / "ada.yaml"
    path.write_text(yaml.safe_dump({"name": "ada", "entries": [
        {"algo": "ppo", "env": "CartPole-v1", "total_steps": 512,
         "seeds": {"adaptive": {"batch": 4, "max_batches": 2}},
         "reference": {"value": 1.0, "measure": "final_eval", "source": "none"}}]}))
    return str(path)


def test_seeds_on_an_adaptive_entry_follow_the_suite_files_rule(tmp_path, capsys):
    """Before: ``--seeds 1`` made batches of 1 seed, which the suite file itself refuses."""
    entry = load_suite(_adaptive_suite(tmp_path)).entries[0]
    assert benchmod.scaled(entry, 3, 1.0).adaptive == {"batch": 3, "max_batches": 2,
                                                       "alpha": 0.05}
    with pytest.raises(SuiteError, match=r"--seeds 1 \(the batch of ppo/CartPole-v1's seeds: "
                                         r"adaptive\): seeds.adaptive needs batch >= 2"):
        benchmod.scaled(entry, 1, 1.0)
    rc, _, err = cli(capsys, "bench", _adaptive_suite(tmp_path), "--seeds", "1",
                     "--runs-dir", tmp_path / "runs", "--no-progress")
    one_line_error(rc, err, "needs batch >= 2")
    assert not (tmp_path / "runs").exists()  # refused before the store is touched


def test_a_stale_report_names_the_suite_file_it_was_checked_against(tmp_path):
    """Before: the banner named ``experiments/benchmarks/<suite name>.yaml``, a file that does
    not exist for a suite read from a path."""
    store, path = synthetic_store(tmp_path)
    suite = yaml.safe_load(path.read_text())
    suite["entries"][0]["total_steps"] = 8192
    path.write_text(yaml.safe_dump(suite))
    report = bench_report.results(store, "synth-1")
    assert report["stale"]
    text = bench_report.markdown(report)
    assert f"its suite file** (`{path}`)" in text and "experiments/benchmarks/synth" not in text
    # a suite of the repository is named relative to it
    named = {"suite": "classic", "suite_path": str(benchmod.SUITES_DIR / "classic.yaml")}
    assert suite_file_shown(named) == "experiments/benchmarks/classic.yaml"

"""An experiment's results file names the code, libraries and device its numbers came from."""

import json
import subprocess
from types import SimpleNamespace

import numpy as np

from jaxrl.repo_data import REPO
from jaxrl.runs.provenance import measured_here, run_facts, write_results


def test_measured_here_names_this_checkouts_commit_and_the_command():
    about = measured_here(["experiments/x.py", "--seeds", "8"])
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=False)
    assert about["git_commit"] == (head.stdout.strip() if head.returncode == 0 else None)
    assert about["command"] == "experiments/x.py --seeds 8"
    assert isinstance(about["git_dirty"], bool)
    assert about["packages"]["jax"] and about["device"]["device_count"] >= 1
    assert about["date"].endswith("+00:00")


def test_run_facts_keep_the_runs_id_and_cost_and_nothing_else():
    summary = {"algo": "ppo", "env": "CartPole-v1", "seeds": 8, "total_steps_per_seed": 1000,
               "final_eval_return_mean": 1.0, "compile_seconds": 3.5,
               "compile_source": "cache", "run_seconds": 2.0, "env_steps_per_second": 4000.0,
               "devices": "2 x cpu"}
    result = SimpleNamespace(run_id="20261204-000000-ppo-x-abcdef", summary=lambda: summary,
                             run_dir=None)
    assert run_facts(result) == {
        "run_id": "20261204-000000-ppo-x-abcdef", "seeds": 8, "total_steps_per_seed": 1000,
        "compile_seconds": 3.5, "compile_source": "cache", "run_seconds": 2.0,
        "env_steps_per_second": 4000.0, "devices": "2 x cpu"}


def test_run_facts_take_a_stored_runs_commit_from_its_record(tmp_path):
    """The commit a stored run started from, not the one a script ends on."""
    (tmp_path / "run.json").write_text(json.dumps({"git_commit": "abc123", "git_dirty": True}))
    (tmp_path / "code.diff").write_text("diff --git a/README.md b/README.md\n+x\n"
                                        "diff --git a/jaxrl/a.py b/jaxrl/a.py\n-y\n")
    summary = dict.fromkeys(("seeds", "total_steps_per_seed", "compile_seconds",
                             "compile_source", "run_seconds", "env_steps_per_second",
                             "devices"), 0)
    result = SimpleNamespace(run_id="r", summary=lambda: summary, run_dir=str(tmp_path))
    facts = run_facts(result)
    assert facts["git_commit"] == "abc123" and facts["git_dirty"] is True
    assert facts["code_diff_files"] == ["README.md", "jaxrl/a.py"]


def test_write_results_puts_where_it_ran_first_and_writes_numpy_as_numbers(tmp_path):
    path = tmp_path / "results.json"
    write_results(path, {"git_commit": "abc"}, results={"x": np.float32(1.5)})
    assert json.loads(path.read_text()) == {"about": {"git_commit": "abc"},
                                            "results": {"x": 1.5}}
    write_results(None, {}, results={})  # no --json: nothing written, no error

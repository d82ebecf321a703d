"""An experiment's results file names the code, libraries and device its numbers came from."""

import subprocess
from types import SimpleNamespace

from jaxrl.repo_data import REPO
from jaxrl.runs.provenance import measured_here, run_facts


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
    result = SimpleNamespace(run_id="20261204-000000-ppo-x-abcdef", summary=lambda: summary)
    assert run_facts(result) == {
        "run_id": "20261204-000000-ppo-x-abcdef", "seeds": 8, "total_steps_per_seed": 1000,
        "compile_seconds": 3.5, "compile_source": "cache", "run_seconds": 2.0,
        "env_steps_per_second": 4000.0, "devices": "2 x cpu"}

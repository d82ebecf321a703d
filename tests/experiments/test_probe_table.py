"""experiments/probe_table.py: each probe set beside the baseline by the settings it changed,
its late entropy and curve read from its metrics, and an unfinished run refused."""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.experiments.scripts import load

probe_table = load("probe_table")


def _run(root: Path, name: str, config: dict, status: str = "finished", algo: str = "a2c"
         ) -> Path:
    """A stored run of 2 seeds x 200 updates whose entropy is the update's index / 1000."""
    run = root / name
    (run / "metrics").mkdir(parents=True)
    frame = pd.DataFrame([{"run_id": name, "seed": s, "update": u, "env_steps": 10.0 * (u + 1),
                           "entropy": u / 1000, "episode_return_mean": float(s + u)}
                          for s in range(2) for u in range(200)])
    frame.to_parquet(run / "metrics/chunk-00000.parquet")
    meta = {"run_id": name, "algo": algo, "env": "probe", "status": status, "config": config,
            "group": {"spec": {"env_kwargs": {}}}, "command_line": "jaxrl train", "seeds": 2,
            "total_steps_per_seed": 2000, "train_return_last100": [1.0, 3.0],
            "final_eval_return": [2.0, 2.0], "run_seconds": 1.0, "env_steps_per_second": 4e3,
            "compile_seconds": 0.5, "git_commit": "abc", "versions": {}, "devices": "1 x cpu"}
    (run / "run.json").write_text(json.dumps(meta))
    return run


def test_each_probe_names_what_it_changed_and_its_late_entropy(tmp_path):
    base = _run(tmp_path, "base", {"lr": 1.0, "n": 5, "total_steps": 2000})
    probe = _run(tmp_path, "probe", {"lr": 2.0, "n": 5, "total_steps": 1000}, algo="ppo")
    out = tmp_path / "probes.json"
    probe_table.main([str(base), str(probe), "--out", str(out), "--late", "100"])
    rows = json.loads(out.read_text())["rows"]
    assert rows[0]["changed"] == {} and rows[1]["changed"] == {"algo": "ppo", "lr": 2.0}
    assert rows[0]["entropy_last100"] == pytest.approx([np.mean(np.arange(100, 200)) / 1000] * 2)
    assert rows[0]["updates"] == 200 and rows[0]["mean"] == 2.0
    curve = rows[0]["curve"]
    assert len(curve["env_steps"]) == 10 and curve["env_steps"][-1] == 2000
    assert curve["iqm"][-1] == pytest.approx(199.5)  # seeds 0 and 1 at the last update


def test_an_unfinished_run_is_refused_by_name(tmp_path):
    base = _run(tmp_path, "base", {"lr": 1.0})
    running = _run(tmp_path, "half", {"lr": 2.0}, status="running")
    with pytest.raises(SystemExit, match="half: status 'running', not finished"):
        probe_table.main([str(base), str(running), "--out", str(tmp_path / "x.json")])

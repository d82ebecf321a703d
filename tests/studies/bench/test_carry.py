"""A bench killed on one machine goes on from its committed progress folder on another
(`jaxrl bench --resume-from PATH`, `jaxrl.studies.bench.carry`): the killed process is a real
``jaxrl bench`` SIGKILLed after a checkpoint; a fresh run store (the other machine) carries the
folder in, resumes the entry and ends where an uninterrupted bench ends, bit for bit."""

import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd

from jaxrl.runs.store import RunStore
from jaxrl.studies.bench import carry
from jaxrl.studies.bench.runner import bench

SUITE = """name: carried
seeds: 2
eval_episodes: 2
entries:
  - algo: ppo
    env: CartPole-v1
    total_steps: 512
    config: {num_envs: 4, num_steps: 16, hidden: [16, 16], update_epochs: 2,
             num_minibatches: 2, max_chunk_updates: 2}
"""  # 8 updates of 64 steps: 4 chunks of 2


def metrics_of(runs_dir, run_id):
    folder = runs_dir / run_id / "metrics"
    frame = pd.concat([pd.read_parquet(p) for p in sorted(folder.glob("chunk-*.parquet"))])
    return frame.sort_values(["seed", "update"]).reset_index(drop=True)


def the_run(runs_dir):
    (run_id,) = [p.name for p in RunStore(runs_dir).run_dirs()]
    return run_id, RunStore(runs_dir).load(run_id)


def test_a_killed_bench_resumes_on_another_machine_from_its_progress_folder(tmp_path):
    suite = tmp_path / "carried.yaml"
    suite.write_text(SUITE)
    progress = tmp_path / "repo" / "progress"
    first = tmp_path / "machine-1"
    cmd = [sys.executable, "-m", "jaxrl.cli.faults", "2", "bench", str(suite),
           "--checkpoint-every", "1", "--resume-from", str(progress), "--runs-dir", str(first),
           "--no-progress"]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=600,
                          env={**os.environ, "JAXRL_PROGRESS_EVERY": "0"})
    assert proc.returncode == -9, proc.stderr[-2000:]  # killed after chunk 2's checkpoint
    saved = json.loads((progress / carry.MANIFEST).read_text())
    (line,) = saved["runs"]
    # the mirror saved after checkpoint 1; the kill came after checkpoint 2, before its save
    assert line["status"] == "interrupted" and line["checkpoint_step"] == 1
    assert 0 < line["checkpoint_bytes"] < line["bytes"]

    second = tmp_path / "machine-2"  # a fresh clone: only the progress folder came along
    resumed = bench(str(suite), runs_dir=str(second), progress=False, checkpoint_every=1,
                    resume_from=str(progress))
    assert resumed.ran == ["ppo/CartPole-v1"] and not resumed.failed
    run_id, meta = the_run(second)
    assert run_id == line["run_id"] and meta["status"] == "finished"
    assert len(meta["resumed"]) == 1

    straight = tmp_path / "machine-3"
    bench(str(suite), runs_dir=str(straight), progress=False)
    straight_id, straight_meta = the_run(straight)
    got, want = metrics_of(second, run_id), metrics_of(straight, straight_id)
    assert len(got) == len(want) == 2 * 8
    for column in ("env_steps", "policy_loss", "value_loss", "episode_return_mean"):
        np.testing.assert_array_equal(got[column], want[column], err_msg=column)
    assert meta["final_eval_return"] == straight_meta["final_eval_return"]

    done = json.loads((progress / carry.MANIFEST).read_text())
    (line,) = done["runs"]
    assert line["status"] == "finished" and line["checkpoint_bytes"] == 0
    assert not (progress / run_id / "checkpoints").exists()


def test_no_progress_folder_yet_is_nothing_to_carry(tmp_path):
    assert carry.load(tmp_path / "none", RunStore(tmp_path / "runs")) == []


def test_resume_from_without_checkpoints_is_one_line(tmp_path, capsys):
    from jaxrl.cli import main

    rc = main(["bench", "classic", "--only", "ppo/CartPole-v1", "--resume-from",
               str(tmp_path / "p"), "--runs-dir", str(tmp_path / "runs")])
    err = capsys.readouterr().err
    assert rc != 0 and "--resume-from needs --checkpoint-every" in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "runs").exists()


def test_a_save_keeps_the_runs_of_the_folder_it_does_not_count(tmp_path):
    """A bench whose id changed (a suite edited, a field the configs gained) saves its progress
    beside what the folder held: another bench's run is kept as it was, never dropped."""
    suite = tmp_path / "carried.yaml"
    suite.write_text(SUITE)
    progress, runs = tmp_path / "progress", tmp_path / "runs"
    other = progress / "20260101-000000-other-run"
    other.mkdir(parents=True)
    (other / "run.json").write_text(json.dumps({
        "run_id": other.name, "status": "interrupted", "algo": "dqn", "env": "CartPole-v1",
        "seeds": 2, "total_steps_per_seed": 1000, "config": {}, "bench_id": "other-0"}))
    (other / "metrics").mkdir()
    (other / "metrics" / "chunk-00000.parquet").write_bytes(b"kept bytes")
    (progress / carry.MANIFEST).write_text(json.dumps({"bench_id": "other-0", "runs": [
        {"run_id": other.name, "entry": "dqn/x", "status": "interrupted",
         "checkpoint_step": 3}]}))
    result = bench(str(suite), runs_dir=str(runs), progress=False, checkpoint_every=2,
                   resume_from=str(progress))
    saved = json.loads((progress / carry.MANIFEST).read_text())
    assert saved["bench_id"] == result.bench_id
    lines = {line["run_id"]: line for line in saved["runs"]}
    assert lines[other.name]["checkpoint_step"] == 3 and "kept" in lines[other.name]
    assert (other / "metrics" / "chunk-00000.parquet").read_bytes() == b"kept bytes"
    (mine,) = [r for r in lines if r != other.name]
    assert lines[mine]["status"] == "finished" and "kept" not in lines[mine]

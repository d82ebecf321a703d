"""``jaxrl runs progress``: a run's standing read from its folder (jaxrl.runs.progress)."""

import datetime
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from jaxrl.cli import main
from jaxrl.measures import train_return_last100
from jaxrl.runs import query
from jaxrl.runs.checkpoint_steps import complete_steps
from jaxrl.runs.integrity import StoreWarning
from jaxrl.runs.progress import format_progress, read_progress, running
from jaxrl.runs.store import RunStore

SEEDS, K, BATCH = 2, 4, 256  # 2 seeds, 4 updates a chunk, 256 env steps an update


def _chunk(index: int, rate: float) -> dict:
    """One chunk's metrics ``{name: [SEEDS, K]}``: an episode ends in every other update, with
    a return that grows with the update and differs by seed."""
    updates = np.arange(index * K, (index + 1) * K)
    ended = (updates % 2 == 1).astype(float)
    returns = np.where(ended > 0, updates * 10.0, np.nan)
    return {"env_steps": np.tile((updates + 1.0) * BATCH, (SEEDS, 1)),
            "env_steps_per_second": np.full((SEEDS, K), rate),
            "episode_count": np.tile(ended * 3, (SEEDS, 1)),
            "episode_return_mean": np.stack([returns, returns + 1.0])}


def _checkpoint(folder, step: int, complete: bool) -> None:
    step_dir = folder / str(step)
    (step_dir / "manifest").mkdir(parents=True)
    if complete:  # orbax writes this file last, when the step is finalized
        (step_dir / "_CHECKPOINT_METADATA").write_text("{}")


@pytest.fixture
def run(tmp_path):
    """A run of 2 seeds and 3,072 env steps a seed, 2 chunks written (2,048 steps) at 100 and
    then 400 env-steps/s, the newest written 1 s before ``NOW``, a complete checkpoint after
    chunk 1 and a cut-short one after chunk 2."""
    store = RunStore(tmp_path / "runs")
    run = store.new_run("ppo", "CartPole-v1", {}, seeds=SEEDS, total_steps=3 * K * BATCH,
                        command=["jaxrl", "train"])
    for index, rate in enumerate((100.0, 400.0)):
        run.write_chunk(index, _chunk(index, rate), first_update=index * K)
    checkpoints = run.folder / "checkpoints"
    _checkpoint(checkpoints, 1, complete=True)
    _checkpoint(checkpoints, 2, complete=False)
    run.meta["group"] = {"runs": [run.run_id], "checkpoint_dir": f"{run.run_id}/checkpoints"}
    run.save_meta()
    newest = run.folder / "metrics" / "chunk-00001.parquet"
    os.utime(newest, (1_000_000.0, 1_000_000.0))
    return store, run.run_id


NOW = 1_000_001.0


def test_steps_rate_time_left_checkpoint_and_returns_are_the_folders(run):
    store, run_id = run
    p = read_progress(run_id, store, now=NOW)
    assert (p.status, p.seeds, p.members, p.chunks) == ("running", SEEDS, SEEDS, 2)
    assert (p.env_steps, p.total_steps, p.fraction) == (2 * K * BATCH, 3 * K * BATCH, 2 / 3)
    assert p.steps_per_second == 400.0 and p.seconds_since_chunk == 1.0
    # the last chunk's 1,024 steps a seed x 2 seeds at 400/s, less the second gone since
    assert p.seconds_left == pytest.approx(K * BATCH * SEEDS / 400.0 - 1.0)
    assert p.checkpoint_chunks == 1  # the cut-short save after chunk 2 is not one
    assert (p.return_update, p.return_env_steps) == (7, 8 * BATCH)
    expected = train_return_last100(query.load_metrics(run_id, store), SEEDS)
    assert np.array_equal(p.train_last100, expected)
    # 3 episodes an ended update, 4 such updates: all 12 averaged, seed 1 one above seed 0
    assert p.train_last100 == pytest.approx([40.0, 41.0])


def test_the_printed_lines(run):
    store, run_id = run
    text = format_progress(read_progress(run_id, store, now=NOW))
    assert text.splitlines()[0] == f"{run_id}: ppo on CartPole-v1, 2 seeds, running"
    assert "env steps a seed: 2,048 of 3,072 (67%), 2 chunks, the newest written 1 s ago" in text
    assert "400 env-steps/s over the newest chunk (2 members); about 4 s to go" in text
    assert "newest complete checkpoint: after chunk 1" in text
    assert ("mean of each seed's last 100 episodes (up to update 7, 2,048 env steps): "
            "40.0, 41.0; mean 40.5") in text


def test_a_dead_runs_process_reads_interrupted_with_no_time_left(run):
    store, run_id = run
    path = store.root / run_id / "run.json"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    meta = json.loads(path.read_text())
    path.write_text(json.dumps({**meta, "pid": int(dead.stdout), "pid_started": None}))
    p = read_progress(run_id, store, now=NOW)
    assert p.status == "interrupted" and p.seconds_left is None
    assert "to go" not in format_progress(p)


def test_a_run_with_no_chunk_yet(tmp_path):
    store = RunStore(tmp_path / "runs")
    run = store.new_run("dqn", "CartPole-v1", {}, seeds=4, total_steps=1000, command=["x"])
    text = format_progress(read_progress(run.run_id, store))
    assert text.endswith("no chunk written yet (compiling, or it never started)")


def test_complete_steps_lists_only_finalized_numbered_steps(tmp_path):
    _checkpoint(tmp_path, 3, complete=True)
    _checkpoint(tmp_path, 10, complete=True)
    _checkpoint(tmp_path, 11, complete=False)
    (tmp_path / "12.orbax-checkpoint-tmp-1").mkdir()
    assert complete_steps(tmp_path) == [3, 10]
    assert complete_steps(tmp_path / "missing") == []


def test_cli_prints_each_run_and_names_an_unknown_one(run, capsys):
    store, run_id = run
    assert main(["runs", "--runs-dir", str(store.root), "progress", run_id]) == 0
    assert "newest complete checkpoint: after chunk 1" in capsys.readouterr().out
    assert main(["runs", "--runs-dir", str(store.root), "progress", run_id,
                 "20990101-000000-ppo-CartPole-v1-abcdef"]) != 0
    captured = capsys.readouterr()
    assert f"{run_id}: ppo on CartPole-v1" in captured.out
    assert "no run '20990101-000000-ppo-CartPole-v1-abcdef'" in captured.err


def test_with_no_run_id_it_shows_the_running_runs_and_skips_a_damaged_one(run, capsys):
    store, run_id = run
    done = store.new_run("dqn", "CartPole-v1", {}, seeds=1, total_steps=10, command=["x"])
    done.finish("finished")
    damaged = store.new_run("sac", "Pendulum-v1", {}, seeds=1, total_steps=10, command=["x"])
    (damaged.folder / "run.json").write_text("{not json")
    with pytest.warns(StoreWarning, match=damaged.run_id):
        assert running(store) == [run_id]
    assert main(["runs", "--runs-dir", str(store.root), "progress"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith(f"{run_id}: ppo on CartPole-v1")
    assert done.run_id not in captured.out
    assert f"skipped: run '{damaged.run_id}' is damaged" in captured.err
    empty = RunStore(store.root.parent / "empty")
    assert main(["runs", "--runs-dir", str(empty.root), "progress"]) == 0
    assert capsys.readouterr().out.startswith("no run is running in ")


def test_a_run_past_the_time_its_rate_gives_says_so(run):
    store, run_id = run
    text = format_progress(read_progress(run_id, store, now=NOW + 3600))
    assert "past the time that rate gives (a slower chunk, or a stalled run)" in text
    assert "to go" not in text


def test_a_run_with_every_update_written_says_it_is_past_training(run):
    """A budget that is not whole updates ends at the last whole one: 3,100 asked, 3,072 run."""
    store, run_id = run
    folder = store.root / run_id
    meta = json.loads((folder / "run.json").read_text())
    (folder / "run.json").write_text(json.dumps({**meta, "total_steps_per_seed": 3100}))
    store.open(run_id).write_chunk(2, _chunk(2, 400.0), first_update=2 * K)
    p = read_progress(run_id, store, now=NOW + 3600)
    assert p.steps_per_update == BATCH and p.env_steps == 3 * K * BATCH and p.trained
    text = format_progress(p)
    assert "every update done: evaluating, or writing the run's files" in text
    assert "to go" not in text and "past the time" not in text


def test_a_resumed_runs_time_left_counts_from_its_resume_not_from_its_newest_chunk(run):
    """Killed an hour after its newest chunk and resumed 1 s before now: the hour it lay dead
    does not count as training towards the rest."""
    store, run_id = run
    path = store.root / run_id / "run.json"
    meta = json.loads(path.read_text())
    resumed = datetime.datetime.fromtimestamp(NOW + 3600 - 1.0, datetime.UTC)
    path.write_text(json.dumps({**meta, "resumed": [resumed.isoformat()]}))
    p = read_progress(run_id, store, now=NOW + 3600)
    assert p.seconds_since_chunk == 3601.0 and p.seconds_past_chunk == pytest.approx(1.0)
    assert p.seconds_left == pytest.approx(K * BATCH * SEEDS / 400.0 - 1.0)
    assert "about 4 s to go" in format_progress(p)

"""Exact resume: 2K chunks straight == K chunks, SIGKILL, `jaxrl resume`, K more (bitwise, CPU).

The killed run is a real `jaxrl train` process: ``python -m jaxrl.cli.faults K`` SIGKILLs it right
after checkpoint K is on disk, with no chance to clean up."""

import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import jax
import numpy as np
import pytest

from jaxrl.api import resume, train
from jaxrl.engine.checkpoint import CheckpointWarning
from jaxrl.runs.store import RunStore

K = 2  # chunks before the kill; 2K in all

CASES = {
    "ppo": ("CartPole-v1", dict(num_envs=4, num_steps=16, hidden=(16, 16), update_epochs=2,
                                num_minibatches=2), 64),
    "sac": ("Pendulum-v1", dict(num_envs=2, buffer_size=256, batch_size=32, learning_starts=32,
                                log_interval=8, hidden=(16, 16)), 16),
}


def _cli_sets(config: dict) -> list[str]:
    out = []
    for key, value in config.items():
        value = ",".join(map(str, value)) if isinstance(value, tuple) else value
        out += ["--set", f"{key}={value}"]
    return out


def _killed_run(algo: str, runs_dir: Path) -> str:
    env, config, steps_per_update = CASES[algo]
    total = steps_per_update * 2 * (2 * K)  # 2 updates per chunk, 2K chunks
    cmd = [sys.executable, "-m", "jaxrl.cli.faults", str(K), "train", algo, "--env", env,
           "--seeds", "2",
           "--total-steps", str(total), "--max-chunk-updates", "2", "--checkpoint-every", "1",
           "--runs-dir", str(runs_dir), "--no-progress", *_cli_sets(config)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=600)
    assert proc.returncode == -9, proc.stderr[-2000:]  # SIGKILLed, not finished
    (run_id,) = [p.name for p in runs_dir.iterdir()]
    assert RunStore(runs_dir).load(run_id)["status"] == "interrupted"
    return run_id


def _straight(algo: str):
    env, config, steps_per_update = CASES[algo]
    return train(algo, store=False, env=env, seeds=2, total_steps=steps_per_update * 2 * (2 * K),
                 max_chunk_updates=2, progress=False, **config)


def _assert_bitwise(a, b):
    la, lb = jax.tree.leaves(a), jax.tree.leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def _corrupt_newest_checkpoint(runs_dir: Path, run_id: str) -> None:
    """Overwrite 16 bytes in the middle of every data file of the state item. Which OCDBT
    data file holds the leaves (and which holds only unreferenced or index bytes) varies from
    run to run, so corrupting a single file (say the largest) does not always touch data."""
    latest = runs_dir / run_id / "checkpoints" / str(K) / "state"
    data_files = [p for p in latest.rglob("*") if p.is_file() and p.parent.name == "d"]
    assert data_files, sorted(str(p) for p in latest.rglob("*"))
    for data in data_files:
        raw = bytearray(data.read_bytes())
        raw[len(raw) // 2:len(raw) // 2 + 16] = b"\xff" * 16
        data.write_bytes(bytes(raw))


@pytest.mark.parametrize("algo,corrupt", [("sac", False), ("ppo", True)])
def test_resume_after_kill_is_bitwise_exact(algo, corrupt, tmp_path):
    """SAC: the newest checkpoint resumes. PPO: the newest checkpoint is corrupted (bytes
    overwritten in a data file), so resume warns, falls back to the one before it, and replays
    the extra chunk, still bitwise exact."""
    run_id = _killed_run(algo, tmp_path / "written")
    runs_dir = tmp_path / "moved"  # a run store is relocatable: resume reads its own checkpoints
    shutil.move(tmp_path / "written", runs_dir)
    if corrupt:
        _corrupt_newest_checkpoint(runs_dir, run_id)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (resumed,) = resume(run_id, runs_dir=str(runs_dir), progress=False)
    fell_back = [w for w in caught if issubclass(w.category, CheckpointWarning)
                 and f"{K}" in str(w.message)]
    assert bool(fell_back) == corrupt, [str(w.message) for w in caught]
    straight = _straight(algo)
    _assert_bitwise(resumed.state.params, straight.state.params)
    if algo == "sac":  # the replay buffer and its indices came back too
        _assert_bitwise(resumed.state.buffer, straight.state.buffer)
    assert resumed.metrics.shape == straight.metrics.shape  # chunks before the kill included
    np.testing.assert_array_equal(resumed.metrics["env_steps"], straight.metrics["env_steps"])
    meta = RunStore(runs_dir).load(run_id)
    assert meta["status"] == "finished" and len(meta["resumed"]) == 1
    assert meta["frames_per_step"] == 1  # no frame skip (Atari's run.json says 4)


def test_resume_refuses_finished_and_unchecked_runs(tmp_path):
    from jaxrl.api import train
    from jaxrl.runs.store import StoreError

    env, config, steps_per_update = CASES["ppo"]
    plain = train("ppo", env=env, seeds=1, total_steps=steps_per_update * 2,
                  runs_dir=str(tmp_path), progress=False, **config)
    with pytest.raises(StoreError, match="not checkpointed"):
        resume(plain.run_id, runs_dir=str(tmp_path))
    done = train("ppo", env=env, seeds=1, total_steps=steps_per_update * 2, checkpoint_every=1,
                 runs_dir=str(tmp_path), progress=False, **config)
    with pytest.raises(StoreError, match="already finished"):
        resume(done.run_id, runs_dir=str(tmp_path))


def test_resume_without_any_checkpoint_warns_and_starts_over(tmp_path):
    """A run whose checkpoints are all gone restarts from update 0, saying so, and ends where
    an uninterrupted run ends."""
    import json

    from jaxrl.api import train

    env, config, steps_per_update = CASES["ppo"]
    done = train("ppo", env=env, seeds=1, total_steps=steps_per_update * 2, checkpoint_every=1,
                 max_chunk_updates=1, runs_dir=str(tmp_path), progress=False, **config)
    folder = tmp_path / done.run_id
    shutil.rmtree(folder / "checkpoints")
    meta = json.loads((folder / "run.json").read_text())
    (folder / "run.json").write_text(json.dumps({**meta, "status": "interrupted"}))
    with pytest.warns(CheckpointWarning, match="no usable checkpoint .* starts again"):
        (again,) = resume(done.run_id, runs_dir=str(tmp_path), progress=False)
    _assert_bitwise(again.state.params, done.state.params)
    assert again.metrics.shape == done.metrics.shape


def test_resume_keeps_the_chunk_length_the_run_started_with(tmp_path, monkeypatch):
    """A run resumed by a jaxrl that would chunk it otherwise (here: `chunk_length` answers 4
    where the run began in chunks of 2) goes on in its own chunks, bitwise as if never stopped;
    its checkpoints record the length."""
    import json

    import jaxrl.engine.loop as loop

    runs_dir = tmp_path / "runs"
    run_id = _killed_run("ppo", runs_dir)
    meta = runs_dir / run_id / "checkpoints" / str(K) / "meta" / "metadata"
    assert json.loads(meta.read_text())["chunk_updates"] == 2
    monkeypatch.setattr(loop, "chunk_length", lambda num_updates, max_chunk: 4)
    (resumed,) = resume(run_id, runs_dir=str(runs_dir), progress=False)
    straight = _straight("ppo")
    _assert_bitwise(resumed.state.params, straight.state.params)
    np.testing.assert_array_equal(resumed.metrics["env_steps"], straight.metrics["env_steps"])


def test_resumed_chunk_length_reads_the_written_chunks():
    from jaxrl.engine.resumption import resumed_chunk_length

    chunks = [{"env_steps": np.zeros((3, 7)), "loss": np.zeros((3, 7))}]
    assert resumed_chunk_length(chunks, 50) == 7
    assert resumed_chunk_length([], 50) == 50


def test_run_seconds_count_a_checkpoints_blocking_save_once(tmp_path, monkeypatch):
    """A chunk's run-time window runs to its metrics on the host, and the next chunk's from
    there: a checkpoint's copy and save fall inside one of them, and are not added again. A
    save made to block 1 s in each of four chunks adds 4 s, not 7."""
    import time

    from jaxrl.engine.checkpoint import Checkpointer

    save = Checkpointer.save

    def slow_save(self, step, state, meta):
        time.sleep(1.0)
        return save(self, step, state, meta)

    monkeypatch.setattr(Checkpointer, "save", slow_save)
    env, config, steps_per_update = CASES["ppo"]
    start = time.perf_counter()
    done = train("ppo", env=env, seeds=1, total_steps=steps_per_update * 4, checkpoint_every=1,
                 max_chunk_updates=1, runs_dir=str(tmp_path), progress=False, **config)
    wall = time.perf_counter() - start
    assert done.run_seconds >= 4.0  # the four blocking saves are counted ...
    # ... once: the tiny chunks and evaluation take well under 2 s (counting each save twice,
    # as a window and on its own, gave 7.7 s here where once gives 4.5 s)
    assert done.run_seconds < 6.0
    assert done.run_seconds + done.compile_seconds <= wall

"""At most one process writes a run: a `resume` of a run that another process holds (a
resume or a checkpointed `train`) is refused in one line naming that process, touching
nothing, and two resumes racing on one interrupted run end with it finished and every metric
row kept."""

import os
import subprocess
import sys

import pandas as pd
import pytest

from jaxrl.api import resume, train
from jaxrl.runs.run_lock import held
from jaxrl.runs.store import RunStore, StoreError
from tests.engine.test_resume import CASES, K, _killed_run


def _resume_cmd(run_id: str, runs_dir) -> list[str]:
    return [sys.executable, "-m", "jaxrl.cli", "resume", run_id, "--runs-dir", str(runs_dir),
            "--no-progress"]


def _rows(folder) -> int:
    return sum(len(pd.read_parquet(p)) for p in sorted((folder / "metrics").glob("chunk-*")))


def _snapshot(folder) -> dict:
    return {p.relative_to(folder): p.read_bytes() for p in folder.rglob("*")
            if p.is_file() and "checkpoints" not in p.parts and p.name != ".lock"}


def test_two_resumes_of_one_run(tmp_path):
    run_id = _killed_run("ppo", tmp_path)
    folder = tmp_path / run_id
    before, rows_before = _snapshot(folder), _rows(folder)
    with held(folder, run_id):  # this process holds it, as a live resume would
        proc = subprocess.run(_resume_cmd(run_id, tmp_path), capture_output=True, text=True,
                              timeout=300, check=False)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stderr.strip() == (f"jaxrl: run {run_id!r} is being written by pid "
                                   f"{os.getpid()} (training or resuming it); wait for it to "
                                   "end, or stop it first")
    assert _snapshot(folder) == before  # touched nothing

    racers = [subprocess.Popen(_resume_cmd(run_id, tmp_path), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True) for _ in range(2)]
    ended = [(p.wait(timeout=600), p.stderr.read()) for p in racers]
    codes = sorted(code for code, _ in ended)
    assert codes == [0, 2], ended
    (loser,) = [err for code, err in ended if code == 2]
    assert len(loser.strip().splitlines()) == 1, loser
    assert "is being written by pid" in loser or "already finished" in loser
    meta = RunStore(tmp_path).load(run_id)
    assert meta["status"] == "finished" and len(meta["resumed"]) == 1
    assert _rows(folder) == 2 * rows_before  # K chunks before the kill, K after: none lost


def test_a_checkpointed_train_holds_its_run(tmp_path):
    env, config, steps_per_update = CASES["ppo"]
    refusals = []

    def try_resume(_chunk):
        (run_id,) = [p.name for p in tmp_path.iterdir() if not p.name.startswith(".")]
        with pytest.raises(StoreError, match="is being written by pid") as err:
            resume(run_id, runs_dir=str(tmp_path))
        refusals.append(str(err.value))

    done = train("ppo", env=env, seeds=1, total_steps=steps_per_update * K, checkpoint_every=1,
                 max_chunk_updates=1, runs_dir=str(tmp_path), progress=False,
                 on_chunk=try_resume, **config)
    assert len(refusals) == K and str(os.getpid()) in refusals[0]
    assert RunStore(tmp_path).load(done.run_id)["status"] == "finished"

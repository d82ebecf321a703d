"""A group's resumable folder (what a Ray worker leaves on shared storage): a retried attempt
continues from the newest checkpoint there and ends with the uninterrupted run's numbers.
No Ray needed: the folder is all a retried task sees of the one before. And what a task's
worker is told about its devices."""

import shutil

import jax
import numpy as np

from jaxrl.engine.spec import group_spec
from jaxrl.studies import group_dir
from jaxrl.studies.ray import stream_groups, task_env

SMALL = dict(num_envs=4, num_steps=16, hidden=(16, 16), update_epochs=2, num_minibatches=2)


def _spec():
    return group_spec("ppo", "CartPole-v1", 2, 64 * 6, [dict(SMALL, learning_rate=1e-3)],
                      max_chunk_updates=1, eval_episodes=2, shard_seeds=False)


def test_a_retried_group_resumes_from_the_newest_checkpoint_and_ends_the_same(tmp_path):
    full = group_dir.run_resumable(_spec(), tmp_path / "full")
    assert full.resumed_from_chunk == 0 and len(full.chunks) == 6
    # what a node lost after chunk 4 leaves: checkpoints up to 4, chunk files 0-4 (and a 5th
    # written just before the kill, whose checkpoint never completed)
    folder = tmp_path / "lost"
    shutil.copytree(tmp_path / "full", folder)
    shutil.rmtree(folder / "checkpoints" / "6")
    shutil.rmtree(folder / "checkpoints" / "5")
    group_dir.chunk_path(folder, 5).unlink()
    again = group_dir.run_resumable(_spec(), folder, node="another")
    assert again.resumed_from_chunk == 4  # 2 chunks recomputed of the 6
    tries = group_dir.attempts(folder)
    assert [t["restore"] for t in tries] == [False, True] and tries[1]["chunks_on_disk"] == 5
    assert tries[1]["node"] == "another"
    for a, b in zip(again.chunks, full.chunks):
        np.testing.assert_array_equal(a["value_loss"], b["value_loss"])
    np.testing.assert_array_equal(again.evals[-1][1], full.evals[-1][1])
    for x, y in zip(jax.tree.leaves(again.state.params), jax.tree.leaves(full.state.params)):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_chunks_read_back_in_order_up_to_the_first_gap(tmp_path):
    for i in (0, 1, 3):
        group_dir.write_chunk(tmp_path, i, {"x": np.full((2, 3), i, np.float32)})
    chunks = group_dir.read_chunks(tmp_path)
    assert [int(c["x"][0, 0]) for c in chunks] == [0, 1]
    assert chunks[1]["x"].dtype == np.float32 and chunks[1]["x"].shape == (2, 3)
    assert not group_dir.has_checkpoint(tmp_path)


def test_a_task_gets_the_devices_it_asked_ray_for(monkeypatch):
    monkeypatch.delenv("XLA_PYTHON_CLIENT_MEM_FRACTION", raising=False)
    assert task_env(2, 0) == {"JAXRL_CPU_DEVICES": "2"}  # not one per core of its node
    assert task_env(0.5, 0) == {"JAXRL_CPU_DEVICES": "1"}
    assert task_env(4, 1) == {"JAXRL_CPU_DEVICES": "1"}  # a GPU task: the GPU is the device
    assert task_env(1, 0.5)["XLA_PYTHON_CLIENT_MEM_FRACTION"] == "0.450"  # two tasks per GPU
    assert list(stream_groups([], address="ray://nowhere:1")) == []  # nothing to run: no Ray

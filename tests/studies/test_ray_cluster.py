"""Sweeps and benches on a real local Ray cluster of three nodes (`ray.cluster_utils.Cluster`,
one CPU each): groups recorded as they finish (`jaxrl runs ls` sees them during the sweep), a
worker node killed mid-group and its group resumed from its checkpoint, results bitwise those
of a local run, a failing group recorded failed without stopping the others."""

import contextlib
import io
import json
import threading
import time
from pathlib import Path

import jax
import numpy as np
import pytest

from jaxrl import cli
from jaxrl.studies import group_dir
from jaxrl.studies.sweep.manifest import stored_runs
from jaxrl.studies.sweep.runner import sweep

ray = pytest.importorskip("ray")
cluster_utils = pytest.importorskip("ray.cluster_utils")

pytestmark = pytest.mark.ray

SMALL = dict(num_envs=4, num_steps=16, hidden=(16, 16), update_epochs=2, num_minibatches=2)
CHUNKS = 16  # one update per chunk: a group is long enough to be caught mid-way
STEPS = 64 * CHUNKS
LRS = ["1e-3", "2e-3", "3e-3", "5e-3", "7e-3", "1e-2"]


@pytest.fixture(scope="module")
def cluster():
    """A head and two worker nodes, one CPU each; the driver (this process) on the head."""
    c = cluster_utils.Cluster(initialize_head=True, head_node_args={
        "num_cpus": 1, "include_dashboard": False,
        "_system_config": {"health_check_period_ms": 500, "health_check_failure_threshold": 2}})
    workers = [c.add_node(num_cpus=1) for _ in range(2)]
    c.wait_for_nodes()
    ray.init(address=c.address, include_dashboard=False, log_to_driver=False)
    try:
        yield c, workers
    finally:
        ray.shutdown()
        c.shutdown()


def _ls(runs_dir) -> list[str]:
    """`jaxrl runs ls` of the store, as its run lines."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert cli.main(["runs", "--runs-dir", str(runs_dir), "ls"]) == 0
    return [line for line in out.getvalue().splitlines() if "ppo" in line]


def _sweep(**kw):
    """The sweep, its groups unsharded: a Ray task of one CPU has one CPU device, and so does the
    local run (a program sharded over two devices is another program, equal to float rounding)."""
    return sweep("ppo", seeds=2, total_steps=STEPS, grid={"learning_rate": LRS},
                 configs_per_group=1, max_chunk_updates=1, progress=False, eval_episodes=4,
                 shard_seeds=False, **SMALL, **kw)


FAILING = ["sweep", "ppo", "--seeds", "2", "--total-steps", "128", "--backend", "ray",
           "--grid", "hidden=(60000,60000),(8,8)", "--grid", "learning_rate=1e-3,3e-3",
           "--set", "num_envs=4", "--set", "num_steps=16", "--no-progress",
           "--eval-episodes", "2"]


def test_failing_group_is_recorded_and_named_while_the_others_finish(cluster, tmp_path, capsys):
    # hidden=(60000, 60000) is a valid config; the worker's memory plan refuses it at run time.
    # Two groups of two configs: one fails, the other (two configs, one program) finishes.
    code = cli.main([*FAILING, "--runs-dir", str(tmp_path)])
    err = capsys.readouterr().err
    assert code == 1
    assert "1 of 2 groups failed (configs 0, 1)" in err, err
    assert "group 0: MemoryPlanError: memory plan: 2 configs x 2 seeds" in err, err
    sweep_id = next(p.name for p in (tmp_path / "sweeps").iterdir())
    stored = stored_runs(tmp_path, sweep_id)
    assert {i: m["status"] for i, m in stored.items()} == {
        0: "failed", 1: "failed", 2: "finished", 3: "finished"}
    assert stored[0]["message"].startswith("MemoryPlanError: memory plan: 2 configs x 2 seeds")
    # a one-CPU task has one CPU device (this 2-core machine's default would give it two)
    assert stored[2]["devices"] == "1 x cpu" and jax.device_count() == 2
    # --resume runs only what failed (it fails again: the same plan), the finished stay put
    cli.main([*FAILING, "--runs-dir", str(tmp_path), "--resume"])
    assert "1 of 2 groups failed" in capsys.readouterr().err
    after = stored_runs(tmp_path, sweep_id)
    assert [after[i]["ended_at"] for i in (2, 3)] == [stored[2]["ended_at"], stored[3]["ended_at"]]
    assert after[0]["ended_at"] >= stored[0]["ended_at"]
    assert len(list((tmp_path / "sweeps").iterdir())) == 1  # the same sweep, no new runs
    assert len([p for p in tmp_path.iterdir() if (p / "run.json").is_file()]) == 4


SUITE = """
name: tiny-ray
seeds: 2
eval_episodes: 2
entries:
  - algo: ppo
    env: CartPole-v1
    total_steps: 128
    config: {num_envs: 4, num_steps: 16, hidden: [8, 8], num_minibatches: 2, update_epochs: 1}
  - name: too-big
    algo: ppo
    env: CartPole-v1
    total_steps: 128
    config: {num_envs: 4, num_steps: 16, hidden: [60000, 60000]}
"""


def test_bench_entries_are_tasks_recorded_as_they_end(cluster, tmp_path, capsys):
    suite = tmp_path / "tiny.yaml"
    suite.write_text(SUITE)
    args = ["bench", str(suite), "--backend", "ray", "--runs-dir", str(tmp_path / "runs"),
            "--no-progress", "--json", str(tmp_path / "out.json")]
    assert cli.main(args) == 1
    assert "too-big: MemoryPlanError" in capsys.readouterr().err
    out = json.loads((tmp_path / "out.json").read_text())
    assert out["ran"] == ["ppo/CartPole-v1"] and list(out["failed"]) == ["too-big"]
    metas = [json.loads(p.read_text()) for p in (tmp_path / "runs").glob("*/run.json")]
    assert sorted((m["bench_entry"], m["status"]) for m in metas) == [
        ("ppo/CartPole-v1", "finished"), ("too-big", "failed")]
    assert all(m["bench_id"] == out["bench_id"] for m in metas)
    # again: the finished entry is skipped, only the failed one runs
    assert cli.main(args) == 1
    again = json.loads((tmp_path / "out.json").read_text())
    assert again["skipped"] == ["ppo/CartPole-v1"] and list(again["failed"]) == ["too-big"]


def _target_group(folder: Path, node_ids: set) -> Path | None:
    """A group folder whose first attempt runs on one of ``node_ids`` and has finished at least
    three chunks, with more to go (the asynchronous checkpoint of a chunk is complete once the
    next chunk's save has begun)."""
    for g in sorted(folder.glob("group-*")):
        tries = group_dir.attempts(g)
        done = len(list((g / "chunks").glob("chunk-*.npz")))
        if len(tries) == 1 and tries[0]["node"] in node_ids and 3 <= done <= CHUNKS - 4:
            return g
    return None


def test_lost_node_mid_group_resumes_from_checkpoint_and_equals_local(cluster, tmp_path):
    c, workers = cluster
    local = _sweep(store=False)
    box: dict = {}
    thread = threading.Thread(target=lambda: box.update(result=_sweep(
        backend="ray", runs_dir=str(tmp_path), keep_results=True)))
    start = time.time()
    thread.start()
    listed_midway, killed, done_at_kill, polls = None, None, 0, 0
    while thread.is_alive():
        polls += 1
        groups = list((tmp_path / "sweeps").glob("*/groups"))
        if killed is None and groups:
            target = _target_group(groups[0], {w.node_id for w in workers})
            if target is not None:
                node = next(w for w in workers if w.node_id == group_dir.attempts(target)[0]["node"])
                done_at_kill = len(list((target / "chunks").glob("chunk-*.npz")))
                c.remove_node(node, allow_graceful=False)
                killed = target
        if listed_midway is None and polls % 20 == 0:  # every ~0.2 s: the kill comes first
            listed = len(_ls(tmp_path))
            if 0 < listed < len(LRS):
                listed_midway = listed  # `jaxrl runs ls` during the sweep lists finished groups
        time.sleep(0.01)
    thread.join()
    elapsed = time.time() - start
    result = box["result"]
    assert killed is not None, "no group was caught mid-way on a worker node"
    assert listed_midway is not None
    # every group recorded, finished
    assert set(result.table["status"]) == {"finished"} and len(_ls(tmp_path)) == len(LRS)
    # the killed group resumed from its checkpoint: fewer chunks recomputed than it had done
    tries = group_dir.attempts(killed)
    assert len(tries) == 2 and tries[1]["restore"], tries
    had_done = tries[1]["chunks_on_disk"]  # what the lost attempt finished (>= done_at_kill)
    meta = stored_runs(tmp_path, result.sweep_id)[int(killed.name.split("-")[1])]
    resumed_from = meta["resumed_from_chunk"]
    assert had_done >= done_at_kill >= 3
    assert 1 <= resumed_from <= had_done and had_done - resumed_from < had_done, (resumed_from,
                                                                                 had_done)
    # bitwise the local run's metrics, evaluations and parameters
    for a, b in zip(result.results, local.results):
        for name in ("episode_return_mean", "value_loss", "entropy"):
            np.testing.assert_array_equal(a.metrics[name].to_numpy(), b.metrics[name].to_numpy())
        np.testing.assert_array_equal(a.final_eval_return, b.final_eval_return)
        for x, y in zip(jax.tree.leaves(a.state.params), jax.tree.leaves(b.state.params)):
            np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    print(json.dumps({"sweep_seconds": round(elapsed, 1), "resumed_from": resumed_from,
                      "had_done": had_done, "done_when_kill_asked": done_at_kill}))

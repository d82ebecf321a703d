"""The run store: round trips through ls/top/latest/sql, crash safety, concurrent writers,
reports, clear errors, the `jaxrl runs` and `jaxrl compare` commands. (Exporters:
test_export.py.)"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from jaxrl.api import train
from jaxrl.cli import main
from jaxrl.runs import query, snapshot
from jaxrl.runs.report import ran_on
from jaxrl.runs.store import RunStore, StoreError, code_provenance
from jaxrl.trained.results import NonFiniteMetricError

TINY = dict(num_envs=4, num_steps=16, update_epochs=1, num_minibatches=1, hidden=(8,),
            progress=False, max_chunk_updates=2)


@pytest.fixture()
def store(tmp_path):
    return RunStore(tmp_path / "runs")


def test_round_trip_ls_top_latest_sql(store):
    a = train("ppo", env="probe:action", seeds=3, total_steps=64 * 6, runs_dir=store.root,
              learning_rate=1e-2, **TINY)
    b = train("ppo", env="probe:action", seeds=2, total_steps=64 * 4, runs_dir=store.root,
              learning_rate=1e-4, **TINY)
    # each training process catalogued its finished run: `runs ls` reads the snapshot at once
    current = snapshot.read_current(store.root)
    assert current is not None and {r["run_id"] for r in current} == {a.run_id, b.run_id}
    listed = query.ls(store, env="probe:action")
    assert set(listed.run_id) == {a.run_id, b.run_id}
    assert set(listed.status) == {"finished"}
    assert dict(zip(listed.run_id, listed.seeds)) == {a.run_id: 3, b.run_id: 2}
    meta = query.show(a.run_id, store)
    assert meta["config"] == json.loads(json.dumps(a.config.to_dict()))
    assert meta["git_commit"] == code_provenance()["git_commit"]
    assert meta["final_eval_return"] == pytest.approx(a.final_eval_return.tolist())
    assert set(meta["versions"]) >= {"jax", "jaxlib", "flax", "optax", "gymnax", "brax", "jaxrl"}
    # metrics: one row per run x seed x update, equal to what train returned
    got = query.sql(f"SELECT count(*) AS n, max(update) AS u FROM metrics "
                    f"WHERE run_id = '{a.run_id}'", store)
    assert int(got.n[0]) == 3 * 6 and int(got.u[0]) == 5
    stored = query.load_metrics(a.run_id, store).sort_values(["seed", "update"])
    np.testing.assert_allclose(stored.value_loss.to_numpy(),
                               a.metrics.sort_values(["seed", "update"]).value_loss.to_numpy())
    # top by a metric: the mean over seeds of each seed's last updates
    top = query.top("probe:action", "value_loss", k=1, store=store)
    expected = {r.run_id: query.load_metrics(r.run_id, store).groupby("seed").value_loss
                .apply(lambda s: s.iloc[-10:].mean()).mean() for r in (a, b)}
    best = max(expected, key=expected.get)
    assert top.run_id[0] == best and top.value[0] == pytest.approx(expected[best], rel=1e-6)
    latest = query.latest(store)
    assert list(latest.run_id) == [max((a, b), key=lambda r: query.show(r.run_id, store)
                                       ["started_at"] + r.run_id).run_id] or len(latest) == 1
    folder = Path(a.run_dir)
    assert (folder / "report.md").is_file() and (folder / "curves.png").stat().st_size > 1000
    assert "IQM" in (folder / "report.md").read_text()


def test_failed_and_interrupted_runs_keep_their_chunks(store):
    with pytest.raises(NonFiniteMetricError) as err:
        train("ppo", env="probe:value", seeds=2, total_steps=64 * 6, runs_dir=store.root,
              learning_rate=1e38, **TINY)  # the first Adam step overflows
    meta = query.show(err.value.result.run_id, store)
    assert meta["status"] == "failed" and "non-finite" in meta["message"]
    assert len(query.load_metrics(meta["run_id"], store)) == 2 * 2

    def interrupt(chunk):
        if chunk["chunk"] == 1:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        train("ppo", env="probe:value", seeds=2, total_steps=64 * 6, runs_dir=store.root,
              on_chunk=interrupt, **TINY)
    runs = query.ls(store, status="interrupted")
    assert len(runs) == 1
    assert len(query.load_metrics(runs.run_id[0], store)) == 2 * 2 * 2  # two chunks written


SCRIPT = """
import sys
from jaxrl.api import train
train("ppo", env="probe:value", seeds=2, total_steps=64 * 4, runs_dir=sys.argv[1],
      num_envs=4, num_steps=16, update_epochs=1, num_minibatches=1, hidden=(8,),
      progress=False, max_chunk_updates=2)
"""


def test_two_processes_at_once_both_land(store):
    env = dict(os.environ)
    procs = [subprocess.Popen([sys.executable, "-c", SCRIPT, str(store.root)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
             for _ in range(2)]
    for p in procs:
        assert p.wait(timeout=300) == 0, p.stderr.read().decode()[-2000:]
    runs = query.ls(store)
    assert len(runs) == 2 and set(runs.status) == {"finished"}
    counts = query.sql("SELECT run_id, count(*) AS n FROM metrics GROUP BY run_id", store)
    assert sorted(counts.n.tolist()) == [8, 8]


def test_unwritable_store_is_a_clear_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(StoreError, match="cannot be created"):
        train("ppo", env="probe:value", seeds=1, total_steps=64, runs_dir=blocker / "runs", **TINY)


def test_cli_runs_commands(store, capsys):
    train("ppo", env="probe:action", seeds=2, total_steps=64 * 2, runs_dir=store.root, **TINY)
    root = str(store.root)
    assert main(["runs", "--runs-dir", root, "ls"]) == 0
    assert "probe:action" in capsys.readouterr().out
    assert main(["runs", "--runs-dir", root, "top", "--env", "probe:action", "--metric",
                 "value_loss"]) == 0
    assert main(["runs", "--runs-dir", root, "latest"]) == 0
    assert main(["runs", "--runs-dir", root, "sql", "SELECT count(*) AS n FROM metrics"]) == 0
    assert "8" in capsys.readouterr().out
    assert main(["runs", "--runs-dir", root, "sql", "SELEC nonsense"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "syntax error" in err[0].lower()
    assert main(["runs", "--runs-dir", root, "top", "--env", "probe:action", "--metric",
                 "nope"]) == 2
    out = store.root / "plot.png"
    assert main(["plot", "--runs-dir", root, "--env", "probe:action", "--out", str(out)]) == 0
    assert out.stat().st_size > 1000


def test_cli_compare_prints_iqm_ci_welch_and_poi(store, capsys):
    a = train("ppo", env="probe:action", seeds=3, total_steps=64 * 2, runs_dir=store.root, **TINY)
    b = train("ppo", env="probe:action", seeds=3, total_steps=64 * 2, runs_dir=store.root,
              seed=1, **TINY)
    assert main(["compare", a.run_id, b.run_id, "--runs-dir", str(store.root)]) == 0
    out = capsys.readouterr().out
    assert "n=3 seeds" in out and "Welch t" in out and "P(A > B)" in out and "bootstrap" in out


KILL_SCRIPT = """
import sys
from jaxrl.cli import main
sys.exit(main(["train", "ppo", "--env", "probe:value", "--seeds", "2", "--total-steps", "40000000",
               "--set", "num_envs=4", "--set", "num_steps=16", "--set", "update_epochs=1",
               "--set", "num_minibatches=1", "--set", "hidden=8", "--no-progress",
               "--runs-dir", sys.argv[1]]))
"""


def test_sigkill_mid_run_leaves_readable_chunks_and_interrupted_status(store):
    import signal
    import time

    proc = subprocess.Popen([sys.executable, "-c", KILL_SCRIPT, str(store.root)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 240
    while time.time() < deadline and len(list(store.root.glob("*/metrics/chunk-*.parquet"))) < 3:
        time.sleep(0.5)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    runs = query.ls(store)
    assert len(runs) == 1 and runs.status[0] == "interrupted"
    chunks = len(list(store.root.glob("*/metrics/chunk-*.parquet")))
    assert chunks >= 3
    n = query.sql("SELECT count(*) AS n FROM metrics", store).n[0]
    assert n == chunks * 2 * 50  # 2 seeds x 50 updates per chunk, every finished chunk
    # a write the kill cut short is a hidden temp file no reader sees (and readers never write
    # to the store); the run's next writer (resume reopens it) removes it
    store.open(runs.run_id[0]).reopen()
    assert not list(store.root.glob("*/metrics/.*tmp")) and not list(store.root.glob("*/.*tmp"))


def test_the_report_says_what_the_run_ran_on():
    """A run sharded over every device says the machine's; one that used fewer (an Atari run's
    seeds stay on one CPU device) says so, instead of the machine's count alone."""
    gpu = {"device_count": 1, "device_kind": "NVIDIA H100 80GB HBM3", "devices": "1 x gpu"}
    assert ran_on(gpu) == "ran on 1 x NVIDIA H100 80GB HBM3"
    cpu = {"device_count": 2, "device_kind": "cpu"}
    assert ran_on({**cpu, "devices": "2 x cpu"}) == "ran on 2 x cpu"
    assert ran_on({**cpu, "devices": "1 x cpu"}) == "ran on 1 x cpu of 2 x cpu"
    assert ran_on(cpu) == "ran on 2 x cpu"  # a run recorded before the field existed


def test_the_code_diff_is_the_codes_not_the_results_a_bench_writes(tmp_path, monkeypatch):
    """A bench rewriting its committed progress folder while it runs leaves the next run's
    ``code.diff`` empty; an edit of the code is in it."""
    import subprocess

    from jaxrl.runs import store as store_module

    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True)

    (tmp_path / "jaxrl").mkdir()
    (tmp_path / "benchmarks" / "suite" / "progress").mkdir(parents=True)
    (tmp_path / "jaxrl" / "algo.py").write_text("GAMMA = 0.99\n")
    (tmp_path / "benchmarks" / "suite" / "progress" / "progress.json").write_text("{}\n")
    git("init", "-q")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first")
    monkeypatch.setattr(store_module, "REPO", tmp_path)
    (tmp_path / "benchmarks" / "suite" / "progress" / "progress.json").write_text('{"a": 1}\n')
    found = code_provenance()
    assert found["git_commit"] and found["git_diff"] == ""
    (tmp_path / "jaxrl" / "algo.py").write_text("GAMMA = 0.999\n")
    diff = code_provenance()["git_diff"]
    assert "+GAMMA = 0.999" in diff and "progress.json" not in diff

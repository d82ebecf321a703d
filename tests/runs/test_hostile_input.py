"""Hostile input to the run store and its commands: run ids that are paths, user meta that
would rewrite the store's own fields, folders named with glob characters, unbounded queries,
and a few smaller ones (an out-of-range seed for `act`, a non-string algo, an unknown env
name, a duplicate ``--config`` key). Each is one line (exit 2 on the command line), before
anything is read or written outside the store. Stores are built by hand: no training, but
for one tiny result."""

import os
import shutil
import signal
import subprocess
import sys
import time

import duckdb
import pytest

import jaxrl
from jaxrl.cli import main
from jaxrl.cli.common import UsageError, load_config_file
from jaxrl.config import ConfigError
from jaxrl.runs import bench_report, query, segments
from jaxrl.runs.runmeta import validate_meta
from jaxrl.runs.store import RunStore, StoreError
from tests.runs.test_store_reliability import CHUNK_ROWS, CHUNKS, write_run

RUN = "20260101-000000-ppo-CartPole-v1-abc123"
PATHS = ["../other/" + RUN, "/tmp/" + RUN, "..", "a/b", ".hidden", ""]


@pytest.fixture()
def stores(tmp_path):
    """A store and, beside it, another store whose run a path-like id would reach."""
    write_run(tmp_path / "other", RUN)
    write_run(tmp_path / "runs", "20260101-000001-dqn-CartPole-v1-def456")
    return RunStore(tmp_path / "runs")


def one_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


@pytest.mark.parametrize("run_id", PATHS)
def test_the_python_api_refuses_path_like_ids(stores, run_id):
    for call in (lambda: stores.load(run_id), lambda: stores.open(run_id),
                 lambda: query.show(run_id, stores), lambda: query.load_metrics(run_id, stores),
                 lambda: query.load_evaluations(run_id, stores)):
        with pytest.raises(StoreError, match=r"is not a run id: a run id is one name"):
            call()


@pytest.mark.parametrize("argv", [
    ["runs", "show", "{id}"], ["compare", "{id}", "{id}"], ["export", "tensorboard", "{id}"],
    ["demos", "{id}"], ["render", "{id}", "--out", "{tmp}/v.gif"], ["resume", "{id}"]])
def test_commands_refuse_path_like_ids(stores, argv, capsys, tmp_path):
    for run_id in (f"../other/{RUN}", str(tmp_path / "other" / RUN)):
        args = [a.format(id=run_id, tmp=tmp_path) for a in argv]
        assert main([*args, "--runs-dir", str(stores.root)]) == 2
        assert one_line(capsys) == (f"jaxrl: {run_id!r} is not a run id: a run id is one name "
                                    "of letters, digits, '.', '_' and '-', never a path")
    assert not (tmp_path / "other" / RUN / "tensorboard").exists()


def test_meta_cannot_set_the_store_fields(tmp_path):
    for key in ("run_id", "status", "pid", "started_at", "group"):
        with pytest.raises(StoreError, match=f"meta key '{key}' is reserved by the run store"):
            jaxrl.train("ppo", total_steps=64, runs_dir=str(tmp_path), meta={key: "../evil"})
    assert not tmp_path.exists() or not any(tmp_path.iterdir())  # nothing recorded


def count_by_run(store) -> dict:
    frame = query.sql("select run_id, count(*) AS n from metrics group by 1", store)
    return dict(zip(frame.run_id, frame.n))


@pytest.mark.parametrize("running", [False, True], ids=["compacted", "loose"])
def test_glob_characters_in_folder_names(tmp_path, running):
    """A copy named ``2*`` is skipped (not a run id) and counts no run twice; a store whose
    own path has glob characters reads its own files only, compacted or not."""
    status = "running" if running else "finished"
    root = tmp_path / "st[1]*?"
    for other in ("st1", "st1xy"):  # what the store's path would match as a pattern
        write_run(tmp_path / other, "20260101-000000-x", status=status)
    write_run(root, "20260101-000000-a", status=status)
    write_run(root, "20260101-000000-b", status=status)
    shutil.copytree(root / "20260101-000000-a", root / "2*")
    with pytest.warns(UserWarning, match=r"skipping folder '2\*' of the run store: its name is "
                                         r"not a run id"):
        counts = count_by_run(RunStore(root))
    assert counts == {"20260101-000000-a": CHUNKS * CHUNK_ROWS,
                      "20260101-000000-b": CHUNKS * CHUNK_ROWS}


# -- bounded queries ---------------------------------------------------------------------------
HUGE = "SELECT sum(range % 7) AS s FROM range(100000000000)"


def test_runs_sql_prints_a_limited_number_of_rows(stores, capsys):
    root = ["runs", "--runs-dir", str(stores.root), "sql"]
    assert main([*root, "SELECT * FROM range(10000000000)"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 + 1000 + 1 and out[-2].split() == ["999"]
    assert out[-1] == "… more rows not shown: only the first 1,000 (--limit N shows N, --limit 0 all)"
    assert main([*root, "SELECT * FROM range(5)", "--limit", "3"]) == 0
    assert "only the first 3" in capsys.readouterr().out
    assert main([*root, "SELECT * FROM range(1500)", "--limit", "0"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 1 + 1500


def test_runs_sql_has_a_timeout(stores, capsys):
    start = time.monotonic()
    assert main(["runs", "--runs-dir", str(stores.root), "sql", HUGE, "--timeout", "0.5"]) == 2
    assert one_line(capsys) == ("jaxrl: the query ran longer than its time limit of 0.5 s "
                                "(--timeout S, or timeout= in Python)")
    assert time.monotonic() - start < 20


def test_the_python_api_bounds_rows_text_and_time(stores):
    with pytest.raises(query.QueryError, match="returns more than 10 rows; pass limit=N"):
        query.sql("SELECT * FROM range(11)", stores, limit=10)
    assert len(query.sql("SELECT * FROM range(11)", stores, limit=None)) == 11
    with pytest.raises(query.QueryError, match="at most 100,000 characters, got 10,485,7"):
        query.sql("SELECT 1" + " " * (10 * 2**20), stores)
    with pytest.raises(query.QueryError, match=r"time limit of 0\.3 s"):
        query.sql(HUGE, stores, timeout=0.3)


def _as_in_a_terminal() -> None:
    """The child takes Ctrl-C as a foreground process does: a suite started in the background
    (``cmd &`` in a script) ignores SIGINT, and Python keeps an ignored SIGINT ignored."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_during_a_query_is_one_line(stores):
    proc = subprocess.Popen([sys.executable, "-m", "jaxrl.cli", "runs", "--runs-dir",
                             str(stores.root), "sql", HUGE], stderr=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, preexec_fn=_as_in_a_terminal)
    time.sleep(4)  # the store is catalogued and the query runs
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130 and err.strip() == "jaxrl: interrupted", err


# -- smaller ones ------------------------------------------------------------------------------
def test_act_refuses_a_seed_the_result_does_not_have():
    result = jaxrl.train("ppo", store=False, seeds=2, total_steps=64, num_envs=4, num_steps=16,
                         hidden=(8,), progress=False, eval_episodes=1)
    obs = result._acting_env[0].observation_space(result._acting_env[1]).sample(
        __import__("jax").random.key(0))
    result.act(obs, seed=1)
    for seed in (7, -1, 2, 1.0):
        with pytest.raises(ValueError, match=r"this result has seeds 0\.\.1; got seed"):
            result.act(obs, seed=seed)


def test_train_refuses_a_non_string_algo_or_env():
    with pytest.raises(ConfigError, match=r"algo must be a name .* got NoneType None"):
        jaxrl.train(None, store=False)
    with pytest.raises(ConfigError, match=r"env must be a name .* got int 3"):
        jaxrl.train("ppo", env=3, store=False)


@pytest.mark.parametrize("name", ["Nope-v9", "brax:nosuchbody"])
def test_an_unknown_env_is_one_line(name):
    """One line on stderr, nothing on stdout: not even the lines importing brax prints (a
    ``brax:`` name is checked against brax's own names, so brax is imported there)."""
    proc = subprocess.run([sys.executable, "-m", "jaxrl.cli", "train", "ppo", "--env",
                           name, "--no-store"], capture_output=True, text=True, timeout=120,
                          check=False, env=dict(os.environ, JAXRL_COMPILE_CACHE="0"))
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith(f"jaxrl: Unknown environment '{name}'."), proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and proc.stdout == ""


def test_a_duplicate_config_key_is_refused(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("learning_rate: 0.001\nnested: {a: 1, b: 2}\nlearning_rate: 0.01\n")
    with pytest.raises(UsageError, match=r"duplicate key 'learning_rate' \(line 3\)$"):
        load_config_file(str(path))


def test_a_run_json_whose_run_id_is_a_path_is_damaged(tmp_path):
    """A run.json that names its run ``../elsewhere`` is flagged, not followed (readers that
    build paths from it, e.g. a bench report's curves, never leave the store)."""
    assert any("not a run id" in p for p in validate_meta(
        {"run_id": "../elsewhere", "algo": "ppo", "env": "CartPole-v1", "status": "finished",
         "seeds": 1, "total_steps_per_seed": 10, "config": {}}))
    assert not any("run_id" in p for p in validate_meta({"run_id": "20261125-ppo-a1b2c3"}))


def test_bench_ids_are_names(tmp_path):
    with pytest.raises(StoreError, match="is not a bench id"):
        bench_report.bench_dir(RunStore(tmp_path), "../other")


class _Raising:
    """A DuckDB connection whose every statement raises ``error``."""

    def __init__(self, error: Exception):
        self.error = error

    def execute(self, statement):
        raise self.error


@pytest.mark.parametrize("raised", [duckdb.InterruptException("INTERRUPT Error: Interrupted!"),
                                    RuntimeError("Query interrupted")])
def test_a_ctrl_c_duckdb_took_while_cataloguing_is_a_keyboard_interrupt(raised):
    """DuckDB reports a Ctrl-C that stops a statement as one of its errors or as a RuntimeError;
    compaction, which skips files DuckDB cannot read, must not take it for a bad file and go on
    (the query then ran to its time limit), nor print a traceback."""
    with pytest.raises(KeyboardInterrupt):
        segments.execute(_Raising(raised), "COPY (SELECT 1) TO 'x.parquet'")
    with pytest.raises(RuntimeError, match="other"):
        segments.execute(_Raising(RuntimeError("other")), "SELECT 1")

"""Hostile input to the run store and its commands: run ids that are paths, user meta that
would rewrite the store's own fields, folders named with glob characters, unbounded queries,
and a few smaller ones (an out-of-range seed for `act`, a non-string algo, an unknown env
name, a duplicate ``--config`` key). Each is one line (exit 2 on the command line), before
anything is read or written outside the store. Stores are built by hand: no training, but
for one tiny result."""

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import duckdb
import numpy as np
import pytest

import jaxrl
from jaxrl.cli import main
from jaxrl.cli.common import UsageError, load_config_file
from jaxrl.config import ConfigError
from jaxrl.runs import query, segments
from jaxrl.runs.runmeta import validate_meta
from jaxrl.runs.store import RunStore, StoreError
from jaxrl.studies.bench import report as bench_report
from jaxrl.studies.bench import suite as bench_suite
from jaxrl.studies.sweep import runner as sweeps
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
def test_act_takes_array_likes_and_refuses_a_seed_the_result_does_not_have():
    """``act`` takes what a user has at hand (a list, a tuple, a NumPy array) as it takes a
    JAX array; an observation that is not numbers or not the env's shape is one line."""
    result = jaxrl.train("ppo", store=False, seeds=2, total_steps=64, num_envs=4, num_steps=16,
                         hidden=(8,), progress=False, eval_episodes=1)
    obs = result._acting_env[0].observation_space(result._acting_env[1]).sample(
        __import__("jax").random.key(0))
    result.act(obs, seed=1)
    for seed in (7, -1, 2, 1.0):
        with pytest.raises(ValueError, match=r"this result has seeds 0\.\.1; got seed"):
            result.act(obs, seed=seed)
    listed = [float(x) for x in obs]
    want = int(result.act(obs))
    assert int(result.act(listed)) == int(result.act(tuple(listed))) == want
    assert int(result.act(np.asarray(listed))) == int(result.policy().act(listed)) == want
    assert [int(a) for a in result.act([listed, listed])] == [want, want]
    for bad, message in (([1.0, 2.0], r"obs must be \[\.\.\., 4\] \(the env's observation shape\), "
                                       r"got shape \[2\]"),
                         (["a", "b", "c", "d"], "obs must be an array of numbers"),
                         (None, "obs must be an array of numbers"),
                         ([[1.0] * 4, [1.0]], "obs must be an array of numbers")):
        with pytest.raises(ValueError, match=message):
            result.act(bad)


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


# -- bounded inputs, one line each (issue 54) ---------------------------------------------------
@pytest.mark.parametrize("setting, fragment", [
    ("num_envs=1e309", "config key 'num_envs' expects int, got '1e309'"),
    ("num_envs=-1e309", "config key 'num_envs' expects int, got '-1e309'"),
    ("hidden=[64,1e309]", "config key 'hidden' expects int, got '1e309'"),
    ("hidden=[64,1e20]", "hidden=(64, 100000000000000000000) is out of range for PPOConfig: each "
                         "element must be at most 2147483647 (the programs count in int32)"),
    ("learning_rate=1e309", "learning_rate=inf is out of range for PPOConfig: must be > 0"),
])
def test_an_infinite_or_huge_number_is_one_line(setting, fragment, capsys):
    assert main(["train", "ppo", "--set", setting, "--no-store", "--total-steps", "1024"]) == 2
    assert one_line(capsys) == f"jaxrl: {fragment}"


@pytest.mark.parametrize("kwargs, message", [
    ({"num_envs": float("inf")}, "config key 'num_envs' expects int, got inf"),
    ({"hidden": (64, 10**400)}, r"config key 'hidden' expects int, got about 2\*\*1329"),
    ({"seeds": 10**5000}, r"seeds must be in \[1, 2147483647\] .*, got about 2\*\*16610"),
    ({"total_steps": float("inf")}, "total_steps must be a whole number, got inf"),
    ({"env_kwargs": [1, 2]}, r"env_kwargs must be a mapping of env option names to values, "
                             r"got list \[1, 2\]"),
    ({"env_kwargs": {1: 2}}, "env_kwargs must be a mapping"),
])
def test_the_python_api_refuses_the_same_numbers_and_env_kwargs(kwargs, message):
    with pytest.raises(ConfigError, match=message):
        jaxrl.train("ppo", store=False, progress=False, **{"total_steps": 1024, **kwargs})


def test_a_sweep_distribution_needs_finite_bounds():
    for text in ("randint(1,1e309)", "uniform(0, inf)", "loguniform(1e-5, 1e400)"):
        with pytest.raises(ConfigError, match="bounds must be finite numbers"):
            sweeps.make_configs(random={"num_envs": text})


ENTRY = "  - {algo: ppo, env: CartPole-v1, total_steps: 512%s}\n"
BOMB = "defs:\n  l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"  l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n" for i in range(1, 10))  # 9**9 leaves


@pytest.mark.parametrize("text, fragment", [
    ("seeds: .inf\nentries:\n" + ENTRY % "", "seeds must be a positive integer, got inf"),
    ("entries:\n" + ENTRY.replace("512", "1e400") % "",
     "entry 1 (ppo on CartPole-v1): total_steps must be a positive integer, got '1e400'"),
    ("seed: .inf\nentries:\n" + ENTRY % "", "seed must be a whole number, got inf"),
    ("seeds: 1" + "0" * 400 + "\nentries:\n" + ENTRY % "",
     "seeds must be a positive integer, got about 2**1329"),
    ("entries:\n" + ENTRY % ", env_kwargs: [1, 2]",
     "env_kwargs must be a mapping of env option names to values, got list [1, 2]"),
    ("entries:\n" + ENTRY % ", reference: {value: .inf, measure: final_eval, source: s}",
     "reference value must be a finite number, got inf"),
    (BOMB + "note: *l9\nentries:\n" + ENTRY % "",
     "expands past 2,097,152 characters with its aliases written out"),
    (BOMB + "entries:\n" + ENTRY % ", name: *l9",
     "expands past 2,097,152 characters with its aliases written out"),
    ("note: &n [*n]\nentries:\n" + ENTRY % "", "has an alias inside the node it names"),
    ("note: " + "[" * 5000 + "]" * 5000 + "\nentries:\n" + ENTRY % "", "is nested too deeply"),
    ("entries:\n" + ENTRY % "" * 12_000, "is larger than 524,288 bytes"),
])
def test_a_suite_is_bounded_and_one_line(tmp_path, capsys, text, fragment):
    """Each is refused in seconds, before the store is touched (no bench.json)."""
    path = tmp_path / "hostile.yaml"
    path.write_text(text)
    start = time.monotonic()
    assert main(["bench", str(path), "--runs-dir", str(tmp_path / "runs"), "--no-progress"]) == 2
    line = one_line(capsys)
    assert line.startswith("jaxrl: ") and fragment in line, line
    assert time.monotonic() - start < 30 and not (tmp_path / "runs").exists()


def test_a_suite_s_few_aliases_still_read(tmp_path):
    """A suite that shares a reference's source with an alias (as minatar.yaml does) loads."""
    path = tmp_path / "ok.yaml"
    ref = "reference: {value: 1, measure: final_eval, source: %s}"
    path.write_text("entries:\n" + ENTRY % (", name: a, " + ref % "&s the paper")
                    + ENTRY % (", name: b, " + ref % "*s"))
    suite = bench_suite.load_suite(str(path))
    assert [e.reference["source"] for e in suite.entries] == ["the paper", "the paper"]


@pytest.mark.parametrize("make, fragment", [
    (lambda tmp: "/dev/zero", "is not a regular file"),
    (lambda tmp: str(tmp), "is not a regular file"),
    (lambda tmp: (os.mkfifo(tmp / "fifo"), str(tmp / "fifo"))[1], "is not a regular file"),
    (lambda tmp: ((tmp / "r.yaml").write_bytes(b"a: 1\n\xff\xfe" + os.urandom(64)),
                  str(tmp / "r.yaml"))[1], "is not UTF-8 text (at byte 5)"),
    (lambda tmp: ((tmp / "big.yaml").write_text("a: " + "x" * 600_000),
                  str(tmp / "big.yaml"))[1], "is larger than 524,288 bytes"),
    (lambda tmp: ((tmp / "bomb.yaml").write_text(BOMB), str(tmp / "bomb.yaml"))[1],
     "expands past"),
])
def test_a_config_file_is_a_bounded_regular_file_named_in_its_error(tmp_path, make, fragment):
    """``--config`` of a FIFO would block forever and ``/dev/zero`` read until memory ran out;
    random bytes said only "'utf-8' codec can't decode" without the file."""
    path = make(tmp_path)
    signal.alarm(30)  # a FIFO opened for reading would wait here for a writer
    try:
        with pytest.raises(UsageError) as err:
            load_config_file(path)
    finally:
        signal.alarm(0)
    assert str(err.value).startswith(f"--config {path!r} ") and fragment in str(err.value)


def test_a_runs_dir_that_is_a_file_is_not_a_store(tmp_path, capsys, monkeypatch):
    """Not "(no rows)", a count of 0 and "no bad files" with exit 0."""
    path = tmp_path / "notes.txt"
    path.write_text("not a store")
    said = f"jaxrl: run store {str(path)!r} is not a folder: a run store is a folder of runs"
    for argv in (["ls"], ["sql", "SELECT count(*) FROM runs"], ["check"], ["latest"]):
        assert main(["runs", "--runs-dir", str(path), *argv]) == 2
        assert one_line(capsys).startswith(said), argv
    monkeypatch.setenv("JAXRL_RUNS_DIR", str(path))
    assert main(["runs", "ls"]) == 2
    assert one_line(capsys).startswith(said)
    with pytest.raises(StoreError, match="is not a folder"):
        jaxrl.train("ppo", total_steps=64, progress=False)


def test_runs_sql_bounds_the_printed_cells(stores, capsys):
    root = ["runs", "--runs-dir", str(stores.root), "sql"]
    assert main([*root, "SELECT repeat('ab', 50000000) AS x, 1 AS n"]) == 0
    out = capsys.readouterr().out
    assert len(out) < 5_000
    assert out.splitlines()[1].split() == ["ab" * 499 + "a…", "1"]
    assert out.splitlines()[-1] == ("… 1 cell cut to their first 1,000 characters "
                                    "(--cell-chars N shows N, --cell-chars 0 all)")
    assert main([*root, "SELECT repeat('ab', 600) AS x", "--cell-chars", "0"]) == 0
    assert capsys.readouterr().out.splitlines()[1].strip() == "ab" * 600


@pytest.mark.parametrize("text, verb", [
    ("/* x */ COPY (SELECT 1) TO 'x.csv'", "COPY"),
    ("-- a comment\n  /* and\n another */ ATTACH 'x.db'", "ATTACH"),
])
def test_a_refusal_names_the_verb_past_comments(stores, text, verb):
    with pytest.raises(query.QueryError, match=f"^refused: {verb} statements are not allowed"):
        query.sql(text, stores)


def test_a_non_finite_config_is_flagged_and_show_prints_strict_json(tmp_path, capsys):
    """Python's json reads NaN and Infinity, which JSON has not: a config holding one flags its
    run; elsewhere in a run.json, `runs show` prints it as null and says so."""
    root = tmp_path / "runs"
    bad, odd = "20260101-000000-ppo-nan", "20260101-000001-ppo-inf"
    for run_id, key, value in ((bad, "config", {"gamma": float("nan"),
                                                "lr": [1.0, float("-inf")]}),
                               (odd, "summary", {"x": float("inf")})):
        folder = write_run(root, run_id)
        meta = json.loads((folder / "run.json").read_text())
        (folder / "run.json").write_text(json.dumps({**meta, key: value}))
    assert validate_meta({**json.loads((root / bad / "run.json").read_text())}) == [
        "config holds a non-finite number at config.gamma and 1 more (NaN or Infinity)"]
    with pytest.warns(Warning, match="skipping bad file run.json"):
        listed = query.ls(RunStore(root))
    assert listed.set_index("run_id").damaged.to_dict() == {bad: True, odd: False}
    capsys.readouterr()
    assert main(["runs", "--runs-dir", str(root), "show", bad]) == 2
    assert one_line(capsys).startswith(f"jaxrl: run {bad!r} is damaged: its run.json: config "
                                       "holds a non-finite number at config.gamma")
    assert main(["runs", "--runs-dir", str(root), "show", odd]) == 0
    captured = capsys.readouterr()
    strict = json.loads(captured.out, parse_constant=lambda token: pytest.fail(token))
    assert strict["summary"] == {"x": None} and strict["run_id"] == odd
    assert captured.err.strip() == ("jaxrl: warning: printed as null: summary.x (NaN or "
                                    "Infinity in the run.json, not JSON)")


@pytest.mark.parametrize("seed", ["-1", "2.5", "4294967296"])
def test_a_bench_with_a_bad_root_seed_writes_nothing(tmp_path, capsys, seed):
    """The suite's root seed is checked before the bench writes its manifest (bench.json)."""
    from tests.studies.bench.test_bench import TINY

    suite = tmp_path / "tiny.yaml"
    suite.write_text(f"seed: {seed}\n{TINY}")
    root = tmp_path / "runs"
    assert main(["bench", str(suite), "--runs-dir", str(root)]) == 2
    assert "seed must be" in one_line(capsys)
    assert not root.exists()

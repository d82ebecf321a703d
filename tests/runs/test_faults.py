"""The run store under faults: a read-only store (a real read-only bind mount in a private mount
namespace where ``unshare`` allows one, and the fault injected at the write calls everywhere), a
full disk (a tiny tmpfs, and injected), a stuck holder of the catalog lock (SIGSTOPped), one bad
value in a ``run.json``, ``run.json`` of the wrong shape, a reused PID, looping links, a run
folder on another file system, a temp file a killed write left, and two benches of one suite.
Each fault is one line with exit 2, or works degraded, and every intact run stays listed.
Stores are built by hand (`write_run`); one tiny `jaxrl train` runs out of disk mid-run."""

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest

import jaxrl
from jaxrl.cli import main
from jaxrl.config import ConfigError
from jaxrl.runs import catalog, catalog_lock, files, query
from jaxrl.runs.runmeta import process_identity, process_start_time, validate_meta
from jaxrl.runs.store import Run, RunStore, StoreError
from tests.runs.test_store_reliability import write_run

REPO = Path(__file__).resolve().parents[2]
DEAD_PID = 2**22 + 7  # above Linux's largest pid_max: never a live process


def dead_running_run(root: Path, run_id: str = "run-dead") -> Path:
    """A run marked ``running`` whose process is gone (killed without a chance to say so)."""
    folder = write_run(root, run_id, status="running", chunks=1, minute=9)
    meta = json.loads((folder / "run.json").read_text())
    (folder / "run.json").write_text(json.dumps({**meta, "pid": DEAD_PID}))
    return folder


@pytest.fixture()
def root(tmp_path) -> Path:
    root = tmp_path / "runs"
    write_run(root, "run-a", minute=0)
    write_run(root, "run-b", algo="dqn", minute=1)
    return root


def cli(capsys, *argv) -> tuple[int, str, str]:
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def one_line_error(rc: int, err: str, fragment: str) -> None:
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("jaxrl: "), err
    assert fragment in lines[0], err


def namespace_available() -> bool:
    """Whether this machine lets a process mount in a private user and mount namespace."""
    if shutil.which("unshare") is None:
        return False
    try:
        return subprocess.run(["unshare", "-Urm", "true"], capture_output=True,
                              timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


needs_namespace = pytest.mark.skipif(not namespace_available(),
                                     reason="no private mount namespace (unshare -Urm) here")


def in_namespace(mount: str, script: str, timeout: float = 120) -> dict:
    """Run ``script`` (Python) after the shell commands ``mount``, in a private user and mount
    namespace (nothing is mounted outside it); returns the JSON it prints last."""
    proc = subprocess.run(["unshare", "-Urm", "sh", "-c", f"{mount} && exec \"$0\" -c \"$1\"",
                           sys.executable, textwrap.dedent(script)], capture_output=True,
                          text=True, timeout=timeout, cwd=REPO,
                          env=dict(os.environ, PYTHONPATH=str(REPO)))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


RUN_COMMANDS = '''
import contextlib, io, json, sys, traceback
from jaxrl.cli import main

def run(argv):
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main([str(a) for a in argv])
    except BaseException:
        rc, err = "traceback", io.StringIO(traceback.format_exc())
    return {"rc": rc, "out": out.getvalue(), "err": err.getvalue()}
'''


# -- a read-only store -----------------------------------------------------------------------------
@needs_namespace
def test_a_read_only_store_with_a_dead_run_is_fully_readable(root, tmp_path):
    query.ls(RunStore(root))  # catalogued while writable: .catalog exists, then goes read-only
    dead_running_run(root)  # ... and a run killed after that, still marked running
    mnt = tmp_path / "ro"
    mnt.mkdir()
    reads = [["runs", "--runs-dir", mnt, "ls"], ["runs", "--runs-dir", mnt, "sql",
                                                 "SELECT run_id, status FROM runs ORDER BY 1"],
             ["runs", "--runs-dir", mnt, "show", "run-dead"],
             ["runs", "--runs-dir", mnt, "latest"], ["runs", "--runs-dir", mnt, "demos"],
             ["runs", "--runs-dir", mnt, "top", "--env", "CartPole-v1"],
             ["plot", "--env", "CartPole-v1", "--runs-dir", mnt, "--out", tmp_path / "p.png"]]
    writes = [["train", "ppo", "--total-steps", "64", "--runs-dir", mnt, "--no-progress"],
              ["resume", "run-dead", "--runs-dir", mnt],
              ["demos", "run-a", "--runs-dir", mnt],
              ["runs", "--runs-dir", mnt, "check", "--quarantine"]]
    got = in_namespace(f"mount --bind {root} {mnt} && mount -o remount,ro,bind {mnt}",
                       RUN_COMMANDS + f"""
import time
t = time.monotonic()
reads = [run(a) for a in {[[str(x) for x in a] for a in reads]!r}]
t_reads = time.monotonic() - t
writes = []
for a in {[[str(x) for x in a] for a in writes]!r}:
    t = time.monotonic()
    writes.append({{**run(a), "seconds": time.monotonic() - t}})
print(json.dumps({{"reads": reads, "writes": writes}}))
""")
    for argv, r in zip(reads, got["reads"]):
        assert r["rc"] == 0 and "Traceback" not in r["err"], (argv, r)
    ls, sql, show = (r["out"] for r in got["reads"][:3])
    assert all(rid in ls for rid in ("run-a", "run-b", "run-dead")) and "interrupted" in ls
    assert [line.split()[-1] for line in sql.splitlines() if "run-dead" in line] == ["interrupted"]
    assert json.loads(show)["status"] == "interrupted"
    for argv, r in zip(writes, got["writes"]):
        one_line_error(r["rc"], r["err"], "read-only")
        assert r["seconds"] < 20, (argv, r)  # refused before anything compiles
    meta = json.loads((root / "run-dead" / "run.json").read_text())
    assert meta["status"] == "running"  # nothing was written under the mount


def test_readers_never_write_a_dead_runs_run_json(root, capsys):
    folder = dead_running_run(root)
    before = (folder / "run.json").read_bytes(), (folder / "run.json").stat().st_mtime_ns
    assert query.ls(RunStore(root)).set_index("run_id").status["run-dead"] == "interrupted"
    assert RunStore(root).load("run-dead")["status"] == "interrupted"
    rc, out, _ = cli(capsys, "runs", "--runs-dir", root, "show", "run-dead")
    assert rc == 0 and json.loads(out)["status"] == "interrupted"
    assert ((folder / "run.json").read_bytes(), (folder / "run.json").stat().st_mtime_ns) == before


def test_reads_go_on_when_every_store_write_fails(root, monkeypatch, capsys):
    """The read-only fault injected at the store's write calls (where no mount is possible)."""
    dead_running_run(root)

    def read_only(*args, **kwargs):
        raise OSError(errno.EROFS, "Read-only file system")

    monkeypatch.setattr(catalog_lock, "_open_lock", lambda folder: None)
    monkeypatch.setattr(os, "replace", read_only)
    monkeypatch.setattr(Path, "touch", read_only)
    rc, out, err = cli(capsys, "runs", "--runs-dir", root, "ls")
    assert rc == 0 and "run-dead" in out and "interrupted" in out and not err
    rc, out, _ = cli(capsys, "runs", "--runs-dir", root, "sql", "SELECT count(*) AS n FROM metrics")
    assert rc == 0 and out.split()[-1] == "56"  # 3 + 3 + 1 chunks of 8 rows, read in memory
    rc, _, err = cli(capsys, "runs", "--runs-dir", root, "check", "--quarantine")
    one_line_error(rc, err, "read-only")
    rc, _, err = cli(capsys, "train", "ppo", "--total-steps", "64", "--runs-dir", root)
    one_line_error(rc, err, "read-only")


# -- a full disk -----------------------------------------------------------------------------------
def test_a_failed_atomic_write_is_one_line_and_leaves_no_temp_file(tmp_path, monkeypatch):
    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    target = tmp_path / "run.json"
    with pytest.raises(StoreError, match=r"no space left on device to write .*run\.json: "
                                         r"\d+ bytes needed, .* available"):
        files.atomic_write_text(target, "x" * 100)
    with pytest.raises(StoreError, match=r"chunk-00000\.parquet"):
        files.atomic_write_parquet(tmp_path / "chunk-00000.parquet", pd.DataFrame({"a": [1]}))
    assert list(tmp_path.iterdir()) == []


@needs_namespace
def test_a_full_disk_is_one_line_and_the_store_stays_listable(root, tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    got = in_namespace(f"mount -t tmpfs -o size=400k none {disk}", RUN_COMMANDS + f"""
import os, shutil
from pathlib import Path
from jaxrl.runs.store import Run, RunStore, StoreError
from tests.runs.test_store_reliability import write_run, CHUNKS
root = Path({str(disk)!r}) / "runs"
shutil.copytree({str(root)!r}, root)
victim = Run(root / "run-a", json.loads((root / "run-a" / "run.json").read_text()))
free = shutil.disk_usage(root).free
with open(Path({str(disk)!r}) / "filler", "wb") as f:
    f.write(b"0" * (free - 8192))
errors = []
for write in (lambda: victim.write_chunk(CHUNKS, {{"x": __import__("numpy").zeros((2, 20000))}}, 0),
              lambda: victim.finish("finished", summary={{"note": "x" * 100000}}),
              lambda: RunStore(root).ensure_writable(10**6)):
    try:
        write()
        errors.append(None)
    except StoreError as err:
        errors.append(str(err))
leftovers = [str(p) for p in root.rglob(".*.tmp")]
result = {{"errors": errors, "leftovers": leftovers,
          "ls": run(["runs", "--runs-dir", root, "ls"]),
          "check": run(["runs", "--runs-dir", root, "check"]),
          "train": run(["train", "ppo", "--total-steps", "64", "--runs-dir", root])}}
print(json.dumps(result))
""")
    chunk_error, meta_error, space_error = got["errors"]
    assert "no space left on device to write" in chunk_error and "chunk-00003.parquet" in chunk_error
    assert "run.json" in meta_error and "needed" in meta_error and "available" in meta_error
    assert "no space left on device for a new run" in space_error
    assert got["leftovers"] == []
    for name in ("ls", "check"):
        r = got[name]
        assert r["rc"] == 0 and "Traceback" not in r["err"], (name, r)
    assert "run-a" in got["ls"]["out"] and "run-b" in got["ls"]["out"]
    assert "no bad files" in got["check"]["out"]
    one_line_error(got["train"]["rc"], got["train"]["err"], "no space left on device")


def test_a_full_disk_mid_run_ends_it_in_one_line_keeping_its_chunks(tmp_path, monkeypatch,
                                                                     capsys):
    written = Run.write_chunk

    def fills_up(self, index, metrics, first_update):
        if index == 2:
            raise files.disk_full(self.folder / "metrics" / f"chunk-{index:05d}.parquet", 4096)
        written(self, index, metrics, first_update)

    monkeypatch.setattr(Run, "write_chunk", fills_up)
    root = tmp_path / "runs"
    rc, _, err = cli(capsys, "train", "ppo", "--total-steps", "512", "--max-chunk-updates", "1",
                     "--set", "num_envs=4", "--set", "num_steps=16", "--set", "hidden=16,16",
                     "--eval-episodes", "0", "--runs-dir", root, "--no-progress")
    one_line_error(rc, err, "no space left on device to write")
    (folder,) = root.iterdir()
    assert sorted(p.name for p in (folder / "metrics").iterdir()) == [
        "chunk-00000.parquet", "chunk-00001.parquet"]
    listed = query.ls(RunStore(root))
    assert listed.status.tolist() == ["failed"] and not listed.damaged.any()


# -- a stuck lock holder ---------------------------------------------------------------------------
HOLD_LOCK = """
import os, signal, sys
from pathlib import Path
from jaxrl.runs import catalog_lock
with catalog_lock.locked(Path(sys.argv[1]), "cataloguing"):
    print("held", flush=True)
    os.kill(os.getpid(), signal.SIGSTOP)
"""


def test_a_stopped_lock_holder_blocks_no_reader(root, capsys, monkeypatch):
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK, str(root)], cwd=REPO,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        for argv in (["ls"], ["sql", "SELECT run_id FROM runs ORDER BY 1"]):
            start = time.monotonic()
            proc = subprocess.run([sys.executable, "-m", "jaxrl.cli", "runs", "--runs-dir",
                                   str(root), *argv], capture_output=True, text=True, timeout=60,
                                  cwd=REPO)
            assert time.monotonic() - start < 15, argv
            assert proc.returncode == 0 and "run-a" in proc.stdout and "run-b" in proc.stdout
            assert f"catalog lock of {root} held by PID {holder.pid} (" in proc.stderr
            assert "cataloguing) for" in proc.stderr and "reading without it" in proc.stderr
            assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        monkeypatch.setattr(catalog_lock, "LOCK_WAIT_SECONDS", 0.2)
        start = time.monotonic()
        catalog.catalogue_finished(root)  # what a training process does once its runs end
        assert time.monotonic() - start < 2
        assert "was not refreshed after the run" in capsys.readouterr().err
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait()


# -- one bad value, run.json of the wrong shape ----------------------------------------------------
BAD_VALUES = {
    "huge-budget": {"total_steps_per_seed": 1e30},
    "huge-int": {"total_steps_per_seed": 10**30},
    "text-seeds": {"seeds": "two"},
    "negative-seeds": {"seeds": -3},
    "zombie": {"status": "zombie"},
    "text-return": {"final_eval_return_iqm": "high"},
}
SHAPES = {"list": [1, 2], "empty": {}, "typed-wrong": {"algo": 3, "env": ["x"], "seeds": "2",
                                                          "status": 1, "config": "lr=1",
                                                          "total_steps_per_seed": "100"}}


def bad_store(root: Path) -> list[str]:
    """``root`` with a run for each bad value and each wrong shape (and a directory named
    run.json); returns their ids."""
    base = json.loads((root / "run-a" / "run.json").read_text())
    for name, fields in BAD_VALUES.items():
        write_run(root, name, minute=5)
        (root / name / "run.json").write_text(json.dumps({**base, "run_id": name, **fields}))
    for name, meta in SHAPES.items():
        write_run(root, name, minute=6)
        (root / name / "run.json").write_text(json.dumps(meta))
    write_run(root, "folder", minute=7)
    (root / "folder" / "run.json").unlink()
    (root / "folder" / "run.json").mkdir()
    return [*BAD_VALUES, *SHAPES, "folder"]


def test_one_bad_value_flags_its_run_and_the_store_lists(root, capsys):
    bad = bad_store(root)
    listed = query.ls(RunStore(root)).set_index("run_id")
    assert set(listed.index) == {"run-a", "run-b", *bad}
    assert set(listed.index[listed.damaged]) == set(bad)
    assert listed.total_steps_per_seed.isna()["huge-budget"]
    assert listed.algo["huge-budget"] == "ppo"  # the sound fields of a damaged run still show
    rc, out, _ = cli(capsys, "runs", "--runs-dir", root, "ls")
    assert rc == 0 and all(name in out for name in bad)
    rc, out, _ = cli(capsys, "runs", "--runs-dir", root, "sql", "SELECT count(*) AS n FROM runs")
    assert rc == 0 and out.split()[-1] == str(2 + len(bad))


def test_runs_check_reports_every_bad_run_json(root, capsys):
    bad = bad_store(root)
    rc, out, _ = cli(capsys, "runs", "--runs-dir", root, "check")
    assert rc == 1
    for name in bad:
        assert any(line.split()[:2] == [name, "run.json"] for line in out.splitlines()[1:]
                   if len(line.split()) > 2), (name, out)
    assert "total_steps_per_seed is not a whole number" in out and "Is a directory" in out
    rc, _, _ = cli(capsys, "runs", "--runs-dir", root, "check", "--quarantine")
    assert not (root / "folder" / "run.json").exists()  # a folder named run.json moves aside too
    assert set(query.ls(RunStore(root)).query("damaged").run_id) == set(bad)


@pytest.mark.parametrize("name", [*SHAPES, "folder", "huge-budget"])
def test_a_damaged_run_json_is_one_line_in_show_compare_resume_render(root, capsys, name,
                                                                      tmp_path):
    bad_store(root)
    for argv in (["runs", "--runs-dir", root, "show", name],
                 ["compare", name, "run-a", "--runs-dir", root],
                 ["resume", name, "--runs-dir", root],
                 ["render", name, "--runs-dir", root, "--out", tmp_path / "v.gif"]):
        rc, _, err = cli(capsys, *argv)
        one_line_error(rc, err, f"run {name!r} is damaged: its run.json")


def test_validate_meta_names_each_problem():
    assert validate_meta([]) == ["not a JSON object (a JSON list)"]
    assert {p.split()[0] for p in validate_meta({})} == {
        "algo", "env", "status", "seeds", "total_steps_per_seed", "config"}
    assert validate_meta({"algo": "ppo", "env": "e", "status": "finished", "seeds": 2,
                          "total_steps_per_seed": 512, "config": {}, "extra": object()}) == []


# -- the budget ------------------------------------------------------------------------------------
def test_a_budget_the_step_counters_cannot_hold_is_refused(capsys):
    rc, _, err = cli(capsys, "train", "ppo", "--total-steps", "1e30")
    one_line_error(rc, err, "total_steps must be in [1, 2147483647] (the env-step counters are "
                            "32-bit), got 1e+30")
    rc, _, err = cli(capsys, "sweep", "ppo", "--total-steps", str(2**31), "--grid", "gamma=0.9")
    one_line_error(rc, err, "total_steps must be in [1, 2147483647]")
    with pytest.raises(ConfigError, match="env-step counters are 32-bit"):
        jaxrl.train("ppo", total_steps=2**31)


# -- a reused PID ----------------------------------------------------------------------------------
@pytest.mark.skipif(process_start_time(os.getpid()) is None, reason="no /proc start times")
def test_a_run_whose_pid_was_reused_reads_as_interrupted(root):
    identity = process_identity()
    assert identity["pid_started"] == process_start_time(os.getpid())
    write_run(root, "alive", status="running", minute=3)
    write_run(root, "reused", status="running", minute=4)
    for name, started in (("alive", identity["pid_started"]),
                          ("reused", identity["pid_started"] - 1)):
        meta = json.loads((root / name / "run.json").read_text())
        (root / name / "run.json").write_text(json.dumps({**meta, **identity,
                                                          "pid_started": started}))
    statuses = query.ls(RunStore(root)).set_index("run_id").status
    assert statuses["alive"] == "running" and statuses["reused"] == "interrupted"


# -- links (issue 54, item 2) ----------------------------------------------------------------------
def per_run(root: Path) -> dict:
    """``{run_id: (rows, max(episode_return_mean))}``: what each run's values read as."""
    frame = query.sql("SELECT run_id, count(*) AS n, max(episode_return_mean) AS top FROM metrics "
                      "GROUP BY run_id ORDER BY run_id", RunStore(root))
    return {r.run_id: (r.n, r.top) for r in frame.itertuples()}


LOOP = "Too many levels of symbolic links"


def test_a_looping_link_at_the_top_of_the_store_is_one_warning(root, capsys):
    intact = per_run(root)
    for name in ("loop", "20260101-000000-ppo-loop-abc123"):  # named like a run id, or not
        (root / name).symlink_to(name)
    for argv in (["ls"], ["ls"], ["sql", "SELECT run_id, count(*) AS n FROM metrics GROUP BY 1"]):
        rc, out, err = cli(capsys, "runs", "--runs-dir", root, *argv)
        lines = err.strip().splitlines()
        assert rc == 0 and "run-a" in out and "run-b" in out, (argv, err)
        assert len(lines) == 2 and all(f"of the run store: unreadable: {LOOP}" in line
                                       for line in lines), (argv, err)
    with pytest.warns(UserWarning, match=LOOP):
        assert per_run(root) == intact
    rc, out, _ = cli(capsys, "runs", "--runs-dir", root, "check")
    assert rc == 1 and "2 bad files" in out and out.count(LOOP) == 2, out
    rc, out, _ = cli(capsys, "runs", "--runs-dir", root, "check", "--quarantine")
    assert rc == 1 and "2 moved to" in out
    assert os.path.islink(root / ".quarantine" / "loop") and not os.path.lexists(root / "loop")
    rc, out, err = cli(capsys, "runs", "--runs-dir", root, "check")
    assert rc == 0 and not err
    assert per_run(root) == intact and not query.ls(RunStore(root)).damaged.any()


def test_a_looping_chunk_link_is_reported_and_moved_aside(root, capsys):
    intact = per_run(root)
    link = root / "run-a" / "metrics" / "chunk-00007.parquet"
    link.symlink_to(link.name)
    with pytest.warns(UserWarning, match=f"run run-a: skipping bad file metrics/chunk-00007"
                                         rf"\.parquet \(unreadable: {LOOP}\)"):
        assert per_run(root) == intact
    rc, out, _ = cli(capsys, "runs", "--runs-dir", root, "check", "--quarantine")
    assert rc == 1 and LOOP in out and "1 moved to" in out
    assert os.path.islink(root / ".quarantine" / "run-a" / "metrics" / link.name)
    assert not os.path.lexists(link) and per_run(root) == intact


def _other_file_system(tmp_path: Path) -> Path | None:
    """A writable folder on another file system than ``tmp_path`` (``/dev/shm``), if any."""
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK) and shm.stat().st_dev != tmp_path.stat().st_dev:
        return shm
    return None


@pytest.fixture(params=["real", "injected"])
def away(request, tmp_path, monkeypatch) -> Path:
    """A folder on another file system: a real one (``/dev/shm``), or a rename between two
    folders made to fail with ``EXDEV`` as it would."""
    if request.param == "real":
        shm = _other_file_system(tmp_path)
        if shm is None:
            pytest.skip("no writable file system besides the test's")
        folder = shm / f"jaxrl-test-{os.getpid()}-{time.monotonic_ns()}"
        folder.mkdir()
        request.addfinalizer(lambda: shutil.rmtree(folder, ignore_errors=True))
        return folder
    rename = os.rename

    def cross_device(src, dst):
        if Path(src).parent != Path(dst).parent and str(tmp_path / "away") in str(src):
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        rename(src, dst)

    monkeypatch.setattr(os, "rename", cross_device)
    return tmp_path / "away"


def test_quarantine_moves_files_of_a_run_folder_on_another_file_system(root, away, capsys):
    """``runs check --quarantine`` copies each bad file (and a folder named ``run.json``) into
    the quarantine, then removes it: nothing is lost, and the rest of the store is intact."""
    away.mkdir(exist_ok=True)
    shutil.move(root / "run-b", away / "run-b")
    (root / "run-b").symlink_to(away / "run-b")
    intact = per_run(root)
    chunk = away / "run-b" / "metrics" / "chunk-00001.parquet"
    os.truncate(chunk, 100)
    content = chunk.read_bytes()
    (away / "run-b" / "run.json").unlink()
    (away / "run-b" / "run.json").mkdir()
    (away / "run-b" / "run.json" / "inside").write_text("kept")
    rc, out, err = cli(capsys, "runs", "--runs-dir", root, "check", "--quarantine")
    assert rc == 1 and "2 moved to" in out and "Traceback" not in err, (out, err)
    quarantined = root / ".quarantine" / "run-b"
    assert (quarantined / "metrics" / "chunk-00001.parquet").read_bytes() == content
    assert (quarantined / "run.json" / "inside").read_text() == "kept"
    assert not chunk.exists() and not (away / "run-b" / "run.json").exists()
    assert [p.name for p in quarantined.rglob(".*")] == []  # no partial copy left
    listed = query.ls(RunStore(root)).set_index("run_id")
    assert listed.damaged.to_dict() == {"run-a": False, "run-b": True}
    assert per_run(root) == {"run-a": intact["run-a"],
                             "run-b": (intact["run-b"][0] - 8, intact["run-b"][1])}


def test_a_quarantine_that_cannot_copy_is_one_line(root, tmp_path, capsys, monkeypatch):
    def cross_device(src, dst):
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    chunk = root / "run-b" / "metrics" / "chunk-00001.parquet"
    os.truncate(chunk, 100)
    monkeypatch.setattr(os, "rename", cross_device)
    monkeypatch.setattr(shutil, "copy2", full)
    rc, _, err = cli(capsys, "runs", "--runs-dir", root, "check", "--quarantine")
    one_line_error(rc, err, f"cannot move {chunk} to ")
    assert "No space left on device" in err and chunk.stat().st_size == 100
    assert not any((root / ".quarantine").rglob("*.parquet*"))


# -- a full disk while checking (issue 54, item 4) -------------------------------------------------
def test_runs_check_on_a_full_disk_reads_in_memory(root, capsys, monkeypatch):
    intact = per_run(root)  # catalogued while there was room
    os.truncate(root / "run-b" / "metrics" / "chunk-00002.parquet", 100)

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    rc, out, err = cli(capsys, "runs", "--runs-dir", root, "check")
    lines = err.strip().splitlines()
    assert rc == 1 and "run-b" in out and "metrics/chunk-00002.parquet" in out, (out, err)
    assert len(lines) == 1 and "was not written (no space left on device to write" in lines[0]
    assert "reading without it" in lines[0]
    for argv in (["ls"], ["sql", "SELECT count(*) AS n FROM metrics"]):
        rc, out, err = cli(capsys, "runs", "--runs-dir", root, *argv)
        assert rc == 0 and "Traceback" not in err
    rc, out, _ = cli(capsys, "runs", "--runs-dir", root, "check", "--quarantine")
    assert rc == 1 and "1 moved to" in out  # a rename needs no room
    monkeypatch.undo()
    assert per_run(root) == {"run-a": intact["run-a"],
                             "run-b": (intact["run-b"][0] - 8, intact["run-b"][1])}


# -- a write cut short (issue 54, item 5) ----------------------------------------------------------
KILLED_WRITE = """
import os, sys, time
from pathlib import Path
from jaxrl.runs import files

def stuck(*args):  # the kill comes between the write and the rename
    print("written", flush=True)
    time.sleep(120)

os.replace = stuck
files.atomic_write_text(Path(sys.argv[1]), "{}")
"""


def test_a_temp_file_a_killed_write_left_is_reported_and_removed(root, capsys):
    intact = per_run(root)
    proc = subprocess.Popen([sys.executable, "-c", KILLED_WRITE, str(root / "run-a" / "run.json")],
                            cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "written"
    finally:
        proc.kill()
        proc.wait()
    (leftover,) = (root / "run-a").glob(".run.json.*.tmp")
    under_way = root / "run-b" / "metrics" / ".chunk-00009.parquet.0123abcd.tmp"
    under_way.write_bytes(b"PAR1")  # a write in progress this very moment
    rc, out, _ = cli(capsys, "runs", "--runs-dir", root, "check")
    assert rc == 1 and leftover.name in out and under_way.name in out and "2 bad files" in out
    old = time.time() - 3600
    os.utime(leftover, (old, old))
    rc, out, _ = cli(capsys, "runs", "--runs-dir", root, "check", "--quarantine")
    assert rc == 1 and "a killed process" in out and "1 leftover temp files removed" in out, out
    assert not leftover.exists() and under_way.exists()  # a write under way is never cut
    assert not (root / ".quarantine").exists()
    listed = query.ls(RunStore(root))
    assert not listed.damaged.any() and per_run(root) == intact


# -- two benches of one suite (issue 54, item 5) ---------------------------------------------------
CLAIM_THEN_FINISH = """
import sys
from pathlib import Path
from jaxrl.runs.run_lock import claim

with claim(Path(sys.argv[1])) as held:
    print("held" if held else "not held", flush=True)
    sys.stdin.readline()  # the other bench has reached its other entry
    folder = Path(sys.argv[2])
    folder.mkdir()
    (folder / "run.json").write_text(sys.argv[3])
"""


def bench_run_json(run_id: str, entry, bench_id: str, seed: int) -> str:
    """The run.json of a finished run of bench entry ``entry``, as a bench records it."""
    spec = {**entry.to_dict(), "seed": seed, "configs": [entry.config]}
    return json.dumps({"run_id": run_id, "algo": entry.algo, "env": entry.env,
                       "status": "finished", "seeds": entry.seeds,
                       "total_steps_per_seed": entry.total_steps, "config": entry.config,
                       "bench_id": bench_id, "bench_entry": entry.name, "group": {"spec": spec},
                       "started_at": "2026-01-01T00:00:00+00:00"})


def test_two_benches_of_one_suite_train_each_entry_once(tmp_path, capsys, monkeypatch):
    """While another process trains an entry (holds its claim), a bench trains the other
    entries first, then waits, and skips the entry the other process finished."""
    from jaxrl.studies.bench import report as bench_report
    from jaxrl.studies.bench import runner as benchmarks
    from tests.studies.bench.test_bench import TINY

    suite = tmp_path / "tiny.yaml"
    suite.write_text(TINY)
    spec = benchmarks.load_suite(str(suite))
    first, second = spec.entries
    store = RunStore(tmp_path / "runs")
    bid = benchmarks.bench_id(spec, list(spec.entries), 1.0)
    claim_file = bench_report.claim_path(store, bid, benchmarks.entry_key(first, spec.seed))
    other = subprocess.Popen(
        [sys.executable, "-c", CLAIM_THEN_FINISH, str(claim_file), str(store.root / "run-other"),
         bench_run_json("run-other", first, bid, spec.seed)],
        cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    trained = []

    def train(algo, env, **kwargs):  # records a finished run as training would
        entry = next(e for e in spec.entries if e.algo == algo)
        trained.append(entry.name)
        folder = store.root / f"run-{algo}"
        folder.mkdir(parents=True)
        (folder / "run.json").write_text(bench_run_json(folder.name, entry, bid, spec.seed))
        other.stdin.write("go\n")  # the other process finishes its entry now
        other.stdin.flush()

    monkeypatch.setattr(benchmarks, "train", train)
    monkeypatch.setattr(bench_report, "write", lambda store, bid, out=None: tmp_path)
    monkeypatch.setattr(bench_report, "entry_table", lambda store, bid: None)
    try:
        assert other.stdout.readline().strip() == "held"
        result = benchmarks.bench(str(suite), runs_dir=str(store.root))
    finally:
        other.kill()
        other.wait()
    assert trained == [second.name]
    assert result.ran == [second.name] and result.skipped == [first.name]
    err = capsys.readouterr().err
    assert f"{first.name} is being trained by pid {other.pid}" in err
    assert f"waiting for the process training {first.name}" in err
    assert f"{first.name} finished by another process (run run-other), skipped" in err
    assert sorted(p.name for p in store.root.iterdir() if p.name.startswith("run-")) == [
        "run-a2c", "run-other"]


def test_a_lock_read_before_its_holder_wrote_its_pid_waits_for_the_pid(tmp_path):
    """A holder writes its PID just after taking the lock: a refused second writer that reads
    the file in between names the PID once it is there, not "another process"."""
    import threading

    from jaxrl.runs.run_lock import holder

    path = tmp_path / ".lock"
    path.write_bytes(b"")
    threading.Timer(0.05, lambda: path.write_bytes(b"4242")).start()
    assert holder(path) == "pid 4242"
    path.write_bytes(b"")
    assert holder(path, wait=0.02) == "another process"

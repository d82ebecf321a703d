"""The run store under bad files, hostile SQL and scale: one bad file never blocks a query (it
is skipped with a one-line warning and its run flagged ``damaged``), ``jaxrl runs check`` finds
and quarantines bad files, ``runs sql`` is read-only and confined to the store, and the
catalog follows runs as they are written. Stores are built by hand: no training."""

import json
import os
import shutil
import socket
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from jaxrl.cli import main
from jaxrl.runs import catalog, query, segments
from jaxrl.runs.integrity import StoreWarning, check_store
from jaxrl.runs.store import RunStore, StoreError
from jaxrl.runs.text_table import format_frame

SEEDS, UPDATES, CHUNKS = 2, 4, 3  # per chunk: SEEDS x UPDATES rows


def write_run(root: Path, run_id: str, algo: str = "ppo", status: str = "finished",
              chunks: int = CHUNKS, minute: int = 0) -> Path:
    """A run folder in the store's format: run.json, metrics chunks, evaluations."""
    folder = root / run_id
    (folder / "metrics").mkdir(parents=True)
    for c in range(chunks):
        write_chunk(folder, c)
    evals = pd.DataFrame({"run_id": run_id, "seed": range(SEEDS), "update": UPDATES * chunks - 1,
                          "env_steps": 512, "eval_return": [10.0, 20.0], "eval_return_std": 1.0})
    evals.to_parquet(folder / "evaluations.parquet", index=False)
    meta = {"run_id": run_id, "algo": algo, "env": "CartPole-v1", "status": status,
            "seeds": SEEDS, "total_steps_per_seed": 512, "final_eval_return_iqm": 15.0,
            "started_at": f"2026-01-01T00:{minute:02d}:00+00:00", "config": {"gamma": 0.99},
            "final_eval_return": [10.0, 20.0], "pid": os.getpid(), "host": socket.gethostname()}
    (folder / "run.json").write_text(json.dumps(meta))
    return folder


def write_chunk(folder: Path, index: int) -> None:
    first = index * UPDATES
    frame = pd.DataFrame({"run_id": folder.name, "seed": np.repeat(np.arange(SEEDS), UPDATES),
                          "update": np.tile(np.arange(first, first + UPDATES), SEEDS),
                          "env_steps": 0.0, "episode_return_mean": np.arange(SEEDS * UPDATES,
                                                                             dtype=float),
                          "episode_count": 1.0, "value_loss": 1.0})
    frame["env_steps"] = (frame["update"] + 1) * 64.0
    frame.to_parquet(folder / "metrics" / f"chunk-{index:05d}.parquet", index=False)


def truncate(path: Path, size: int = 100) -> None:
    os.truncate(path, size)


@pytest.fixture()
def store(tmp_path):
    root = tmp_path / "runs"
    for i, run_id in enumerate(["run-a", "run-b", "run-c"]):
        write_run(root, run_id, algo="ppo" if i != 1 else "dqn", minute=i)
    return RunStore(root)


def n_metrics(store) -> int:
    return int(query.sql("SELECT count(*) AS n FROM metrics", store).n[0])


def damaged(store) -> set:
    frame = query.ls(store)
    return set(frame.run_id[frame.damaged])


CHUNK_ROWS = SEEDS * UPDATES


def test_a_truncated_chunk_is_skipped_and_its_run_flagged(store, tmp_path, capsys):
    truncate(store.root / "run-b" / "metrics" / "chunk-00001.parquet")
    with pytest.warns(StoreWarning, match=r"run run-b: skipping bad file metrics/chunk-00001"):
        assert damaged(store) == {"run-b"}
    with pytest.warns(StoreWarning):
        assert n_metrics(store) == 3 * CHUNKS * CHUNK_ROWS - CHUNK_ROWS
        joined = query.sql("SELECT algo, count(*) AS n FROM metrics JOIN runs USING (run_id) "
                           "GROUP BY algo ORDER BY algo", store)
        assert joined.n.tolist() == [(CHUNKS - 1) * CHUNK_ROWS, 2 * CHUNKS * CHUNK_ROWS]
        assert set(query.top("CartPole-v1", "value_loss", k=3, store=store).run_id) == {
            "run-a", "run-b", "run-c"}
        assert len(query.latest(store)) == 2
        assert len(query.load_metrics("run-b", store)) == (CHUNKS - 1) * CHUNK_ROWS
    capsys.readouterr()
    out = tmp_path / "curves.png"
    assert main(["plot", "--runs-dir", str(store.root), "--env", "CartPole-v1",
                 "--out", str(out)]) == 0
    assert out.stat().st_size > 1000
    warned = capsys.readouterr().err.strip().splitlines()
    assert warned and all(line.startswith("jaxrl: warning: run run-b: skipping bad file ")
                          for line in warned), warned


def test_cli_ls_shows_damaged_with_one_warning_line_per_bad_file(store, capsys):
    truncate(store.root / "run-a" / "metrics" / "chunk-00000.parquet", 0)
    truncate(store.root / "run-c" / "evaluations.parquet")
    assert main(["runs", "--runs-dir", str(store.root), "ls"]) == 0
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 2 and all(line.startswith("jaxrl: warning: run ") for line in lines)
    assert "run-a: skipping bad file metrics/chunk-00000.parquet" in lines[0]
    assert "run-c: skipping bad file evaluations.parquet" in lines[1]
    rows = {line.split()[0]: line.split()[-1] for line in captured.out.splitlines()[1:]}
    assert rows == {"run-a": "True", "run-b": "False", "run-c": "True"}


def test_bad_run_json_and_evaluations_are_skipped(store):
    (store.root / "run-a" / "run.json").write_text("{not json")
    truncate(store.root / "run-b" / "evaluations.parquet")
    with pytest.warns(StoreWarning) as record:
        frame = query.ls(store)
        evals = query.sql("SELECT run_id, count(*) AS n FROM evaluations GROUP BY run_id "
                          "ORDER BY run_id", store)
        assert query.load_evaluations("run-b", store).empty
        assert n_metrics(store) == 3 * CHUNKS * CHUNK_ROWS  # run-a's chunks still count
    assert {str(w.message).split(":")[0] for w in record} == {"run run-a", "run run-b"}
    assert set(frame.run_id[frame.damaged]) == {"run-a", "run-b"}
    assert frame.set_index("run_id").status.isna()["run-a"]  # listed, unknown status
    assert evals.run_id.tolist() == ["run-a", "run-c"]
    with pytest.raises(StoreError, match=r"run 'run-a' is damaged: its run\.json is not JSON"):
        query.show("run-a", store)


def test_damage_after_cataloguing_is_found_by_check(store, capsys):
    assert n_metrics(store) == 3 * CHUNKS * CHUNK_ROWS and not damaged(store)
    truncate(store.root / "run-c" / "metrics" / "chunk-00002.parquet")
    root = str(store.root)
    assert main(["runs", "--runs-dir", root, "check"]) == 1
    out = capsys.readouterr().out
    assert "run-c" in out and "metrics/chunk-00002.parquet" in out and "1 bad files" in out
    with pytest.warns(StoreWarning, match="run-c"):
        assert damaged(store) == {"run-c"}
        assert n_metrics(store) == 3 * CHUNKS * CHUNK_ROWS - CHUNK_ROWS


def test_check_quarantine_moves_bad_files_and_never_deletes(store, capsys):
    bad = store.root / "run-a" / "metrics" / "chunk-00001.parquet"
    truncate(bad, 50)
    (store.root / "run-b" / "run.json").write_text("[1, 2")
    content = bad.read_bytes()
    root = str(store.root)
    assert main(["runs", "--runs-dir", root, "check", "--quarantine"]) == 1
    out = capsys.readouterr().out
    moved = store.root / ".quarantine" / "run-a" / "metrics" / "chunk-00001.parquet"
    assert moved.read_bytes() == content and not bad.exists()
    assert (store.root / ".quarantine" / "run-b" / "run.json").read_text() == "[1, 2"
    assert str(moved) in out and "2 moved to" in out
    assert main(["runs", "--runs-dir", root, "check"]) == 0
    assert "no bad files" in capsys.readouterr().out
    assert damaged(store) == {"run-a", "run-b"}  # quarantined files keep their runs flagged
    assert n_metrics(store) == 3 * CHUNKS * CHUNK_ROWS - CHUNK_ROWS


def test_check_reads_whole_files(store):
    chunk = store.root / "run-b" / "metrics" / "chunk-00000.parquet"
    data = bytearray(chunk.read_bytes())
    data[4:40] = b"\xff" * 36  # page header garbage; both ends intact
    chunk.write_bytes(bytes(data))
    assert [(b.run_id, b.file) for b in check_store(store.root)] == [
        ("run-b", "metrics/chunk-00000.parquet")]
    assert check_store(store.root / "nowhere") == []


REFUSED = [
    ("COPY (SELECT 1) TO '{out}/x.csv'", "COPY"),
    ("SELECT * FROM read_csv_auto('/etc/passwd')", "disabled by configuration"),
    ("SELECT * FROM read_text('/etc/hostname')", "disabled by configuration"),
    ("ATTACH '{out}/x.db' AS x", "ATTACH"),
    ("INSTALL httpfs", "INSTALL"),
    ("LOAD httpfs", "LOAD"),
    ("SET enable_external_access = true", "SET"),
    ("CREATE TABLE t AS SELECT 1", "CREATE"),
    ("SELECT 1; COPY (SELECT 1) TO '{out}/y.csv'", "COPY"),
    ("EXPORT DATABASE '{out}/db'", "EXPORT"),
]


@pytest.mark.parametrize("statement, fragment", REFUSED)
def test_sql_is_read_only_and_confined_to_the_store(store, tmp_path, capsys, statement, fragment):
    out = tmp_path / "outside"
    out.mkdir()
    statement = statement.format(out=out)
    with pytest.raises(query.QueryError, match=fragment):
        query.sql(statement, store)
    assert main(["runs", "--runs-dir", str(store.root), "sql", statement]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("jaxrl: ") and fragment in err[0], err
    assert list(out.iterdir()) == []


def test_store_files_cannot_be_read_directly_either(store):
    chunk = store.root / "run-a" / "metrics" / "chunk-00000.parquet"
    with pytest.raises(query.QueryError, match="disabled by configuration"):
        query.sql(f"SELECT * FROM read_parquet('{chunk}')", store)


def test_sql_reads_the_views_after_the_lock(store):
    for statement in ("DESCRIBE metrics", "SUMMARIZE runs", "EXPLAIN SELECT * FROM metrics",
                      "SELECT count(*) FROM evaluations", "FROM runs"):
        assert len(query.sql(statement, store))
    with pytest.raises(query.QueryError, match="syntax error"):
        query.sql("SELEC 1", store)
    with pytest.raises(query.QueryError, match="empty query"):
        query.sql(" ", store)


def test_catalog_follows_runs_as_they_are_written(store):
    assert n_metrics(store) == 3 * CHUNKS * CHUNK_ROWS
    assert len(list((store.root / ".catalog" / "segments").glob("*-metrics.parquet"))) == 1
    live = write_run(store.root, "run-d", status="running", chunks=1, minute=9)
    assert n_metrics(store) == (3 * CHUNKS + 1) * CHUNK_ROWS
    write_chunk(live, 1)  # a running run is read from its own files at every query
    assert n_metrics(store) == (3 * CHUNKS + 2) * CHUNK_ROWS
    meta = json.loads((live / "run.json").read_text())
    (live / "run.json").write_text(json.dumps({**meta, "status": "finished"}))
    assert n_metrics(store) == (3 * CHUNKS + 2) * CHUNK_ROWS
    rows = catalog.read_rows(store.root)
    assert rows.segment.notna().all()
    for path in (store.root / "run-a").rglob("*"):  # a run removed by hand leaves the views
        path.unlink() if path.is_file() else None
    assert n_metrics(store) == (2 * CHUNKS + 2) * CHUNK_ROWS
    assert set(query.ls(store).run_id) == {"run-b", "run-c", "run-d"}


def test_ls_compacts_nothing_and_counts_stay_right(store):
    assert len(query.ls(store)) == 3
    assert catalog.read_rows(store.root).segment.isna().all()  # ls needs no metrics
    assert n_metrics(store) == 3 * CHUNKS * CHUNK_ROWS
    write_chunk(store.root / "run-a", CHUNKS)  # run-a leaves its segment ...
    write_run(store.root, "run-d", minute=9)  # ... and run-d is new
    assert len(query.ls(store)) == 4
    assert n_metrics(store) == (4 * CHUNKS + 1) * CHUNK_ROWS


def test_a_dead_running_run_is_marked_interrupted(store):
    write_run(store.root, "run-x", status="running")
    meta = json.loads((store.root / "run-x" / "run.json").read_text())
    (store.root / "run-x" / "run.json").write_text(json.dumps({**meta, "pid": 2 ** 22 + 7}))
    listed = query.ls(store).set_index("run_id")
    assert listed.status["run-x"] == "interrupted"


def test_a_damaged_catalog_segment_is_rebuilt(store):
    assert n_metrics(store) == 3 * CHUNKS * CHUNK_ROWS
    for segment in (store.root / ".catalog" / "segments").glob("*.parquet"):
        truncate(segment, 10)
    assert n_metrics(store) == 3 * CHUNKS * CHUNK_ROWS
    assert not damaged(store)


def test_a_catalog_that_cannot_be_written_still_answers(store, monkeypatch):
    assert n_metrics(store) == 3 * CHUNKS * CHUNK_ROWS  # catalogued while writable

    @contextmanager
    def read_only(root):
        yield False

    monkeypatch.setattr(catalog, "locked", read_only)
    write_run(store.root, "run-d", minute=9)
    write_chunk(store.root / "run-a", CHUNKS)  # run-a changed: its segment rows are stale
    assert n_metrics(store) == (4 * CHUNKS + 1) * CHUNK_ROWS
    counts = query.sql("SELECT run_id, count(*) AS n FROM metrics GROUP BY run_id "
                       "ORDER BY run_id", store)
    assert counts.n.tolist() == [(CHUNKS + 1) * CHUNK_ROWS] + [CHUNKS * CHUNK_ROWS] * 3


def test_many_small_segments_are_merged(store, monkeypatch):
    monkeypatch.setattr(segments, "MAX_SMALL_SEGMENTS", 2)
    for i in range(3):  # one new segment per query that finds a new run
        write_run(store.root, f"run-n{i:02d}", minute=10 + i)
        n_metrics(store)
    assert len(set(catalog.read_rows(store.root).segment)) <= 2
    assert n_metrics(store) == 6 * CHUNKS * CHUNK_ROWS


def test_format_frame_lays_out_like_pandas():
    frame = pd.DataFrame({"run_id": ["a", "bb", None], "seeds": [1, 22, 3],
                          "iqm": [1.5, np.nan, -2.25], "sps": [50000.0, 1.0, 2.0],
                          "damaged": [True, False, True],
                          "n": pd.array([1, None, 3], dtype="Int64")})
    assert format_frame(frame) == frame.to_string(index=False)
    assert format_frame(frame.iloc[:0]) == "(no rows)"


def _ls_output(root: Path, capsys, *flags) -> tuple[str, str]:
    capsys.readouterr()
    assert main(["runs", "--runs-dir", str(root), "ls", *flags]) == 0
    captured = capsys.readouterr()
    return captured.out, captured.err


def test_ls_from_the_snapshot_prints_what_the_full_path_prints(store, capsys, monkeypatch):
    """Once the catalog is written, ``runs ls`` reads the listing snapshot (no pandas); it
    prints the same table and warnings as the full path, and a changed store is noticed."""
    from jaxrl.runs import snapshot

    meta = json.loads((store.root / "run-c" / "run.json").read_text())
    meta.update(final_eval_return_iqm=None, sweep_id="sw-1", seeds=None)  # nulls of each kind
    (store.root / "run-c" / "run.json").write_text(json.dumps(meta))
    truncate(store.root / "run-a" / "evaluations.parquet")
    full = _ls_output(store.root, capsys)  # first call: refreshes the catalog, writes the snapshot
    assert snapshot.read_current(store.root) is not None
    for flags in [(), ("--algo", "ppo"), ("--sweep", "sw-1"), ("--status", "running")]:
        monkeypatch.setattr(snapshot, "read_current", lambda root: None)  # force the full path
        expected = _ls_output(store.root, capsys, *flags)
        monkeypatch.undo()
        assert _ls_output(store.root, capsys, *flags) == expected
    assert _ls_output(store.root, capsys) == full
    assert "NaN" in full[0] and "<NA>" in full[0] and "run-a: skipping bad file" in full[1]

    write_run(store.root, "run-d", minute=9)  # a new run: the snapshot is out of date
    assert snapshot.read_current(store.root) is None
    assert "run-d" in _ls_output(store.root, capsys)[0]
    assert snapshot.read_current(store.root) is not None  # and written again


def test_a_catalog_refresh_that_fails_after_training_is_one_warning(store, capsys, monkeypatch):
    """The training process catalogues its finished runs (so the next ``runs ls`` reads the
    snapshot); if that fails, the run still stands, and the store says so in one line."""
    def broken(root, compact_new=True):
        raise OSError("No space left on device\nsecond line")

    monkeypatch.setattr(catalog, "load", broken)
    catalog.catalogue_finished(store.root)
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not refreshed" in err[0] and "No space left" in err[0]
    monkeypatch.undo()
    catalog.catalogue_finished(store.root)
    assert sorted(r["run_id"] for r in snapshot_records(store.root)) == ["run-a", "run-b", "run-c"]


def snapshot_records(root: Path) -> list:
    from jaxrl.runs import snapshot
    return snapshot.read_current(root) or []


# -- a chunk checked against its run (issue 54, item 1) ---------------------------------------------
def rewrite(path: Path, change) -> None:
    """Rewrite the Parquet file ``path`` as ``change(frame)``, keeping its size-and-mtime
    identity fresh (a file changed in place, as a hand edit would)."""
    change(pd.read_parquet(path)).to_parquet(path, index=False)


def per_run(store) -> pd.DataFrame:
    """What each run's metrics read as: rows, max and sum of ``episode_return_mean``."""
    return query.sql("SELECT run_id, count(*) AS n, max(episode_return_mean) AS top, "
                     "sum(episode_return_mean) AS total FROM metrics GROUP BY run_id "
                     "ORDER BY run_id", store).set_index("run_id")


def metric_types(store) -> dict:
    return dict(query.sql("DESCRIBE metrics", store)[["column_name", "column_type"]].values)


# the Arrow type pandas writes text as: ``string``, or ``large_string`` from pandas 3 on
TEXT = str(pa.Table.from_pandas(pd.DataFrame({"x": ["1"]})).schema.field("x").type)
MISMATCHES = {
    "text-metric": (lambda f: f.assign(episode_return_mean=f.episode_return_mean.map(
        lambda v: f"{v + 60:.1f}")), f"column 'episode_return_mean' holds {TEXT}"),
    "another-runs-id": (lambda f: f.assign(run_id="run-a"), "rows of another run: run_id 'run-a'"),
    "dropped-column": (lambda f: f.drop(columns="value_loss"), "missing value_loss"),
    "renamed-column": (lambda f: f.rename(columns={"value_loss": "vloss"}),
                       "missing value_loss; extra vloss"),
    "extra-column": (lambda f: f.assign(bogus=1.0), "extra bogus"),
    "float-seeds": (lambda f: f.assign(seed=f.seed.astype(float)), "column 'seed' holds double"),
    "no-run-id": (lambda f: f.drop(columns="run_id"), "no run_id column"),
}
STORE_TYPES = {"run_id": "VARCHAR", "seed": "BIGINT", "update": "BIGINT", "env_steps": "DOUBLE",
               "episode_return_mean": "DOUBLE", "episode_count": "DOUBLE", "value_loss": "DOUBLE"}


@pytest.mark.parametrize("change, reason", MISMATCHES.values(), ids=list(MISMATCHES))
@pytest.mark.parametrize("catalogued", [False, True], ids=["new", "changed-in-place"])
def test_a_chunk_that_does_not_match_its_run_is_kept_out(store, tmp_path, capsys, change, reason,
                                                         catalogued):
    """A chunk of the right name and another shape flags its run damaged, stays out of every
    query, and leaves every other run's values and the views' types as they were; ``runs
    check`` lists it and ``--quarantine`` moves it. Changed in place after cataloguing, queries
    serve the catalogued copy until ``runs check`` finds it."""
    twin = RunStore(tmp_path / "twin")
    shutil.copytree(store.root, twin.root)
    intact = per_run(twin)  # the same runs, undamaged
    if catalogued:
        per_run(store)
    chunk = store.root / "run-b" / "metrics" / "chunk-00001.parquet"
    rewrite(chunk, change)
    if catalogued:
        assert main(["runs", "--runs-dir", str(store.root), "check"]) == 1
        out = capsys.readouterr().out
        assert "run-b" in out and "metrics/chunk-00001.parquet" in out and reason in out, out
    with pytest.warns(StoreWarning, match="run run-b: skipping bad file metrics/chunk-00001"):
        assert damaged(store) == {"run-b"}
        now = per_run(store)
        assert metric_types(store) == STORE_TYPES  # no column changed or added
        assert set(query.top("CartPole-v1", "episode_return_mean", k=3, store=store).run_id) == {
            "run-a", "run-b", "run-c"}
        assert len(query.load_metrics("run-b", store)) == (CHUNKS - 1) * CHUNK_ROWS
        assert query.sql("SELECT avg(episode_return_mean) AS m FROM metrics", store).m[0] >= 0
    pd.testing.assert_frame_equal(now.drop("run-b"), intact.drop("run-b"))
    assert now.n["run-b"] == intact.n["run-b"] - CHUNK_ROWS
    capsys.readouterr()
    assert main(["runs", "--runs-dir", str(store.root), "check", "--quarantine"]) == 1
    out = capsys.readouterr().out
    assert reason in out and "1 moved to" in out
    assert (store.root / ".quarantine" / "run-b" / "metrics" / "chunk-00001.parquet").is_file()
    assert main(["runs", "--runs-dir", str(store.root), "check"]) == 0


def test_chunk_types_that_cast_exactly_are_read_with_the_stores(store):
    """int32 seeds and float32 metrics in every chunk of a run: read, as BIGINT and DOUBLE."""
    before = per_run(store)
    for chunk in (store.root / "run-b" / "metrics").glob("chunk-*.parquet"):
        rewrite(chunk, lambda f: f.astype({"seed": "int32", "episode_return_mean": "float32"}))
    shutil.rmtree(store.root / ".catalog")  # changed in place: catalogue the store again
    assert not damaged(store)
    pd.testing.assert_frame_equal(per_run(store), before)
    assert metric_types(store) == STORE_TYPES


def test_another_runs_id_without_statistics_is_found_in_the_column(store):
    """A writer that keeps no column statistics: the run_id values are read themselves."""
    chunk = store.root / "run-c" / "metrics" / "chunk-00002.parquet"
    table = pq.read_table(chunk)
    ids = ["run-c"] * (CHUNK_ROWS - 1) + ["run-a"]
    pq.write_table(table.set_column(0, "run_id", pa.array(ids)), chunk, write_statistics=False)
    with pytest.warns(StoreWarning, match="run-c: skipping bad file metrics/chunk-00002.parquet "
                                          r"\(rows of another run: run_id 'run-a'\)"):
        assert per_run(store).n.to_dict() == {"run-a": CHUNKS * CHUNK_ROWS,
                                              "run-b": CHUNKS * CHUNK_ROWS,
                                              "run-c": (CHUNKS - 1) * CHUNK_ROWS}
    assert [(b.run_id, b.file) for b in check_store(store.root)] == [
        ("run-c", "metrics/chunk-00002.parquet")]


def test_a_run_written_with_large_strings_joins_the_others(store):
    """pandas 3 writes text columns as ``large_string`` where pandas 2 wrote ``string``: a store
    holding runs of both is whole, every run in every view, none flagged."""
    for path in (store.root / "run-b").rglob("*.parquet"):
        table = pq.read_table(path)
        pq.write_table(table.cast(pa.schema(
            [pa.field(f.name, pa.large_string() if pa.types.is_string(f.type) else f.type)
             for f in table.schema])), path)
    assert pq.read_schema(store.root / "run-b" / "evaluations.parquet").field(
        "run_id").type == pa.large_string()
    assert not check_store(store.root) and damaged(store) == set()
    assert per_run(store).n.to_dict() == dict.fromkeys(["run-a", "run-b", "run-c"],
                                                        CHUNKS * CHUNK_ROWS)
    evals = query.sql("SELECT run_id, count(*) AS n FROM evaluations GROUP BY run_id "
                      "ORDER BY run_id", store)
    assert evals.run_id.tolist() == ["run-a", "run-b", "run-c"] and set(evals.n) == {SEEDS}
    assert metric_types(store) == STORE_TYPES


@pytest.mark.parametrize("change, reason", [
    (lambda f: f.assign(eval_return=f.eval_return.astype(str)), f"'eval_return' holds {TEXT}"),
    (lambda f: f.drop(columns="eval_return_std"), "missing eval_return_std"),
    (lambda f: f.assign(run_id="run-c"), "rows of another run: run_id 'run-c'"),
], ids=["text", "dropped", "another-run"])
def test_evaluations_that_do_not_match_the_store_are_kept_out(store, change, reason):
    rewrite(store.root / "run-a" / "evaluations.parquet", change)
    with pytest.warns(StoreWarning, match="run run-a: skipping bad file evaluations.parquet"):
        evals = query.sql("SELECT run_id, count(*) AS n, avg(eval_return) AS m FROM evaluations "
                          "GROUP BY run_id ORDER BY run_id", store)
        assert damaged(store) == {"run-a"}
    assert evals.run_id.tolist() == ["run-b", "run-c"] and evals.m.tolist() == [15.0, 15.0]
    assert reason in check_store(store.root)[0].reason


@pytest.mark.parametrize("name", ["chunk-00000 (copy).parquet", "chunk-00001.parquet.bak",
                                  "chunk-1.parquet", "notes.txt"])
def test_a_file_the_store_did_not_write_never_joins_its_run(store, capsys, name):
    """A file manager's copy of a chunk (or any file not named as the writer names chunks) is
    never read: counts stay right, and ``runs check`` lists it, left in place."""
    metrics = store.root / "run-a" / "metrics"
    shutil.copy(metrics / "chunk-00000.parquet", metrics / name)
    assert n_metrics(store) == 3 * CHUNKS * CHUNK_ROWS
    assert len(query.load_metrics("run-a", store)) == CHUNKS * CHUNK_ROWS
    assert not damaged(store)
    root = str(store.root)
    for flags in ([], ["--quarantine"]):
        assert main(["runs", "--runs-dir", root, "check", *flags]) == 1
        out = capsys.readouterr().out
        assert f"metrics/{name}" in out and "not a file the store writes" in out
    assert "1 foreign files left in place" in out and (metrics / name).is_file()

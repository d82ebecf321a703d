"""A new store's first answer (issue 77 item 11): the first aggregate over a store no query has
read checks each data file's footer once, answers from the files themselves, and leaves their
compaction to a background process; later queries read the segment it writes, and a run whose
``run.json`` alone changed is neither read again nor taken out of its segment. Counts, not
wall-clock seconds: what the fix removed is work (footer reads, compactions in the query)."""

import json
import os
import shutil
import time

import numpy as np
import pandas as pd
import pytest

from jaxrl.runs import backlog, catalog, compactor, query, schema, segments
from jaxrl.runs.integrity import StoreWarning
from jaxrl.runs.store import RunStore

SEEDS, UPDATES, CHUNKS = 2, 3, 5
METRICS = ["episode_return_mean", "value_loss"]
AGGREGATE = ("SELECT algo, count(*) AS n, avg(episode_return_mean) AS ret FROM metrics "
             "JOIN runs USING (run_id) GROUP BY algo ORDER BY algo")


def write_run(root, index: int) -> str:
    """A finished run in the store's format, ``run.json`` recording its ``metric_names``; every
    metrics row of run ``index`` has ``episode_return_mean`` = ``index``."""
    run_id = f"run-{index:04d}"
    folder = root / run_id
    (folder / "metrics").mkdir(parents=True)
    for c in range(CHUNKS):
        frame = pd.DataFrame({"run_id": run_id, "seed": np.repeat(np.arange(SEEDS), UPDATES),
                              "update": np.tile(np.arange(c * UPDATES, (c + 1) * UPDATES), SEEDS),
                              "episode_return_mean": float(index), "value_loss": 1.0})
        frame.to_parquet(folder / "metrics" / f"chunk-{c:05d}.parquet", index=False)
    pd.DataFrame({"run_id": run_id, "seed": range(SEEDS), "update": CHUNKS * UPDATES - 1,
                  "env_steps": 64, "eval_return": 1.0, "eval_return_std": 0.0}).to_parquet(
        folder / "evaluations.parquet", index=False)
    meta = {"run_id": run_id, "algo": "ppo" if index % 2 else "dqn", "env": "CartPole-v1",
            "status": "finished", "seeds": SEEDS, "total_steps_per_seed": 64,
            "started_at": f"2026-01-01T00:00:{index % 60:02d}+00:00", "config": {},
            "metric_names": sorted(METRICS)}
    (folder / "run.json").write_text(json.dumps(meta))
    return run_id


def expected(runs: int) -> pd.DataFrame:
    rows = SEEDS * UPDATES * CHUNKS
    return pd.DataFrame({"algo": ["dqn", "ppo"],
                         "n": [rows * len(range(0, runs, 2)), rows * len(range(1, runs, 2))],
                         "ret": [np.mean(range(0, runs, 2)), np.mean(range(1, runs, 2))]})


class Counts:
    """Footers read and Parquet copies made in this process (pytest's monkeypatch)."""

    def __init__(self, monkeypatch):
        self.footers = self.copies = 0
        read, copy = schema._metadata, segments.copy_parquet

        def counted_read(*args):
            self.footers += 1
            return read(*args)

        def counted_copy(*args, **kwargs):
            self.copies += 1
            return copy(*args, **kwargs)

        schema._footer.cache_clear()
        monkeypatch.setattr(schema, "_metadata", counted_read)
        monkeypatch.setattr(segments, "copy_parquet", counted_copy)

    def reset(self) -> None:
        self.footers = self.copies = 0
        schema._footer.cache_clear()  # what a fresh process knows: only the catalog


def wait_compacted(root, timeout: float = 180.0) -> pd.DataFrame:
    """The catalog rows once the background compactor has put every run in a segment."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        rows = catalog.read_rows(root)
        if not rows.empty and rows.segment.notna().all() and not compactor.running(root):
            return rows
        time.sleep(0.1)
    raise AssertionError("the background compactor did not compact the store")


def test_the_first_aggregate_reads_each_footer_once_and_compacts_in_the_background(
        tmp_path, monkeypatch):
    runs = 200  # 1,200 data files: more than catalog.BACKGROUND_FILES
    root = tmp_path / "runs"
    run_ids = [write_run(root, i) for i in range(runs)]
    store, counts = RunStore(root), Counts(monkeypatch)
    files = runs * (CHUNKS + 1)
    assert files > catalog.BACKGROUND_FILES

    first = query.sql(AGGREGATE, store)  # a store no query has read
    pd.testing.assert_frame_equal(first, expected(runs), check_dtype=False)
    assert counts.footers == files  # each file checked once, by its footer alone
    assert counts.copies == 0  # nothing compacted while the user waits
    rows = wait_compacted(root)  # ... but by a process of its own, started after the answer
    assert rows.segment.nunique() == 1

    counts.reset()
    cat = catalog.load(root)
    assert counts.footers == 0 and counts.copies == 0  # the catalog kept every check
    assert cat.segments["metrics"] and not any(cat.backlog["metrics"].values())
    pd.testing.assert_frame_equal(query.sql(AGGREGATE, store), first)

    touch(root / run_ids[7] / "run.json")
    counts.reset()
    pd.testing.assert_frame_equal(query.sql(AGGREGATE, store), first)
    assert counts.footers == 0  # its files did not change: their checks hold
    assert counts.copies == 0  # and it stays in its segment (no rewrite of 200 runs)
    assert catalog.read_rows(root).segment.tolist() == rows.segment.tolist()

    chunk = root / run_ids[9] / "metrics" / "chunk-00001.parquet"
    st = chunk.stat()
    chunk.write_bytes(chunk.read_bytes())  # rewritten in place, its mtime put back (cp -p)
    os.utime(chunk, ns=(st.st_atime_ns, st.st_mtime_ns))
    touch(root / run_ids[9] / "run.json")
    counts.reset()
    pd.testing.assert_frame_equal(query.sql(AGGREGATE, store), first)
    assert counts.footers == 1  # that file alone is checked again
    assert catalog.read_rows(root).segment[run_ids[9]] != rows.segment[run_ids[9]]


def touch(path) -> None:
    """Rewrite ``path`` in place, a second later than now (its run is read again)."""
    path.write_text(path.read_text())
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 10**9))


@pytest.fixture()
def deferred(tmp_path, monkeypatch):
    """A small store whose backlog is left to the background (no process is started: the
    tests run the compactor's work themselves)."""
    root = tmp_path / "runs"
    for i in range(4):
        write_run(root, i)
    monkeypatch.setattr(catalog, "BACKGROUND_FILES", 0)
    monkeypatch.setattr(compactor, "start", lambda root: None)
    return RunStore(root)


def test_a_backlog_file_duckdb_cannot_read_is_skipped_with_one_line(deferred):
    chunk = deferred.root / "run-0001" / "metrics" / "chunk-00002.parquet"
    data = bytearray(chunk.read_bytes())
    data[4:40] = b"\xff" * 36  # page header garbage; both ends, and the footer, intact
    chunk.write_bytes(bytes(data))
    assert catalog.load(deferred.root).compact_later
    with pytest.warns(StoreWarning, match=r"run run-0001: skipping bad file "
                                          r"metrics/chunk-00002.parquet") as caught:
        counts = query.sql("SELECT run_id, count(*) AS n FROM metrics GROUP BY run_id "
                           "ORDER BY run_id", deferred)
    assert len([w for w in caught if issubclass(w.category, StoreWarning)]) == 1
    rows = SEEDS * UPDATES
    assert counts.n.tolist() == [rows * CHUNKS, rows * (CHUNKS - 1)] + [rows * CHUNKS] * 2
    backlog.compact_backlog(deferred.root)  # the compactor finds it too, and records it
    assert catalog.read_rows(deferred.root).segment.notna().all()
    with pytest.warns(StoreWarning, match="chunk-00002"):
        listed = query.ls(deferred)
    assert listed.run_id[listed.damaged].tolist() == ["run-0001"]
    with pytest.warns(StoreWarning, match="chunk-00002"):
        again = query.sql("SELECT run_id, count(*) AS n FROM metrics GROUP BY run_id "
                          "ORDER BY run_id", deferred)
    pd.testing.assert_frame_equal(again, counts)


def test_the_compactor_commits_only_runs_that_did_not_change(deferred, monkeypatch):
    root = deferred.root
    first = query.sql(AGGREGATE, deferred)
    assert catalog.read_rows(root).segment.isna().all()
    with compactor.held(root) as mine:  # another compactor at work: this one leaves
        assert mine
        backlog.compact_backlog(root)
    assert catalog.read_rows(root).segment.isna().all()

    write_segment = segments.write_segment

    metrics = root / "run-0002" / "metrics"

    def meanwhile(root_, rows, run_ids):  # a run gets a new chunk while its segment is written
        token = write_segment(root_, rows, run_ids)
        (metrics / f"chunk-{CHUNKS:05d}.parquet").write_bytes(
            (metrics / "chunk-00000.parquet").read_bytes())
        return token

    monkeypatch.setattr(backlog, "write_segment", meanwhile)
    backlog.compact_backlog(root)
    assert catalog.read_rows(root).segment.isna().all()  # not committed: it changed
    monkeypatch.setattr(backlog, "write_segment", write_segment)
    (metrics / f"chunk-{CHUNKS:05d}.parquet").unlink()
    backlog.compact_backlog(root)
    assert catalog.read_rows(root).segment.notna().all()
    assert not catalog.load(root).compact_later
    pd.testing.assert_frame_equal(query.sql(AGGREGATE, deferred), first)


def written_run(store: RunStore, value: float) -> str:
    """A run written by the store's own writer (`Run.write_chunk`, `Run.finish`): 3 chunks of
    ``episode_return_mean`` = ``value``, and evaluations."""
    run = store.new_run("ppo", "CartPole-v1", {}, seeds=SEEDS, total_steps=64)
    for c in range(3):
        run.write_chunk(c, {m: np.full((SEEDS, UPDATES), value) for m in METRICS}, c * UPDATES)
    evals = pd.DataFrame({"seed": range(SEEDS), "update": 3 * UPDATES - 1, "env_steps": 64,
                          "eval_return": 1.0, "eval_return_std": 0.0})
    run.finish("finished", evaluations=evals)
    return run.run_id


ONE_RUN = ("SELECT run_id, count(*) AS n, avg(episode_return_mean) AS ret FROM metrics "
           "GROUP BY run_id ORDER BY ret")


def test_the_writers_check_spares_a_new_store_every_footer(tmp_path, monkeypatch):
    root = tmp_path / "runs"
    store = RunStore(root)
    run_ids = [written_run(store, float(v)) for v in range(3)]
    meta = json.loads((root / run_ids[0] / "run.json").read_text())
    assert sorted(meta["checked"]["files"]) == ["evaluations.parquet",
                                                *(f"metrics/chunk-{c:05d}.parquet" for c in range(3))]
    counts = Counts(monkeypatch)

    answer = query.sql(ONE_RUN, store)
    assert answer.n.tolist() == [3 * SEEDS * UPDATES] * 3 and answer.ret.tolist() == [0, 1, 2]
    assert counts.footers == 0  # every file as its writer checked it
    rows = catalog.read_rows(root)
    assert json.loads(rows.checked[run_ids[0]]) == meta["checked"]  # the same check, kept

    shutil.rmtree(root / ".catalog")
    bad = root / run_ids[1] / "metrics" / "chunk-00002.parquet"
    shutil.copy2(root / run_ids[2] / "metrics" / "chunk-00002.parquet", bad)  # size, mtime kept
    counts.reset()
    with pytest.warns(StoreWarning, match="rows of another run"):
        answer = query.sql(ONE_RUN, store)
    assert counts.footers == 1  # the copied file alone is read: its ctime is new
    assert answer.n.tolist() == [3 * SEEDS * UPDATES, 2 * SEEDS * UPDATES, 3 * SEEDS * UPDATES]


def test_a_copied_store_and_a_foreign_record_check_every_file(tmp_path, monkeypatch):
    root = tmp_path / "runs"
    store = RunStore(root)
    run_ids = [written_run(store, float(v)) for v in range(2)]
    copy = tmp_path / "copied"
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".catalog"))  # cp -a
    counts = Counts(monkeypatch)
    assert query.sql(ONE_RUN, RunStore(copy)).ret.tolist() == [0, 1]
    assert counts.footers == 2 * 4  # no file is the one its writer checked

    for junk in ("yes", {"names": None, "files": {}}, {"files": ["x"]},
                 {"names": json.dumps(sorted(METRICS)), "files": {"metrics/x": [1, 2]}}):
        path = root / run_ids[0] / "run.json"
        path.write_text(json.dumps({**json.loads(path.read_text()), "checked": junk}))
        shutil.rmtree(root / ".catalog", ignore_errors=True)
        counts.reset()
        assert query.sql(ONE_RUN, store).ret.tolist() == [0, 1]
        assert counts.footers == 4  # that run's four files: the record is ignored

"""A bench ``results.json`` given to ``jaxrl runs bench --merge`` or ``--from-results`` is
checked before anything is written (`jaxrl.studies.bench.results_file`): a row of the wrong
types or shape, JSON nested past sense, a FIFO, ``/dev/zero``, a folder, an oversized file and
a million per-seed values are each one line naming the file (and the row and field), quickly,
and the store's ``results.json`` and the given file keep their bytes."""

import contextlib
import copy
import json
import os
import signal
import time
from pathlib import Path

import pytest

from jaxrl.studies.bench import report as bench_report
from jaxrl.studies.bench import results_file
from tests.runs.test_faults import cli, one_line_error
from tests.studies.bench.test_verdicts import synthetic_store

EXTRA = "a2c/CartPole-v1"  # an entry of the bench that the store has not run: --merge carries it


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    """A store holding bench ``synth-1`` (its report written, one entry not run) and a sound
    results file of an earlier store that ran that entry: ``(runs dir, store results.json,
    earlier report as a dict)``."""
    tmp = tmp_path_factory.mktemp("bench")
    store, _ = synthetic_store(tmp)
    manifest = bench_report.load_manifest(store, "synth-1")
    extra = {**manifest["entries"][0], "name": EXTRA, "algo": "a2c"}
    extra["key"] = bench_report.spec_key({**extra, "seed": 0})
    manifest["entries"].append(extra)
    bench_report.write_manifest(store, "synth-1", manifest)
    folder = bench_report.write(store, "synth-1")
    earlier = json.loads((folder / "results.json").read_text())
    row = next(r for r in earlier["entries"] if r["entry"] == EXTRA)
    row.update({**earlier["entries"][0], "entry": EXTRA, "algo": "a2c",
                "run_id": "20261120-000000-x"})
    return store.root, folder / "results.json", {**earlier, "bench_id": "synth-0"}


@contextlib.contextmanager
def deadline(seconds: float):
    """Fail (TimeoutError) instead of hanging: a FIFO opened for reading waits for a writer."""
    def expire(*_):
        raise TimeoutError(f"still running after {seconds} s")
    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def refused(capsys, bench, path, fragment: str, seconds: float = 30) -> None:
    """``--merge path`` and ``--from-results path`` are one line with ``fragment``, within
    ``seconds``, and neither the store's results.json nor the file at ``path`` changes."""
    root, stored, _ = bench
    before = stored.read_bytes()
    given = Path(path).read_bytes() if Path(path).is_file() else None
    for argv in (["runs", "--runs-dir", root, "bench", "synth-1", "--merge", path],
                 ["runs", "bench", "--from-results", path]):
        with deadline(seconds):
            rc, _, err = cli(capsys, *argv)
        one_line_error(rc, err, fragment)
        assert f"bench results {str(path)!r}" in err, err
    assert stored.read_bytes() == before
    if given is not None:
        assert Path(path).read_bytes() == given
        assert not (Path(path).parent / "report.md").exists()


def written(tmp_path, data, text: str | None = None) -> Path:
    path = tmp_path / "results.json"
    path.write_text(text if text is not None else json.dumps(data))
    return path


def with_row(earlier: dict, **fields) -> dict:
    """``earlier`` with the carried row's fields set (a field set to ``...`` removed)."""
    data = copy.deepcopy(earlier)
    row = next(r for r in data["entries"] if r["entry"] == EXTRA)
    row.update(fields)
    for k in [k for k, v in row.items() if v is ...]:
        del row[k]
    return data


ROW = f"row 5 ('{EXTRA}')"


@pytest.mark.parametrize("fields, fragment", [
    ({"total_steps": "4096"}, f"{ROW}: total_steps must be a whole number in [1, "),
    ({"reference": "400"}, f"{ROW}: reference must be a finite number, got text '400'"),
    ({"per_seed": ["1.5", 2.0]}, f"{ROW}: per_seed must be a list of at most 10,000 finite"),
    ({"env": ["CartPole-v1"]}, f"{ROW}: env must be text, got a list of 1"),
    ({"status": 3}, f"{ROW}: status must be one of 'running', "),
    ({"seeds": True}, f"{ROW}: seeds must be a whole number in [1, "),
    ({"config": [1]}, f"{ROW}: config must be an object, got a list of 1"),
    ({"floor": {"value": "x", "source": "s"}}, f"{ROW}: floor.value must be a finite number"),
    ({"curve": {"env_steps": [0, 1], "seeds": [0], "values": [[1.0]]}},
     f"{ROW}: curve.values[0] must be a list of 2 finite numbers or nulls"),
    ({"entry": ["a"]}, "row 5: entry must be text, got a list of 1"),
])
def test_a_wrongly_typed_row_is_one_line_and_writes_nothing(tmp_path, capsys, bench, fields,
                                                            fragment):
    """A string where a number goes was written into the store's results.json before the
    report failed with "Cannot specify ',' with 's'."; a list where text goes was a traceback."""
    refused(capsys, bench, written(tmp_path, with_row(bench[2], **fields)), fragment)


@pytest.mark.parametrize("shape, fragment", [
    (lambda e: [e], "must be a JSON object with entries, got a list of 1"),
    (lambda e: {**e, "entries": {"a": 1}}, "entries must be a list of at most 1,000 rows, got "
                                           "an object"),
    (lambda e: {**e, "entries": [[1, 2]]}, "row 0 must be an object, got a list of 2"),
    (lambda e: with_row(e, per_seed=...), f"{ROW}: per_seed is missing (expected a list"),
    (lambda e: with_row(e, total_steps=None), f"{ROW}: total_steps is missing"),
    (lambda e: {k: v for k, v in e.items() if k != "title"}, "has no title"),
    (lambda e: {**e, "budget_scale": None}, "budget_scale must be a finite number > 0, got null"),
    (lambda e: {**e, "entries": e["entries"] + e["entries"][:1]},
     "row 6: entry 'ppo/CartPole-v1' was already named by row 0"),
    (lambda e: {**e, "entries": [e["entries"][0]] * 1001}, "got a list of 1,001"),
])
def test_a_wrongly_shaped_file_is_one_line_and_writes_nothing(tmp_path, capsys, bench, shape,
                                                              fragment):
    refused(capsys, bench, written(tmp_path, shape(bench[2])), fragment)


@pytest.mark.parametrize("depth", [100_000, 200])
def test_deep_nesting_is_one_line(tmp_path, capsys, bench, depth):
    """100,000 nested lists were a RecursionError; 200 parse, and are refused too (a report
    nests 7 deep; code that walks a config recursively would fail later)."""
    text = json.dumps(with_row(bench[2], config={"deep": "HOLE"}))
    text = text.replace('"HOLE"', "[" * depth + "]" * depth)
    refused(capsys, bench, written(tmp_path, None, text), "is nested deeper than 64 levels")


def test_a_fifo_a_device_and_a_folder_are_refused_at_once(tmp_path, capsys, bench):
    """A FIFO blocked forever; /dev/zero was read to 3 GB in 3 s."""
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    for path in (fifo, Path("/dev/zero"), tmp_path):
        started = time.monotonic()
        refused(capsys, bench, path, "is not a regular file", seconds=10)
        assert time.monotonic() - started < 5


def test_an_oversized_file_is_refused_with_its_limit(tmp_path, capsys, bench):
    path = tmp_path / "big.json"
    with path.open("wb") as file:  # sparse: no disk written
        file.truncate(results_file.MAX_BYTES + 1)
    refused(capsys, bench, path, "is larger than 67,108,864 bytes")


def test_a_million_per_seed_values_are_refused_in_seconds(tmp_path, capsys, bench):
    """Judging a row bootstraps its values: a million took minutes. A row holds at most
    `MAX_SEEDS` (10,000) and a file `MAX_VALUES` (100,000) in all."""
    many = with_row(bench[2], per_seed=[1.5] * 1_000_000)
    started = time.monotonic()
    refused(capsys, bench, written(tmp_path, many), f"{ROW}: per_seed must be a list of at most "
            "10,000 finite numbers or nulls, got a list of 1,000,000", seconds=60)
    assert time.monotonic() - started < 15
    rows = [{**bench[2]["entries"][0], "entry": f"e{i}", "per_seed": [1.0] * 10_000,
             "curve": None} for i in range(11)]
    refused(capsys, bench, written(tmp_path, {**bench[2], "entries": rows}),
            "holds more than 100,000 per-seed and curve values in all (past it at row 10)")


def test_a_sound_file_still_merges_and_renders(tmp_path, capsys, bench):
    """The checks pass what the writer writes; a row lacking the printed fields a report may
    not have recorded (timings, devices) reads them as null."""
    root, stored, earlier = bench
    path = written(tmp_path, with_row(earlier, devices=..., wall_seconds=..., git_dirty=...))
    rc, _, err = cli(capsys, "runs", "--runs-dir", root, "bench", "synth-1", "--merge", path)
    assert rc == 0, err
    merged = json.loads(stored.read_text())
    row = next(r for r in merged["entries"] if r["entry"] == EXTRA)
    assert row["carried_from"] == "synth-0" and row["devices"] is None and row["verdict"]
    rc, _, err = cli(capsys, "runs", "bench", "--from-results", path, "--out", tmp_path / "o")
    assert rc == 0 and (tmp_path / "o" / "report.md").is_file(), err

"""A metrics chunk edited by hand (a metric renamed, dropped or added, ``update`` renamed) is
found whatever the run's chunk count: each run records its metric names in ``run.json`` with
its first chunk, and every chunk is held to them. A resume over such a chunk is one line before
anything trains or is rewritten; a run written before the names were recorded is refused at
its first new chunk instead of after its last."""

import json

import pyarrow.parquet as pq
import pytest

from jaxrl.cli import main
from jaxrl.runs import query
from jaxrl.runs.integrity import StoreWarning, check_store
from jaxrl.runs.store import RunStore
from tests.engine.test_resume import _killed_run
from tests.engine.test_resume_race import _snapshot
from tests.runs.test_store_reliability import write_run

METRICS = ["env_steps", "episode_return_mean", "episode_count", "value_loss"]


def edit_columns(path, rename: dict | None = None, drop: str | None = None,
                 add: str | None = None) -> None:
    table = pq.read_table(path)
    if rename:
        table = table.rename_columns([rename.get(n, n) for n in table.column_names])
    if drop:
        table = table.drop_columns([drop])
    if add:
        table = table.append_column(add, table.column("value_loss"))
    pq.write_table(table, path)


@pytest.mark.parametrize("edit", [dict(rename={"value_loss": "value_los"}),
                                  dict(drop="value_loss"), dict(add="my_column")],
                         ids=["renamed", "dropped", "extra"])
def test_a_single_chunk_run_is_held_to_its_recorded_metric_names(tmp_path, edit):
    root = tmp_path / "runs"
    folder = write_run(root, "run-a", chunks=1)
    meta = json.loads((folder / "run.json").read_text())
    (folder / "run.json").write_text(json.dumps({**meta, "metric_names": METRICS}))
    assert check_store(root) == []
    edit_columns(folder / "metrics" / "chunk-00000.parquet", **edit)
    (bad,) = check_store(root)
    assert bad.file == "metrics/chunk-00000.parquet"
    assert "columns differ from the metric names its run records" in bad.reason
    with pytest.warns(StoreWarning, match="skipping bad file metrics/chunk-00000.parquet"):
        frame = query.ls(RunStore(root))
    assert frame.damaged.tolist() == [True]


def test_a_resume_over_an_edited_chunk_is_one_line_and_changes_nothing(tmp_path, capsys):
    run_id = _killed_run("ppo", tmp_path)
    folder = tmp_path / run_id
    recorded = json.loads((folder / "run.json").read_text())["metric_names"]
    assert "value_loss" in recorded and "env_steps" in recorded
    for rename in ({"value_loss": "value_los"}, {"update": "updates"}):
        edit_columns(folder / "metrics" / "chunk-00000.parquet", rename=rename)
        before = _snapshot(folder)
        assert main(["resume", run_id, "--runs-dir", str(tmp_path), "--no-progress"]) == 2
        lines = capsys.readouterr().err.strip().splitlines()
        assert len(lines) == 1 and "metrics/chunk-00000.parquet is bad" in lines[0], lines
        assert _snapshot(folder) == before
        edit_columns(folder / "metrics" / "chunk-00000.parquet",
                     rename={v: k for k, v in rename.items()})
    # as a run written before the names were recorded, with the metric renamed in every chunk
    # (the chunks agree with each other): refused at its first new chunk, its chunks kept
    meta = json.loads((folder / "run.json").read_text())
    del meta["metric_names"]
    (folder / "run.json").write_text(json.dumps(meta))
    chunks = sorted((folder / "metrics").glob("chunk-*.parquet"))
    for chunk in chunks:
        edit_columns(chunk, rename={"value_loss": "value_los"})
    assert main(["resume", run_id, "--runs-dir", str(tmp_path), "--no-progress"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "not this run's metrics" in lines[0], lines
    assert sorted((folder / "metrics").glob("chunk-*.parquet")) == chunks

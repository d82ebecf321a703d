"""Seeds told apart by what their policies do (`jaxrl.studies.bench.split_evidence`): a file
recording the failing seeds of a run makes that entry's verdict a split where its scores alone
read "inside"; the row keeps it through ``--from-results`` and ``--merge``; a file that is not
such evidence, or names a run or seeds the report lacks, is one line and changes nothing."""

import json

import numpy as np
import pytest

from jaxrl.runs.store import StoreError
from jaxrl.studies import verdicts
from jaxrl.studies.bench import judge as bench_judge
from jaxrl.studies.bench import report as bench_report
from jaxrl.studies.bench import results_file, split_evidence
from tests.runs.test_faults import cli, one_line_error
from tests.studies.bench.test_verdicts import synthetic_store

# TRPO halfcheetah at 3M (benchmarks/mujoco-cpu): seeds 0, 1, 2 and 5 run on their backs
SCORES = [1718.9, 1952.7, 1698.4, 4181.3, 2663.0, 1799.1, 3651.6, 4491.1]
ON_THEIR_BACKS = [0, 1, 2, 5]
POSTURE = {"by": "posture", "rule": "ran upside down on more than half of their steps",
           "failing": ON_THEIR_BACKS}


def _row(**extra) -> dict:
    return {"entry": "trpo/brax:halfcheetah", "per_seed": list(SCORES), "reference": 1980.0,
            "reference_budget": None, "total_steps": 3_000_000, "run_id": "r",
            "status": "finished", **extra}


def test_a_labelled_split_counts_the_seeds_that_succeed():
    split = verdicts.labelled_split(SCORES, ON_THEIR_BACKS, "posture")
    assert split["succeeding"] == 4 and split["n"] == 8 and split["by"] == "posture"
    assert split["success_mean"] == pytest.approx(np.mean([4181.3, 2663.0, 3651.6, 4491.1]))
    assert (split["share_low"], split["share_high"]) == verdicts.clopper_pearson(4, 8)
    with_nan = [np.nan, *SCORES[1:]]
    assert verdicts.labelled_split(with_nan, ON_THEIR_BACKS, "posture")["n"] == 7
    assert verdicts.labelled_split(SCORES, range(8), "posture") is None


def test_evidence_turns_inside_into_a_split_by_what_it_measured():
    assert verdicts.seed_split(SCORES) is None  # the scores alone do not split
    plain = bench_judge.judge(_row())
    assert plain["verdict"] == "reference inside CI" and plain["split"] is None
    told = bench_judge.judge(_row(split_evidence={**POSTURE, "source": "p.json"}))
    assert told["verdict"] == "split (4 of 8 seeds below reference; by posture)"
    assert told["split"]["succeeding"] == 4 and told["split"]["by"] == "posture"
    assert bench_judge.verdict_kind(told["verdict"]) == "split"
    # evidence never overrides a side both readings agree on
    high = bench_judge.judge(_row(reference=500.0, split_evidence={**POSTURE, "source": "p"}))
    assert high["verdict"] == "above reference" and high["split"]["by"] == "posture"


@pytest.fixture()
def bench(tmp_path):
    store, _ = synthetic_store(tmp_path)
    folder = bench_report.write(store, "synth-1")
    return store, folder


def _evidence(tmp_path, run_id: str, **split) -> str:
    path = tmp_path / "posture.json"
    path.write_text(json.dumps({"run_id": run_id, "seeds": [],
                                "split": {**POSTURE, "failing": [0, 3], **split}}))
    return str(path)


def test_the_cli_records_the_split_and_later_reports_keep_it(bench, tmp_path, capsys):
    store, folder = bench
    first = json.loads((folder / "results.json").read_text())["entries"][0]
    path = _evidence(tmp_path, first["run_id"])
    rc, out, err = cli(capsys, "runs", "--runs-dir", store.root, "bench", "synth-1",
                       "--split-evidence", path)
    assert rc == 0, err
    written = json.loads((folder / "results.json").read_text())
    row = written["entries"][0]
    assert row["verdict"] == "split (2 of 8 seeds below reference; by posture)"
    assert "by posture" in out  # the table printed is the report written
    assert row["split_evidence"] == {"source": path, "by": "posture", "rule": POSTURE["rule"],
                                     "failing": [0, 3]}
    assert row["split"]["by"] == "posture" and row["split"]["succeeding"] == 6
    assert "**split** by posture (seeds 0, 3 ran upside down" in (folder / "report.md").read_text()
    assert not any(r.get("split_evidence") for r in written["entries"][1:])
    # rebuilt from the file alone, and merged into the store's next report: kept
    again = bench_report.results_from_json(folder / "results.json")
    assert again["entries"][0]["split_evidence"] == row["split_evidence"]
    assert again["entries"][0]["split"] == row["split"]
    merged = bench_report.merged(bench_report.results(store, "synth-1"), written)
    assert merged["entries"][0]["split"] == row["split"]


@pytest.mark.parametrize("content, fragment", [
    ("{", "is not JSON"),
    (json.dumps({"split": POSTURE}), "names no run"),
    (json.dumps({"run_id": "R"}), "records no split"),
    (json.dumps({"run_id": "R", "split": {**POSTURE, "failing": [0, True]}}),
     "failing must be a list of distinct seed indices"),
    (json.dumps({"run_id": "R", "split": {**POSTURE, "failing": [1, 1]}}),
     "failing must be a list of distinct seed indices"),
    (json.dumps({"run_id": "R", "split": {**POSTURE, "by": ""}}), "by must be text"),
    (json.dumps({"run_id": "R", "split": []}), "must be an object with by, rule and failing"),
    (json.dumps({"run_id": "no-such-run", "split": POSTURE}), "is in no entry of this report"),
    (json.dumps({"run_id": "R", "split": {**POSTURE, "failing": [0, 8]}}),
     "failing seeds [0, 8]"),
])
def test_bad_evidence_is_one_line_and_changes_nothing(bench, tmp_path, capsys, content,
                                                        fragment):
    store, folder = bench
    run_id = json.loads((folder / "results.json").read_text())["entries"][0]["run_id"]
    path = tmp_path / "bad.json"
    path.write_text(content.replace('"R"', json.dumps(run_id)))
    before = (folder / "results.json").read_bytes()
    for argv in (["runs", "--runs-dir", store.root, "bench", "synth-1"],
                 ["runs", "bench", "--from-results", folder / "results.json"]):
        rc, _, err = cli(capsys, *argv, "--split-evidence", path)
        one_line_error(rc, err, fragment)
        assert str(path) in err
    assert (folder / "results.json").read_bytes() == before


def test_a_results_file_with_a_bad_split_evidence_is_refused(bench):
    _, folder = bench
    data = json.loads((folder / "results.json").read_text())
    row = data["entries"][0]
    row["split_evidence"] = {**POSTURE, "source": "p.json", "failing": [0, 99]}
    with pytest.raises(StoreError, match="names a seed past its 8 per-seed values"):
        results_file.check_results(data)
    row["split_evidence"] = {**POSTURE, "failing": [0]}
    with pytest.raises(StoreError, match=r"split_evidence\.source"):
        results_file.check_results(data)
    row["split_evidence"] = {"by": "posture"}
    with pytest.raises(StoreError, match="split_evidence: rule must be text"):
        results_file.check_results(data)


def test_two_files_for_one_run_are_refused():
    one = {**POSTURE, "source": "a.json", "run_id": "r"}
    with pytest.raises(StoreError, match=r"run r already has its split from 'a\.json'"):
        split_evidence.attach([_row()], [one, {**one, "source": "b.json"}])


def test_evidence_for_one_run_leaves_the_other_rows_alone():
    rows = [_row(), {**_row(), "entry": "other", "run_id": "s"}]
    out = split_evidence.attach(rows, [{**POSTURE, "source": "p", "run_id": "r"}])
    assert out[0]["split_evidence"]["failing"] == ON_THEIR_BACKS
    assert "split_evidence" not in out[1] and "split_evidence" not in rows[0]

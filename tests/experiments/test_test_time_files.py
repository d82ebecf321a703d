"""The committed files behind docs/test-times.md's cold rows and its audit paragraph: a junit
file becomes the durations text as the tests read it, and each committed summary is what the
script computes from the committed durations and program log."""

import json
import re
from pathlib import Path

from tests.experiments.scripts import load

ROOT = Path(__file__).resolve().parents[2]
TIMES = ROOT / "docs" / "test-times"
JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">
<testcase classname="tests.engine.test_loop" name="test_a[x-1]" time="2.500" />
<testcase classname="tests.runs.test_store.TestCatalog" name="test_b" time="0.125" />
<testcase classname="tests.test_cli" name="test_c" time="10.000" />
</testsuite></testsuites>"""


def test_a_junit_file_becomes_durations_slowest_first(tmp_path, capsys):
    convert = load("durations_from_junit")
    (tmp_path / "run.xml").write_text(JUNIT)
    assert convert.main([str(tmp_path / "run.xml"), "what ran"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "# what ran",
        "10.00s call     tests/test_cli.py::test_c",
        "2.50s call     tests/engine/test_loop.py::test_a[x-1]",
        "0.12s call     tests/runs/test_store.py::TestCatalog::test_b"]


def test_each_committed_summary_is_its_durations_and_program_log(tmp_path):
    summary = load("compile_audit_summary")
    files = sorted(TIMES.glob("*-cold-audit.json")) + sorted(TIMES.glob("*-cold-modules.json"))
    assert files
    for path in files:
        committed = json.loads(path.read_text())
        durations = ROOT / committed["durations"]
        modules = summary.by_module(summary.read_durations(durations), {})
        assert {m: r["test_s"] for m, r in modules.items()} == {
            m: r["test_s"] for m, r in committed["modules"].items()}, path.name
        assert committed["totals"]["test_s"] == round(sum(r["test_s"] for r in modules.values()), 1)
        log = path.with_name(path.name.replace("-audit.json", "-programs.jsonl"))
        if committed["programs"] is not None:
            (tmp_path / "log").mkdir(exist_ok=True)
            (tmp_path / "log" / "all.jsonl").write_text(log.read_text())
            assert summary.programs(tmp_path / "log") == committed["programs"], path.name


def test_each_cold_row_quotes_its_durations_file_and_its_audit():
    """A cold row of docs/test-times.md says what the files it links hold: pytest's seconds, the
    tests passed and `.ci/run`'s seconds from the durations file's header, and the audit's
    totals where the row quotes them."""
    rows = [line for line in (ROOT / "docs" / "test-times.md").read_text().splitlines()
            if line.startswith("| **empty (cold)**")]
    assert rows
    for row in rows:
        (name,) = set(re.findall(r"test-times/([\w.-]+-cold-durations\.txt)", row))
        header = (TIMES / name).read_text().splitlines()[2]
        passed, seconds, ci = re.fullmatch(
            r"# pytest: (\d+) passed, \d+ warnings in ([\d.]+)s \([\d:]+\); \.ci/run in all "
            r"(\d+) s \(install included\)", header).groups()
        assert f"{float(seconds):,.2f} s" in row and f"{int(passed):,} passed" in row, name
        assert f"| {int(ci):,} s" in row, name
        audit = TIMES / name.replace("-durations.txt", "-audit.json")
        if "in XLA's compile" in row:
            totals = json.loads(audit.read_text())["totals"]
            for key in ("xla_compile_s", "trace_s", "lower_s", "test_s"):
                assert f"{totals[key]:,.1f} s" in row, (name, key)


def test_the_floor_paragraph_is_each_audits_seconds_outside_the_compile():
    """docs/test-times.md's "15 minutes" paragraph: for each run it names, the tests' seconds less
    the in-process XLA compile, and that over two workers in minutes, as its audit holds them
    (`compile_audit_summary.outside_compile`)."""
    summary = load("compile_audit_summary")
    text = (ROOT / "docs" / "test-times.md").read_text()
    floor = " ".join(text.split("<!-- floor -->")[1].split("<!-- /floor -->")[0].split())
    quoted = re.findall(r"([\d,.]+) s of the (\w+) run's ([\d,.]+) s, ([\d.]+) min", floor)
    assert len(quoted) == 2
    for outside, commit, total, minutes in quoted:
        totals = json.loads((TIMES / f"2026-11-30-{commit}-cold-audit.json").read_text())["totals"]
        assert {k: totals[k] for k in summary.outside_compile(totals)} == summary.outside_compile(
            totals), commit
        assert f"{totals['test_s']:,.1f}" == total, commit
        assert f"{totals['outside_compile_s']:,.1f}" == outside, commit
        assert f"{totals['outside_compile_per_worker_s'] / 60:.1f}" == minutes, commit

"""Every committed benchmark report and figure keeps the rules of the reports: each ``curves.png``
is the figure `bench_figure.plot` draws from the ``results.json`` beside it (its digest), every
``report.md`` is the markdown of that file, and the figure itself shows no empty panel, no band
called a CI on fewer than `MIN_BAND_SEEDS` seeds, every reference with its value, every run that
did not finish (or stopped short of its budget) marked, and a smoke run's title saying so. Other
committed figures are per-seed curves drawn by a named script from a data file kept beside
them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jaxrl.studies.bench import figure as bench_figure
from jaxrl.studies.bench.markdown import _fmt, markdown

BENCHMARKS = Path(__file__).resolve().parents[3] / "benchmarks"
REPORTS = sorted(p for p in BENCHMARKS.glob("**/results.json")
                 if "entries" in json.loads(p.read_text()))
# figures that are not a bench's: the file each is drawn from, kept beside it
OTHER_FIGURES = {"atari-cpu/curves.png": "curves.csv", "atari-cpu/run_curves.png": "report.md",
                 "atari-gpu/seed_curves.png": "seed_curves.csv",
                 "atari-gpu/pong-10m/seed_curves.png": "seed_curves.csv",
                 "throughput-cpu/ladder.png": "results.json",
                 "compile-vs-rejax-cpu/ladder.png": "results.json",
                 "throughput-cpu-1dev/ladder.png": "results.json",
                 "throughput-gpu/ladder.png": "results.json",
                 "throughput-gpu/short-budget/ladder.png": "results.json",
                 **{f"search-cpu/{name}.png": "results.json"
                    for name in ("search", "pbt", "pbt-breakout")},
                 **{f"throughput-cpu-ab/pass{n}/ladder.png": "results.json" for n in range(1, 5)},
                 **{f"throughput-cpu-ab2/pass{n}/ladder.png": "results.json" for n in range(1, 5)},
                 **{f"throughput-cpu-ab3/{rung}-pass{n}/ladder.png": "results.json"
                    for rung in ("members1", "members4", "minatar16") for n in range(1, 5)},
                 **{f"throughput-cpu-ab3/minatar1-pass{n}/ladder.png": "results.json"
                    for n in range(5, 9)}}


def test_there_are_committed_reports():
    assert len(REPORTS) >= 10


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.parent.name)
def test_a_committed_report_is_what_its_results_json_renders(path):
    report = json.loads(path.read_text())
    assert (path.parent / "report.md").read_text() == markdown(report), \
        "report.md differs from its results.json: re-render with jaxrl runs bench --from-results"
    assert bench_figure.png_digest(path.parent / "curves.png") == \
        bench_figure.figure_digest(report), "curves.png was not drawn from this results.json"


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.parent.name)
def test_a_committed_figure_keeps_the_rules(path):
    report = json.loads(path.read_text())
    spec = bench_figure.figure_spec(report)
    rows = {r["entry"]: r for r in report["entries"]}
    ran = [r for r in report["entries"] if r["status"] != "not run" and r["per_seed"]]
    assert spec["panels"] or not ran
    smoke = report.get("budget_scale", 1.0) != 1.0
    assert ("a smoke run" in spec["title"]) == smoke
    for panel in spec["panels"]:
        assert panel["lines"], f"{panel['env']}: an empty panel"
        for line in panel["lines"]:
            row = rows[line["entry"]]
            assert line["seeds"] >= 1
            assert not line["band"] or line["seeds"] >= bench_figure.MIN_BAND_SEEDS
            if row["status"] != "finished":
                assert row["status"] in line["label"], f"{row['entry']} not marked unfinished"
            if row.get("requested_steps") and row["total_steps"] < 0.99 * row["requested_steps"]:
                assert " of " in line["label"], f"{row['entry']} stopped short, unmarked"
        for ref in panel["references"]:
            assert _fmt(ref["value"]) in ref["label"]
        assert len({r["label"] for r in panel["references"]}) == len(panel["references"])
        assert not (smoke and panel["references"])


def test_every_committed_figure_is_accounted_for():
    figures = {str(p.relative_to(BENCHMARKS)) for p in BENCHMARKS.glob("**/*.png")}
    bench = {str(p.parent.relative_to(BENCHMARKS) / "curves.png") for p in REPORTS}
    assert figures - bench <= set(OTHER_FIGURES), figures - bench - set(OTHER_FIGURES)
    for figure, source in OTHER_FIGURES.items():
        if figure in figures:
            assert (BENCHMARKS / figure).with_name(source).is_file()

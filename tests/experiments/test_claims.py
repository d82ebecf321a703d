"""Every measured number a reader sees comes from a committed file (`experiments/claims_check.py`)
and every rendered README block is what its files give (`experiments/readme_tables.py`); each
rule also fails on a planted number."""

import json
from pathlib import Path

import pytest

from tests.experiments.scripts import load

ROOT = Path(__file__).resolve().parents[2]
claims = load("claims_check")
tables = load("readme_tables")


def test_the_rendered_blocks_are_what_their_files_give():
    """Every block of `readme_tables.BLOCKS` sits in one of its pages, and each re-renders to
    itself from the committed files."""
    found = []
    for page in tables.FILES:
        text = page.read_text()
        found += tables.blocks_in(text)
        assert tables.differing(text) == [], page
    assert sorted(found) == sorted(tables.BLOCKS)


def test_a_rendered_cell_changed_by_hand_is_caught():
    text = (ROOT / "README.md").read_text()
    changed = text.replace("| 1.16\u00d7 (2 pairs) |", "| 1.26\u00d7 (2 pairs) |", 1)
    assert changed != text
    assert tables.differing(changed) == ["throughput-equal"]


def test_every_committed_bench_report_has_a_readme_row():
    """A new report folder cannot be left out of the table."""
    shown = {folder for folder, _ in tables.REPORTS}
    for path in sorted((ROOT / "benchmarks").glob("**/results.json")):
        report = json.loads(path.read_text())
        if isinstance(report, dict) and "entries" in report:
            assert str(path.parent.relative_to(ROOT / "benchmarks")) in shown, path


@pytest.mark.parametrize("page", claims.CHECKED)
def test_every_measured_number_on_a_checked_page_is_in_a_linked_file(page):
    assert [str(c) for c in claims.check_page(page)] == []


def test_a_readme_number_changed_by_hand_fails_the_check():
    text = (ROOT / "README.md").read_text()
    assert "(median rung\n1.07\u00d7," in text
    planted = text.replace("(median rung\n1.07\u00d7,", "(median rung\n1.47\u00d7,")
    failing = claims.check_page("README.md", planted)
    assert [c.text for c in failing] == ["1.47\u00d7"]
    unlinked = "On equal devices the median rung is 1.07\u00d7."
    assert [c.problem for c in claims.check_page("README.md", unlinked)] == [
        "no committed file is linked beside it"]


def test_a_reading_of_a_published_source_is_marked_as_such():
    block = "PureJaxRL gives about 1e7 env-steps/s, rejax 1.25M on an A100 (published figures)."
    assert claims.check_page("README.md", block) == []
    assert claims.check_page("README.md", block.replace(" (published figures)", ""))


@pytest.mark.parametrize("page", claims.notes())
def test_no_note_quotes_an_uncommitted_store(page):
    assert [str(c) for c in claims.check_note(page)] == []


def test_a_note_quoting_a_store_fails_until_the_data_is_committed_beside_it():
    planted = ("The training return reached 0.87 (from the store's run.json, "
               "runs/20261129-010101-ppo-x).")
    failing = claims.check_note("benchmarks/classic-cpu/NOTES.md", planted)
    assert [c.text for c in failing] == ["0.87"]
    committed = planted + " Per seed: [results.json](results.json)."
    values = json.loads((ROOT / "benchmarks/classic-cpu/results.json").read_text())
    per_seed = values["entries"][0]["per_seed"][0]
    assert claims.check_note("benchmarks/classic-cpu/NOTES.md", committed.replace(
        "0.87", f"{per_seed:.1f}")) == []


def test_a_link_to_nothing_fails():
    failing = claims.check_page("README.md", "See [the notes](benchmarks/nowhere/NOTES.md).")
    assert [c.problem for c in failing] == ["the link points at nothing in the repository"]


def test_versions_and_settings_are_not_measurements():
    block = "jax 0.10.2 beside 0.11.2; Python 3.11-3.13; `learning_rate=3e-4`; lr=0.001"
    assert claims.measured_numbers(block) == []
    assert [n[0] for n in claims.measured_numbers("ran 4.3 ms a draw, 54% of it, 7.8x")] == [
        "4.3 ms", "54%", "7.8x"]

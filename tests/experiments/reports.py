"""What the notes tests read from a committed bench folder: its NOTES.md as one line of text, and
one entry's row of its report."""

import json
from pathlib import Path


def flat_notes(folder: Path) -> str:
    """``folder``'s NOTES.md with every run of whitespace made one space (a wrapped sentence
    matches its unwrapped text)."""
    return " ".join((folder / "NOTES.md").read_text().split())


def report_row(folder: Path, entry: str) -> dict:
    """The row of ``entry`` in ``folder``'s results.json (exactly one)."""
    (row,) = [e for e in json.loads((folder / "results.json").read_text())["entries"]
              if e["entry"] == entry]
    return row

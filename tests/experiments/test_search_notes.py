"""The search notes' figures are the committed results' (benchmarks/search-cpu): every measured
number of NOTES.md (a decimal, or an integer of three digits or more) appears in results.json;
the few left over are the configs' own values, named here."""

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "benchmarks" / "search-cpu"
NUMBER = re.compile(r"(?<![\w.])-?\d[\d,]*(?:\.\d+)?(?:e-?\d+)?")
# config values, not measurements: a grid point (learning rate 9.7e-4), steps an update (2,048,
# 256, 128), members (64 trials x 4 seeds = 256; 128), updates (327,680 / 2,048 = 160)
CONFIG_VALUES = {"9.7", "2048", "256", "128", "160"}


def numbers(value) -> set[str]:
    """Every number in a JSON value, as text, and rounded to 1-3 decimals."""
    found: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, (int, float)) and not isinstance(item, bool):
            found.add(f"{item}")
            found.update(f"{item:.{d}f}" for d in (0, 1, 2, 3))
            found.update(f"{-item:.{d}f}" for d in (1, 2, 3))
            found.update(f"{100 * item:.{d}f}" for d in (0, 1))  # shares as percents
            for d in (1, 2, 3):  # hyperparameters: significant digits, plain or scientific
                found.update((f"{item:.{d + 1}g}", f"{item:#.{d + 1}g}"))
                found.add(re.sub(r"e([+-])0*(\d)", lambda m: "e" + m.group(1).replace("+", "")
                                 + m.group(2), f"{item:.{d}e}"))
        elif isinstance(item, str):
            found.update(n.replace(",", "") for n in NUMBER.findall(item))
    return found


def test_every_measured_number_of_the_notes_is_in_the_results():
    known = numbers(json.loads((ROOT / "results.json").read_text()))
    text = re.sub(r"\(\S+\.(?:json|png|py)\)|`[^`]*`", "", (ROOT / "NOTES.md").read_text())
    missing = set()
    for raw in NUMBER.findall(text):
        value = raw.replace(",", "").lstrip("-")
        if "." not in value and len(value) < 3:
            continue  # counts and small integers (seeds, trials of a batch) are read as words
        if value.startswith("20") and len(value) == 4:
            continue  # a year
        if value not in known and value not in CONFIG_VALUES:
            missing.add(raw)
    assert not missing, f"numbers in NOTES.md that results.json does not hold: {sorted(missing)}"

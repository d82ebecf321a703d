"""Every measured number a reader sees comes from a committed file: the check.

    python experiments/claims_check.py            # list every claim that fails, exit 1 if any

A page is read block by block (a paragraph, a list item, a table row; fenced code, HTML
comments and the rendered blocks of `readme_tables` are skipped: those re-render from their
files). In a block, a *measured number* is a decimal (``4.95``, ``45.1M``), a ratio or share
(``1.07x`` or with a multiplication sign, ``54%``) or a number with a unit of time, memory or rate (``19 s``,
``4.3 ms``, ``576.9 MiB``, ``123k env-steps/s``); a whole count or budget (``16 seeds``, ``500k
env steps``), a version (``jax 0.10.2``, ``Python 3.11``) and a setting written as one
(``lr=0.001``, inline code) are not. A setting written in prose (``gamma 0.995``) is a decimal
like any other: a block that states one links the config it comes from. The rules:

1. **Linked and found** (`CHECKED` pages: the README and every ``docs/*.md``): a block with
   measured numbers links at least one committed file, and each number is found in one of the
   files it links, to the printed precision (a JSON file's numbers and the numbers in a text
   file's text, at the scales a page prints them: as is, per thousand or million, as a
   percentage, seconds as minutes or hours), or is a ratio of two numbers found so; or the block
   says it reads a published source (`PUBLISHED`: "published", "read off") and cites it.
2. **No store as a source** (every ``benchmarks/**/NOTES.md``): a block that cites a run store
   as where its numbers come from (a ``runs/<id>`` path, "from the store", "the store's
   run.json", "uncommitted store") must link a committed file holding each measured number: what
   a note quotes from a store is committed beside it.
3. **Links resolve**: every relative link of a checked page or note points at a file or folder
   of the repository.

"""

from __future__ import annotations

import json
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHECKED = ("README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md")))
PUBLISHED = re.compile(r"\bpublish(?:ed|es)?\b|\bread off\b", re.I)
STORE = re.compile(r"runs/\d{8}|\b(?:from|in) (?:the|its|a) (?:run )?store\b|store's run\.json|"
                   r"\buncommitted store\b|\bstore, not committed\b", re.I)
RATE = r"\s?(?:env-steps/s|steps/s|agent steps/s)"
UNIT = (r"(?:\u00d7|x\b|%|[kMG]?" + RATE + r"|[kMG]\b|"
        r"\s?(?:ms|s|seconds?|min|minutes?|h|hours?|MiB|GiB|MB|GB)\b)")
NUMBER = re.compile(r"(?<![\w./\-\u2212=])([\u2212-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)(" + UNIT + r")?")
VERSIONED = re.compile(r"\b(?:Python|jax|JAX|jaxlib|CUDA|rejax|navix|Navix|gymnax|brax|"
                       r"Playground|MuJoCo|Jumanji|XLand-MiniGrid|Craftax|ale-py|optuna|flax|"
                       r"version|v)\s*$")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
SCALES = (1.0, 1e-3, 1e-6, 1e-9, 100.0, 1 / 60, 1 / 3600, 1e3)


@dataclass(frozen=True)
class Claim:
    """A measured number in a block of a page: where, as printed, and why it fails."""

    page: str
    line: int
    text: str
    problem: str

    def __str__(self) -> str:
        return f"{self.page}:{self.line}: {self.text!r}: {self.problem}"


# -- reading a page -------------------------------------------------------------------------------
def blocks(text: str) -> list[tuple[int, str]]:
    """``(first line number, text)`` per block: paragraphs, list items and table rows, without
    fenced code, HTML comments and rendered blocks."""
    out, current, start = [], [], 0
    skipping, fenced = None, False
    lines = text.split("\n")

    def flush():
        nonlocal current
        if current:
            out.append((start, "\n".join(current)))
        current = []

    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if stripped.startswith("```"):
            fenced = not fenced
            flush()
            continue
        if fenced:
            continue
        opened = re.match(r"<!-- render:([\w-]+) -->", stripped)
        if opened:
            skipping = opened.group(1)
            flush()
            continue
        if skipping:
            if stripped == f"<!-- /render:{skipping} -->":
                skipping = None
            continue
        if not stripped or stripped.startswith("#"):
            flush()
            continue
        item = re.match(r"([-*]|\d+\.)\s", stripped) or stripped.startswith("|")
        if item:
            flush()
        if not current:
            start = number
        current.append(line)
        if stripped.startswith("|"):
            flush()
    flush()
    return [(n, re.sub(r"<!--.*?-->", "", b, flags=re.S)) for n, b in out
            if not re.fullmatch(r"\|[\s|:-]+\|", b.strip())]


def links(block: str) -> list[str]:
    """The local link targets of a block (no URLs, no in-page anchors), anchors cut."""
    return [t.split("#")[0] for t in LINK.findall(block)
            if not re.match(r"[a-z]+:", t) and not t.startswith("#")]


def measured_numbers(block: str) -> list[tuple[str, float, int]]:
    """``(as printed, value, decimals)`` of each measured number in a block."""
    prose = LINK.sub(lambda m: m.group(0).split("](")[0] + "]", block)
    prose = re.sub(r"`[^`]*`", " ", prose)
    prose = re.sub(r"\d+\.\d+\.\d+\S*", " ", prose)  # versions
    found = []
    for match in NUMBER.finditer(prose):
        digits, unit = match.group(1), match.group(2)
        if "." not in digits and (not unit or unit in ("k", "M", "G")):
            continue  # a count or a budget ("500k env steps"), not a measurement
        if not unit and VERSIONED.search(prose[:match.start()]):
            continue  # "jax 0.10", "Python 3.11"
        value = float(digits.replace(",", "").replace("\u2212", "-"))
        decimals = len(digits.split(".")[1]) if "." in digits else 0
        found.append((match.group(0).strip(), value, decimals))
    return found


# -- what a file holds --------------------------------------------------------------------------
def _numbers_in_text(text: str) -> list[float]:
    return [float(m.replace(",", "").replace("\u2212", "-"))
            for m in re.findall(r"[\u2212-]?\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?", text)
            if re.search(r"\d", m)]


def _numbers_in_json(node) -> list[float]:
    if isinstance(node, bool):
        return []
    if isinstance(node, (int, float)):
        return [float(node)] if math.isfinite(node) else []
    if isinstance(node, str):
        return _numbers_in_text(node)
    values = node.values() if isinstance(node, dict) else node if isinstance(node, list) else []
    return [v for child in values for v in _numbers_in_json(child)]


def file_numbers(path: Path) -> list[float]:
    """Every number a linked file holds (a folder: its JSON, markdown and text files)."""
    if path.is_dir():
        return [v for child in sorted(path.rglob("*")) if child.suffix in
                (".json", ".jsonl", ".md", ".txt", ".log", ".csv") for v in file_numbers(child)]
    if path.suffix not in (".json", ".jsonl", ".md", ".txt", ".log", ".csv", ".yaml"):
        return []
    text = path.read_text(errors="replace")
    if path.suffix == ".json":
        try:
            return _numbers_in_json(json.loads(text))
        except ValueError:
            return _numbers_in_text(text)
    if path.suffix == ".csv":  # cell by cell: a row is not one comma-grouped number
        return [v for line in text.splitlines() for cell in line.split(",")
                for v in _numbers_in_text(cell)]
    if path.suffix == ".jsonl":
        out = []
        for line in text.splitlines():
            try:
                out += _numbers_in_json(json.loads(line))
            except ValueError:
                out += _numbers_in_text(line)
        return out
    return _numbers_in_text(text)


def holds(values: list[float], value: float, decimals: int) -> bool:
    """Whether some number in ``values``, at one of `SCALES`, prints as ``value`` at
    ``decimals`` (its magnitude: a sign the page leaves to its words is not asked for)."""
    target = round(abs(value), decimals)
    for v in values:
        for scale in SCALES:
            if round(abs(v * scale), decimals) == target:
                return True
    return False


def _ratio_of(values: list[float], value: float, decimals: int) -> bool:
    """Whether ``value`` is the ratio of two of ``values`` (a block's own found numbers)."""
    target = round(abs(value), decimals)
    return any(b and round(abs(a / b), decimals) == target for a in values for b in values)


# -- the rules ----------------------------------------------------------------------------------
def _walk(page: str, text: str | None):
    """``(line, block, linked files that exist, problems)`` per block of a page with measured
    numbers, rule 3 (dead links) already applied to every block."""
    path = ROOT / page
    for line, block in blocks(path.read_text() if text is None else text):
        targets = links(block)
        dead = [Claim(page, line, t, "the link points at nothing in the repository")
                for t in targets if not (path.parent / t).exists()]
        files = [path.parent / t for t in targets if (path.parent / t).exists()]
        yield line, block, files, dead


def check_page(page: str, text: str | None = None) -> list[Claim]:
    """Rules 1 and 3 on one page (relative to the repository; ``text``: read in its place)."""
    problems = []
    for line, block, files, dead in _walk(page, text):
        problems += dead
        numbers = measured_numbers(block)
        if not numbers or PUBLISHED.search(block):
            continue
        if not files:
            problems += [Claim(page, line, printed, "no committed file is linked beside it")
                         for printed, _, _ in numbers]
            continue
        pool = [v for f in files for v in file_numbers(f)]
        found = [value for _, value, decimals in numbers if holds(pool, value, decimals)]
        problems += [Claim(page, line, printed, "not found in the files it links: "
                           + ", ".join(str(f.relative_to(ROOT)) for f in files))
                     for printed, value, decimals in numbers
                     if not holds(pool, value, decimals) and not _ratio_of(found, value, decimals)]
    return problems


def check_note(page: str, text: str | None = None) -> list[Claim]:
    """Rules 2 and 3 on one note (``text``: read in its place)."""
    problems = []
    for line, block, files, dead in _walk(page, text):
        problems += dead
        numbers = measured_numbers(block)
        if not numbers or not STORE.search(block):
            continue
        pool = [v for f in files if f.is_file() for v in file_numbers(f)]
        problems += [Claim(page, line, printed, "quoted from a run store: commit what it rests "
                           "on beside the note and link it")
                     for printed, value, decimals in numbers if not holds(pool, value, decimals)]
    return problems


def notes() -> list[str]:
    return sorted(str(p.relative_to(ROOT)) for p in (ROOT / "benchmarks").rglob("NOTES.md"))


def main() -> int:
    problems = [c for page in CHECKED for c in check_page(page)]
    problems += [c for page in notes() for c in check_note(page)]
    for claim in problems:
        print(claim)
    print(f"{len(problems)} claims fail; pages under rule 1: {', '.join(CHECKED)}",
          file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

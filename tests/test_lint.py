"""The linters, run as CI runs them: ruff over the whole repository, mypy over the algorithms and
the parts and ops they are built from. Both are configured in pyproject.toml and pinned in the
test extra."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)


def test_ruff_is_clean():
    done = _run("ruff", "check", "--no-cache", ".")
    assert done.returncode == 0, f"ruff check found problems:\n{done.stdout}{done.stderr}"


def test_mypy_is_clean_over_algos_parts_and_ops():
    done = _run("mypy", "jaxrl/algos", "jaxrl/parts", "jaxrl/ops")
    assert done.returncode == 0, f"mypy found problems:\n{done.stdout}{done.stderr}"

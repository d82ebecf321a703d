"""The fast tier and the slow-first order (tests/conftest.py) read the committed durations file
as it was measured, through `MOVED_TESTS` for the test files moved since: every path it names
is a test file that exists, so no recorded test falls out of the tier or of `SLOW_FIRST`."""

from pathlib import Path

from tests.conftest import (
    FAST_TIER_DURATIONS,
    MOVED_TESTS,
    SLOW_FIRST,
    current_node,
    recorded_seconds,
)

ROOT = Path(__file__).resolve().parents[1]


def test_every_recorded_test_file_exists():
    recorded = recorded_seconds(str(ROOT / FAST_TIER_DURATIONS))
    assert len(recorded) > 100
    missing = sorted({node.split("::")[0] for node in recorded}
                     - {str(p.relative_to(ROOT)) for p in (ROOT / "tests").rglob("test_*.py")})
    assert not missing, f"recorded test files that are not there (add them to MOVED_TESTS): {missing}"
    assert all((ROOT / "tests" / name).is_file() for name in SLOW_FIRST)


def test_the_moves_name_old_paths_gone_and_new_ones_there():
    for old, new in MOVED_TESTS.items():
        assert not (ROOT / old).exists(), old
        assert (ROOT / new).is_dir() if new.endswith("/") else (ROOT / new).is_file(), new


def test_a_file_moves_before_its_folder():
    assert current_node("tests/bench/test_bench.py::test_x[a]") == \
        "tests/studies/bench/test_bench.py::test_x[a]"
    assert current_node("tests/bench/test_measures.py::test_y") == "tests/test_measures.py::test_y"
    assert current_node("tests/throughput/test_ladder.py") == "tests/studies/test_throughput.py"
    assert current_node("tests/ops/test_cg.py::test_z") == "tests/ops/test_cg.py::test_z"

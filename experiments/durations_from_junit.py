"""A test run's ``--junitxml`` file as the ``--durations=0`` text docs/test-times/ keeps.

    python experiments/durations_from_junit.py RUN.xml "HEADER LINE" ... > docs/test-times/X.txt

Each test is one line, slowest first, ``{seconds:.2f}s call {node id}``, its seconds the junit
file's (setup, call and teardown summed, pytest's default ``junit_duration_report``); the
header lines (``# ...``) say what ran where, and a last header line gives pytest's count and
total as the run's summary printed them (pass it as a header)."""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ET


def node_id(case: ET.Element) -> str:
    """``tests/x/test_y.py::test_z[param]`` from a junit ``testcase`` (classname
    ``tests.x.test_y``, or ``tests.x.test_y.TestClass``)."""
    parts = case.get("classname", "").split(".")
    file_parts = parts if not parts[-1][:1].isupper() else parts[:-1]
    path = "/".join(file_parts) + ".py"
    klass = "" if file_parts == parts else f"::{parts[-1]}"
    return f"{path}{klass}::{case.get('name')}"


def durations(xml_path: str) -> list[tuple[float, str]]:
    """``[(seconds, node id)]`` of every test case, slowest first."""
    rows = [(float(c.get("time", 0.0)), node_id(c))
            for c in ET.parse(xml_path).getroot().iter("testcase")]
    return sorted(rows, key=lambda r: (-r[0], r[1]))


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    for header in argv[1:]:
        print(f"# {header}")
    for seconds, node in durations(argv[0]):
        print(f"{seconds:.2f}s call     {node}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

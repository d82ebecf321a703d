"""``python -m jaxrl.cli.faults N JAXRL-ARGS...``: the ``jaxrl`` command line, SIGKILLed right
after the checkpoint of chunk ``N`` is on disk (`jaxrl.engine.faults`), for the exact-resume
tests and `experiments/store_faults.py`."""

from __future__ import annotations

import sys

from jaxrl.cli import main as cli
from jaxrl.engine.faults import kill_after_chunk


def main(argv: list[str]) -> int:
    if not argv or not argv[0].isdigit():
        print("usage: python -m jaxrl.cli.faults N JAXRL-ARGS...", file=sys.stderr)
        return 2
    kill_after_chunk(int(argv[0]))
    return cli(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Where the repository's data is: the one place the package finds the files it reads beside
its code (a checkout's; an install without the repository has none of them).

* `PRESETS_DIR`: the tuned configurations, ``presets/ALGO/NAME.yaml``;
* `SUITES_DIR`: the benchmark suites, ``experiments/benchmarks/NAME.yaml``;
* `LADDERS_DIR`: the throughput ladders, ``experiments/ladders/NAME.yaml``;
* `PEERS_DIR`: the peers' harnesses, ``experiments/peers/``;
* `REPO`: the checkout itself (its git commit is each run's provenance).
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PRESETS_DIR = REPO / "presets"
SUITES_DIR = REPO / "experiments" / "benchmarks"
LADDERS_DIR = REPO / "experiments" / "ladders"
PEERS_DIR = REPO / "experiments" / "peers"

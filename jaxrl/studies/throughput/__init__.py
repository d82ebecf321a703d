"""The throughput ladder (``jaxrl ladder``): env-steps/s, compile time and peak memory of
fixed workloads at 1, 4, 16, ... 8,192 members, with a peer's harness at the same counts.

* `jaxrl.studies.throughput.workloads`: the ladder file (``experiments/ladders/throughput.yaml``);
* `jaxrl.studies.throughput.point`: one rung, measured in a process of its own;
* `jaxrl.studies.throughput.ladder`: the climb, resumable from ``results.json``;
* `jaxrl.studies.throughput.report`: ``report.md`` and the log-log ``ladder.png``.
"""

from jaxrl.studies.throughput.ladder import run_ladder, run_rungs
from jaxrl.studies.throughput.report import write_figure, write_report
from jaxrl.studies.throughput.workloads import MEMBER_COUNTS, LadderError, load_ladder, select

__all__ = ["MEMBER_COUNTS", "LadderError", "load_ladder", "run_ladder", "run_rungs", "select",
           "write_figure", "write_report"]

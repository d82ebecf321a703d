"""Where a test run's time went, from its compile audit and program log (tests/conftest.py):
per test module and in all, the tests' seconds beside JAX's tracing, lowering and XLA compile
seconds in the test processes; and the engine's programs by algorithm, env and program, how
many were compiled afresh and how many distinct ones (what the persistent cache could not
share between tests).

    python experiments/compile_audit_summary.py DURATIONS.txt AUDIT_DIR PROGRAM_LOG_DIR OUT.json

``DURATIONS.txt`` is the run's committed durations file (`durations_from_junit`); the audit
and the log are the folders ``JAXRL_COMPILE_AUDIT`` and ``JAXRL_PROGRAM_LOG`` named (empty
folders for a run without them: its seconds per module alone). A test
that runs its work in a child process (the CLI, notebooks, Ray) shows its seconds with no
compile beside them: the audit sees only the test processes."""

from __future__ import annotations

import collections
import json
import re
import sys
from pathlib import Path

PHASES = {"backend_compile_duration": "xla_compile_s", "jaxpr_trace_duration": "trace_s",
          "jaxpr_to_mlir_module_duration": "lower_s", "cache_misses": "cache_misses",
          "cache_hits": "cache_hits"}


def read_durations(path: Path) -> list[tuple[str, float]]:
    """``[(node id, seconds)]``, one per line (a node id the junit file repeats counts twice)."""
    out = []
    for line in path.read_text().splitlines():
        m = re.match(r"\s*([\d.]+)s\s+\w+\s+(\S+)", line)
        if m:
            out.append((m.group(2), float(m.group(1))))
    return out


def read_audit(folder: Path) -> dict[str, dict]:
    audit: dict[str, dict] = {}
    for f in sorted(folder.glob("*.json")):
        audit.update(json.loads(f.read_text()))
    return audit


def by_module(durations: list[tuple[str, float]], audit: dict[str, dict]) -> dict[str, dict]:
    modules: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    seen: set[str] = set()
    for node, seconds in durations:
        row = modules[node.split("::")[0]]
        row["tests"] += 1
        row["test_s"] += seconds
        for key, name in PHASES.items() if audit else ():  # no audit: the seconds alone
            row[name] += 0.0 if node in seen else audit.get(node, {}).get(key, 0.0)
        seen.add(node)
    return {m: {k: round(v, 2) for k, v in row.items()}
            for m, row in sorted(modules.items(), key=lambda kv: -kv[1]["test_s"])}


def programs(folder: Path) -> dict:
    rows = [json.loads(line) for f in sorted(folder.glob("*.jsonl"))
            for line in f.read_text().splitlines() if line.strip()]
    fresh = [r for r in rows if not r["from_disk"]]
    groups: dict[tuple, list] = collections.defaultdict(list)
    for r in fresh:
        groups[(r["algo"], r["env"], r["tag"].strip("()").split(",")[0].strip("'"))].append(r)
    clusters = [{"algo": a, "env": e, "program": p, "compiled": len(rs),
                 "distinct": len({(r["static"], r["shapes"], r["tag"]) for r in rs}),
                 "seconds": round(sum(r["seconds"] for r in rs), 1),
                 "tests": len({r["test"] for r in rs})}
                for (a, e, p), rs in groups.items()]
    clusters.sort(key=lambda c: -c["seconds"])
    return {"built": len(rows), "compiled": len(fresh),
            "compiled_s": round(sum(r["seconds"] for r in fresh), 1),
            "from_disk": len(rows) - len(fresh),
            "from_disk_s": round(sum(r["seconds"] for r in rows if r["from_disk"]), 1),
            "by_algo_env_program": clusters}


WORKERS = 2  # the README's test command runs `pytest -n 2`


def outside_compile(totals: dict) -> dict:
    """What the test processes spent outside XLA's compile: ``outside_compile_s`` (their seconds
    less ``xla_compile_s``) and ``outside_compile_per_worker_s`` (that over `WORKERS`, the wall
    a run would still take were every compile free, if the workers stayed balanced)."""
    rest = totals["test_s"] - totals.get("xla_compile_s", 0.0)
    return {"outside_compile_s": round(rest, 1),
            "outside_compile_per_worker_s": round(rest / WORKERS, 1)}


def main(argv: list[str]) -> int:
    if len(argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    durations, audit, log, out = map(Path, argv)
    modules = by_module(read_durations(durations), read_audit(audit))
    totals = collections.Counter()
    for row in modules.values():
        totals.update(row)
    rounded = {k: round(v, 1) for k, v in totals.items()}
    summary = {"durations": str(durations), "totals": {**rounded, **outside_compile(rounded)},
               "programs": programs(log) if any(log.glob("*.jsonl")) else None,
               "modules": modules}
    out.write_text(json.dumps(summary, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

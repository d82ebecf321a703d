"""``jaxrl ladder``: the throughput ladder (`jaxrl.studies.throughput`), its report and figure."""

from __future__ import annotations

from pathlib import Path

from jaxrl.output_paths import check_folder
from jaxrl.studies.throughput import load_ladder, run_ladder, select, write_figure, write_report
from jaxrl.studies.throughput.workloads import LadderError


def cmd_ladder(args) -> int:
    if not args.budget_scale > 0:
        raise LadderError(f"--budget-scale must be > 0, got {args.budget_scale}")
    ladder = load_ladder(args.file)
    workloads = [w.scaled(args.budget_scale) for w in select(ladder, args.workloads)]
    counts = args.members or list(ladder.member_counts)
    if args.peer and not args.peer_python:
        raise LadderError("--peer needs --peer-python, the Python of the peer's own venv "
                          "(see experiments/peers/README.md)")
    check_folder(args.out, "--out")
    out = Path(args.out)
    data = run_ladder(ladder, workloads, counts, out, peers=args.peer or [],
                      peer_python=args.peer_python, timeout=args.timeout,
                      progress=not args.no_progress)
    report = write_report(data, out, args.title)
    figure = write_figure(data, out, args.title)
    print(report.read_text())
    print(f"ladder: results.json, {report.name}" + (f", {figure.name}" if figure else "")
          + f" in {out}")
    failed = [p for p in data["points"] if p.get("status") == "failed" and p.get("lib") == "jaxrl"
              and p.get("workload") in {w.name for w in workloads}]
    return 1 if failed else 0

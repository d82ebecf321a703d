"""A lent GPU machine's limits, checked on what the GPU plan's calls send and bring back.

    python experiments/gpu_plan_limits.py tree ROOT [CARRIED ...]   # what a call carries
    python experiments/gpu_plan_limits.py out OUT [--needs FILE ...]  # what comes back
    python experiments/gpu_plan_limits.py resumed BEFORE.json AFTER.json
    python experiments/gpu_plan_limits.py summary FOLDER            # the ladder and the plan

Each prints one line per finding and exits 1 when a limit is broken (`experiments/
gpu_plan_dryrun.sh` runs them). The limits are the device tool's: the working tree that travels
(tracked and untracked-not-ignored files, and the carried paths) at most 64 MiB; at most 8
files back from $OUT, 16 MiB each, 64 MiB together, no more than two folders down, each name
of letters, digits, '.', '_' and '-'.
"""

from __future__ import annotations

import collections
import json
import re
import subprocess
import sys
from pathlib import Path

TREE_LIMIT = 64 << 20
FILES_BACK = 8
FILE_LIMIT = 16 << 20
BACK_LIMIT = 64 << 20
NAME = re.compile(r"^[A-Za-z0-9._-]+$")


def _mib(n: int) -> str:
    return f"{n / 2**20:.1f} MiB"


def _files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.is_file()] if folder.is_dir() else []


def tree(root: Path, carried: list[Path]) -> bool:
    """The tree's bytes as the tool counts them (git's view where there is a .git)."""
    if (root / ".git").exists():
        listed = subprocess.run(["git", "-C", str(root), "ls-files", "-z", "-co",
                                 "--exclude-standard"], capture_output=True, check=True).stdout
        files = [root / name for name in listed.decode().split("\0") if name]
        files = [f for f in files if f.is_file()]
    else:
        files = [f for f in _files(root) if not any(c in f.parents for c in carried)]
    tree_bytes = sum(f.stat().st_size for f in files)
    parts = {str(c): sum(f.stat().st_size for f in _files(c)) for c in carried}
    total = tree_bytes + sum(parts.values())
    detail = ", ".join(f"{name} {_mib(n)}" for name, n in parts.items())
    ok = total <= TREE_LIMIT
    print(f"tree: {_mib(tree_bytes)} in {len(files)} files + {detail} = {_mib(total)} "
          f"(limit {_mib(TREE_LIMIT)}): {'ok' if ok else 'OVER'}")
    return ok


def out(folder: Path, needs: list[str]) -> bool:
    files = _files(folder)
    problems = []
    if len(files) > FILES_BACK:
        problems.append(f"{len(files)} files (at most {FILES_BACK} come back)")
    for f in files:
        rel = f.relative_to(folder)
        if f.stat().st_size > FILE_LIMIT:
            problems.append(f"{rel}: {_mib(f.stat().st_size)} (over {_mib(FILE_LIMIT)})")
        if len(rel.parts) > 3:
            problems.append(f"{rel}: more than two folders down")
        if not all(NAME.match(part) for part in rel.parts):
            problems.append(f"{rel}: a name the tool does not bring back")
    total = sum(f.stat().st_size for f in files)
    if total > BACK_LIMIT:
        problems.append(f"{_mib(total)} in all (over {_mib(BACK_LIMIT)})")
    for name in needs:
        if not (folder / name).is_file():
            problems.append(f"{name} missing")
        elif name.endswith(".json"):
            try:
                json.loads((folder / name).read_text())
            except ValueError as err:
                problems.append(f"{name} does not parse: {err}")
    listing = ", ".join(f"{f.relative_to(folder)} {f.stat().st_size / 1024:.0f} KiB"
                        for f in sorted(files))
    print(f"out {folder.name}: {len(files)} files, {_mib(total)}: {listing}")
    for p in problems:
        print(f"  LIMIT: {p}")
    return not problems


def _points(path: Path) -> list[dict]:
    return json.loads(path.read_text())["points"]


def _key(p: dict) -> tuple:
    return p["lib"], p["workload"], p["members"], p["steps_per_member_requested"]


def resumed(before: Path, after: Path) -> bool:
    """Every rung measured before is in the later file untouched; no rung appears twice."""
    old = {_key(p): p for p in _points(before) if p.get("status") != "skipped"}
    new = _points(after)
    counts = collections.Counter(_key(p) for p in new)
    twice = [k for k, n in counts.items() if n > 1]
    kept = {_key(p): p for p in new}
    changed = [k for k, p in old.items() if kept.get(k, {}).get("measured_at") != p["measured_at"]]
    fresh = [k for k in kept if k not in old and kept[k].get("status") != "skipped"]
    print(f"resumed: {len(old)} rungs carried over, {len(changed)} measured again, "
          f"{len(fresh)} new, {len(twice)} listed twice")
    return not twice and not changed


def _timed_out(reason: str) -> bool:
    return "timed out" in reason


def step_failures(plan: dict) -> list[str]:
    """The plan's steps that failed for a reason other than a time limit (on a 2-core CPU a
    rung or a peer may run past its cap; an import or a crash is a fault the loan would meet
    too): the timeline, rejax's SAC with jaxrl's draw, jaxrl's SAC variants, the benches and
    the repeats' runs, each as one line."""
    found = []
    for name in ("timeline", "sac_draw"):
        step = plan.get(name) or {}
        if step.get("status") == "failed" and not _timed_out(step.get("reason", "")):
            found.append(f"{name}: {step.get('reason', '')[:200]}")
    for label, step in (plan.get("sac_cost") or {}).items():
        if step.get("status") == "failed" and not _timed_out(step.get("reason", "")):
            found.append(f"sac_cost {label}: {step.get('reason', '')[:200]}")
    for slug, bench in (plan.get("benches") or {}).items():
        if bench.get("status") == "failed" and not _timed_out(bench.get("reason", "")):
            found.append(f"bench {slug}: {bench.get('reason', '')[:200]}")
    for commit, rungs in (plan.get("repeats") or {}).items():
        for rung, runs in rungs.items():
            for run in runs:
                why = "; ".join(run[lib].get("reason", "") for lib in ("jaxrl", "rejax")
                                if run.get(lib, {}).get("status") == "failed")
                if run.get("status") == "failed" and not _timed_out(why):
                    found.append(f"repeat {rung} at {commit[:7]}: {why[:200]}")
    return found


def summary(folder: Path) -> bool:
    points = _points(folder / "results.json")
    by_status = collections.Counter(p["status"] for p in points)
    plan = json.loads((folder / "plan.json").read_text())
    print(f"ladder: {len(points)} rungs: " + ", ".join(f"{n} {s}" for s, n in by_status.items()))
    for p in points:
        if p["status"] != "ok":
            print(f"  {p['lib']} {p['workload']} x{p['members']}: {p['status']}: "
                  f"{p.get('reason', '')[:150]}")
    commits = {p.get("commit") for p in points if p["status"] == "ok"}
    print(f"commits of the measured rungs: {sorted(c or 'none' for c in commits)}")
    for call in plan["calls"]:
        print(f"call {call['phase']}: {call.get('started')} to {call.get('ended', 'killed')}, "
              f"rungs {call.get('rungs', '-')}, cache {call.get('cache', '-')}")
    print(f"cache check: {plan.get('cache_check', 'not made')}")
    print(f"benches: {plan.get('benches', {})}")
    failures = step_failures(plan)
    for line in failures:
        print(f"failed step: {line}")
    return all(c for c in commits) and "cache_check" in plan and not failures


def main(argv: list[str]) -> int:
    verb, *rest = argv
    if verb == "tree":
        ok = tree(Path(rest[0]), [Path(r) for r in rest[1:]])
    elif verb == "out":
        needs = rest[rest.index("--needs") + 1:] if "--needs" in rest else []
        ok = out(Path(rest[0]), needs)
    elif verb == "resumed":
        ok = resumed(Path(rest[0]), Path(rest[1]))
    elif verb == "summary":
        ok = summary(Path(rest[0]))
    else:
        print(f"unknown verb {verb!r}", file=sys.stderr)
        return 2
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

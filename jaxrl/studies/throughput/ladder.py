"""The throughput ladder: env-steps/s of each workload at growing member counts, with a peer
beside it at the same counts, on the same device, in the same minutes.

    for each workload:
        for members in 1, 4, 16, 64, ... (ascending):
            rung = a fresh process trains `members` members (`jaxrl.studies.throughput.point`)
            refused by the memory plan -> recorded as the top of the ladder; stop going up
            failed (out of memory, a crash) -> recorded with its one-line reason; stop
            with a peer: the peer's harness at the same count, right after; ratio = ours / its
            results.json is rewritten after every rung

Each rung of ours compiles afresh (the persistent compilation cache is off in the child unless
``$JAXRL_COMPILE_CACHE`` is set), so its compile time is comparable with the peer's.

A rerun with the same ``out`` folder skips every rung already recorded there (same workload,
members, steps per member and lib) and measures the rest, so a ladder cut short by a GPU call's
limit goes on in the next call from its ``results.json`` alone. With a deadline, a rung that
would run past it is recorded ``skipped`` (measured by the next run), and `run_rungs` measures
a list of rungs in the order given (the GPU plan's order of value) instead of climbing.
`jaxrl.studies.throughput.report` writes the report and the figure from that file.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from jaxrl.repo_data import PEERS_DIR, REPO
from jaxrl.runs.store import code_provenance
from jaxrl.studies.throughput.point import RESULT_PREFIX
from jaxrl.studies.throughput.workloads import Ladder, LadderError, Workload

__all__ = ["PEER_SCRIPTS", "Rung", "checkout_commit", "done_key", "run_ladder", "run_rungs"]

PEER_SCRIPTS = {"rejax": PEERS_DIR / "rejax_point.py"}
"""The harness that times each peer as it ships, one rung per call (its own venv's Python)."""
RESULTS_FILE = "results.json"
POINT_MAIN = "import sys; from jaxrl.studies.throughput.point import main; sys.exit(main(sys.argv[1:]))"
"""The child's program (``python -m`` would import the module twice: the package imports it)."""


@dataclasses.dataclass(frozen=True)
class Rung:
    """One measurement to make: ``lib`` at ``members`` members of ``workload``."""

    workload: Workload
    members: int
    lib: str = "jaxrl"


def done_key(record: dict) -> tuple:
    """What makes two records the same measurement (for skipping on a rerun)."""
    return (record.get("lib"), record.get("workload"), int(record.get("members", 0)),
            int(record.get("steps_per_member_requested", 0)))


COMMIT_VAR = "JAXRL_COMMIT"
"""The commit to record where the checkout has no ``.git`` (a GPU machine gets a copy of the
working tree only): ``JAXRL_COMMIT=$(git rev-parse HEAD)`` set by whoever sends the tree."""


def checkout_commit() -> dict:
    """``{"commit": sha or None, "commit_dirty": bool or None}`` of the jaxrl code measuring:
    git's answer where there is a ``.git``, else ``$JAXRL_COMMIT`` (dirtiness unknown)."""
    found = code_provenance()
    if found["git_commit"]:
        return {"commit": found["git_commit"], "commit_dirty": bool(found["git_diff"].strip())}
    return {"commit": os.environ.get(COMMIT_VAR) or None, "commit_dirty": None}


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:500] if lines else ""


def _parse(stdout: str, prefix: str = "") -> dict | None:
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if prefix and line.startswith(prefix):
            line = line[len(prefix):]
        elif prefix:
            continue
        if line.startswith("{"):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                return None
    return None


def measure_rung(rung: Rung, timeout: float, peer_python: str | None = None,
                 env: dict | None = None, code: Path | None = None) -> dict:
    """Run one rung in a child process; its record (a failed one if the child died). ``code``:
    the folder whose ``jaxrl`` package a jaxrl rung imports (default this checkout's)."""
    w = rung.workload
    base = {"workload": w.name, "members": rung.members, "lib": rung.lib,
            "steps_per_member_requested": w.steps_per_member}
    if rung.lib == "jaxrl":
        cmd = [sys.executable, "-c", POINT_MAIN,
               json.dumps({"workload": w.to_dict(), "members": rung.members})]
        prefix = RESULT_PREFIX
        # a rung's compile time is a fresh compile's, as the peer's is, unless the user set
        # the persistent cache's switch
        env = {"JAXRL_COMPILE_CACHE": "0", **(env or os.environ)}
    else:
        cmd = [peer_python or sys.executable, str(PEER_SCRIPTS[rung.lib]), w.name,
               str(rung.members), str(w.steps_per_member)]
        prefix = ""
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env,
                              cwd=code or REPO)
    except subprocess.TimeoutExpired:
        return {**base, "status": "failed", "reason": f"timed out after {timeout:.0f} s"}
    except OSError as err:
        return {**base, "status": "failed", "reason": f"could not start {cmd[0]}: {err}"}
    record = _parse(proc.stdout, prefix)
    if record is None:
        why = _last_line(proc.stderr) or f"exit status {proc.returncode}, no result"
        if proc.returncode < 0:
            why = f"killed by signal {-proc.returncode} ({why})"
        return {**base, "status": "failed", "reason": why}
    record.setdefault("status", "ok")
    record.update(lib=rung.lib, steps_per_member_requested=w.steps_per_member,
                  process_seconds=time.perf_counter() - start)
    return record


def load_results(out: Path) -> dict:
    path = out / RESULTS_FILE
    if not path.is_file():
        return {"points": []}
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise LadderError(f"{path} cannot be read to resume the ladder ({err}); move it away "
                          "or give another --out") from None
    if not isinstance(data, dict) or not isinstance(data.get("points"), list):
        raise LadderError(f"{path} is not a ladder's results file (no 'points' list)")
    return data


def save_results(out: Path, data: dict) -> None:
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / f".{RESULTS_FILE}.tmp"
    tmp.write_text(json.dumps(data, indent=1, default=float))
    os.replace(tmp, out / RESULTS_FILE)


def _say(enabled: bool, text: str) -> None:
    if enabled:
        print(text, file=sys.stderr, flush=True)


def _describe(record: dict) -> str:
    if record["status"] == "ok":
        return (f"{record['env_steps_per_second']:,.0f} env-steps/s, compile "
                f"{record.get('compile_seconds', float('nan')):.1f} s")
    return f"{record['status']}: {record.get('reason', '')}"


class _Record:
    """The ladder's ``results.json`` being written: each rung measured once, saved after each.

    A rung already recorded (same lib, workload, members, steps per member) is skipped, unless
    it was ``skipped`` for want of time (a call's deadline), which leaves it to be measured."""

    def __init__(self, ladder: Ladder, workloads: list[Workload], out: Path,
                 measure: Callable[[Rung, float], dict], timeout: float,
                 deadline: float | None, progress: bool):
        self.out, self.measure, self.timeout, self.progress = out, measure, timeout, progress
        self.deadline = deadline
        self.data = load_results(out)
        self.data.update(ladder=ladder.name, ladder_file=str(ladder.path),
                         workloads={**self.data.get("workloads", {}),
                                    **{w.name: w.to_dict() for w in workloads}})
        self.done = {done_key(p): p for p in self.data["points"] if p.get("status") != "skipped"}
        self.commit = checkout_commit()
        save_results(out, self.data)

    def __call__(self, rung: Rung) -> dict:
        key = (rung.lib, rung.workload.name, rung.members, rung.workload.steps_per_member)
        if key in self.done:
            _say(self.progress, f"{rung.lib} {rung.workload.name} x{rung.members}: recorded, "
                                "skipped")
            return self.done[key]
        left = None if self.deadline is None else self.deadline - time.time()
        timeout = self.timeout if left is None else min(self.timeout, left)
        _say(self.progress, f"{rung.lib} {rung.workload.name} x{rung.members} ...")
        if timeout < MIN_RUNG_SECONDS:
            result = _skipped(rung, f"the call's deadline: {max(left or 0, 0):.0f} s left")
        else:
            result = self.measure(rung, timeout)
            if result["status"] == "failed" and timeout < self.timeout \
                    and result.get("reason", "").startswith("timed out"):
                result = _skipped(rung, f"cut by the call's deadline after {timeout:.0f} s "
                                        f"(its own cap is {self.timeout:.0f} s)")
        result.update(self.commit, measured_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        self.data["points"] = [p for p in self.data["points"] if done_key(p) != done_key(result)]
        self.data["points"].append(result)
        if result["status"] != "skipped":
            self.done[key] = result
        save_results(self.out, self.data)
        _say(self.progress, f"  {_describe(result)}")
        return result


MIN_RUNG_SECONDS = 10.0
"""A rung is not started with less time than this before the call's deadline."""


def _skipped(rung: Rung, why: str) -> dict:
    w = rung.workload
    return {"workload": w.name, "members": rung.members, "lib": rung.lib,
            "steps_per_member_requested": w.steps_per_member, "status": "skipped", "reason": why}


def _measurer(measure: Callable[..., dict] | None, peer_python: str | None
              ) -> Callable[[Rung, float], dict]:
    if measure is not None:
        return lambda rung, timeout: measure(rung)
    return lambda rung, timeout: measure_rung(rung, timeout, peer_python)


def _check_peers(peers) -> None:
    unknown = sorted(set(peers) - set(PEER_SCRIPTS))
    if unknown:
        raise LadderError(f"unknown peer {unknown[0]!r}; peers: {', '.join(PEER_SCRIPTS)}")


def run_ladder(ladder: Ladder, workloads: list[Workload], member_counts: list[int], out: Path,
               peers: list[str] = (), peer_python: str | None = None, timeout: float = 900,
               progress: bool = True, measure: Callable[..., dict] | None = None,
               deadline: float | None = None) -> dict:
    """Climb the ladder for each workload; every rung recorded in ``out/results.json``.

    ``peers`` (e.g. ``["rejax"]``) run right after ours at each count where the workload names
    that peer, with ``peer_python`` (the peer's own venv). ``deadline`` (a ``time.time()``):
    no rung runs past it; one it cuts short or leaves out is recorded ``skipped`` and measured
    by the next run with the same ``out``. ``measure(rung)`` replaces the child-process
    measurement (tests). Returns the results data."""
    _check_peers(peers)
    record = _Record(ladder, workloads, out, _measurer(measure, peer_python), timeout, deadline,
                     progress)
    for w in workloads:
        peer_running = {p: w.peer == p for p in peers}
        for members in sorted(member_counts):
            ours = record(Rung(w, members))
            if ours["status"] != "ok":
                break  # refused by the plan (the top of the ladder) or failed: stop climbing
            for peer, running in peer_running.items():
                if running and record(Rung(w, members, peer))["status"] != "ok":
                    peer_running[peer] = False  # the peer's own top
    save_results(out, record.data)
    return record.data


def run_rungs(ladder: Ladder, rungs: list[tuple[Workload, int]], out: Path,
              peers: list[str] = (), peer_python: str | None = None, timeout: float = 900,
              progress: bool = True, measure: Callable[..., dict] | None = None,
              deadline: float | None = None) -> dict:
    """Measure ``rungs`` (workload, members) in the order given, each of ours followed by each
    peer the workload names: a plan in order of value (the GPU plan's headline rungs first),
    not a climb. Recorded, skipped and cut as `run_ladder` does."""
    _check_peers(peers)
    workloads = list({w.name: w for w, _ in rungs}.values())
    record = _Record(ladder, workloads, out, _measurer(measure, peer_python), timeout, deadline,
                     progress)
    for w, members in rungs:
        if record(Rung(w, members))["status"] == "ok":
            for peer in peers:
                if w.peer == peer:
                    record(Rung(w, members, peer))
    save_results(out, record.data)
    return record.data

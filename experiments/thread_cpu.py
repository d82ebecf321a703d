"""Which threads of a process burn the CPU, sampled from /proc while a command runs (Linux).

    python experiments/thread_cpu.py OUT.json [--every 3] [--label TEXT] -- COMMAND ...

Runs COMMAND, and every ``--every`` seconds reads each of its threads' user + system CPU time
(``/proc/PID/task/TID/stat``, fields 14 and 15). Writes OUT.json: the command, the label, the
clock tick, and per interval the CPU seconds each thread used in it, by thread name (``comm``,
which the kernel cuts at 15 characters: XLA's intra-op pool is ``tf_XLAEigen``). A thread that
used nothing in an interval is left out of it. Only the process COMMAND starts is sampled, not
its children.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path


def thread_ticks(pid: int) -> dict[str, tuple[str, int]]:
    """``{tid: (name, user + system ticks)}`` of every thread of ``pid`` now."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except FileNotFoundError:
        return out
    for tid in tids:
        try:
            name = Path(f"/proc/{pid}/task/{tid}/comm").read_text().strip()
            stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
        except (FileNotFoundError, ProcessLookupError):
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) ": state is field 3
        out[tid] = (name, int(fields[11]) + int(fields[12]))
    return out


def sample(command: list[str], every: float) -> tuple[int, list[dict]]:
    """Run ``command``; per interval, ``{"t": seconds from start, "threads": [[tid, name,
    cpu seconds]]}``. Returns the exit status and the intervals."""
    tick = os.sysconf("SC_CLK_TCK")
    start = time.monotonic()
    proc = subprocess.Popen(command)
    before, intervals = thread_ticks(proc.pid), []
    while proc.poll() is None:
        time.sleep(every)
        now = thread_ticks(proc.pid)
        used = [[tid, name, round((ticks - before.get(tid, (name, 0))[1]) / tick, 2)]
                for tid, (name, ticks) in sorted(now.items())
                if ticks > before.get(tid, (name, 0))[1]]
        intervals.append({"t": round(time.monotonic() - start, 1), "threads": used})
        before = now
    return proc.returncode, intervals


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--" not in argv:
        print("usage: thread_cpu.py OUT.json [--every S] [--label TEXT] -- COMMAND ...",
              file=sys.stderr)
        return 2
    split = argv.index("--")
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out", type=Path)
    p.add_argument("--every", type=float, default=3.0)
    p.add_argument("--label", default="")
    args = p.parse_args(argv[:split])
    command = argv[split + 1:]
    status, intervals = sample(command, args.every)
    args.out.write_text(json.dumps({"label": args.label, "command": command, "exit": status,
                                    "every_seconds": args.every, "intervals": intervals},
                                   indent=1) + "\n")
    return status


if __name__ == "__main__":
    sys.exit(main())

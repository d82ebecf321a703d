"""One member on the CPU: jaxrl's default of one CPU device per core against one device.

    python experiments/device_count_ab.py OUT.jsonl [--workloads NAME ...] [--passes 2]
        [--scale NAME=K ...]

For each throughput-ladder workload (``experiments/ladders/throughput.yaml``) at 1 member, the
point (`jaxrl.studies.throughput.point`, a fresh process each) runs with ``$JAXRL_CPU_DEVICES``
set to the cores this process may use (one device per core, `jaxrl.platform`'s default for many
members; the committed points of 2026-11-30 left it unset, which gave the same before the point
chose one device for one member) and set to 1, in turn, ``--passes`` times. A one-member program runs on one device either way; what differs is how many devices
the process has. ``--scale NAME=K`` multiplies a workload's steps per member by K, so that a
short ladder budget becomes a run long enough to time. Each point appends one JSON line: the
workload, the setting, the pass, the commit and the point's own record (``run_seconds``,
``env_steps_per_second_all``, ``local_devices``). Nothing else should run meanwhile.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from jaxrl.platform import cpu_cores
from jaxrl.studies.throughput.ladder import POINT_MAIN, checkout_commit

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ("ppo-cartpole", "ppo-breakout-minatar", "ppo-brax-hopper", "dqn-cartpole",
           "pqn-cartpole")
SETTINGS = {"per-core": str(cpu_cores()), "one-device": "1"}  # name -> $JAXRL_CPU_DEVICES


def point(name: str, scale: int, devices: str) -> dict:
    from jaxrl.studies.throughput.point import RESULT_PREFIX
    from jaxrl.studies.throughput.workloads import load_ladder

    (workload,) = [w for w in load_ladder("throughput").workloads if w.name == name]
    request = workload.to_dict()
    request["steps_per_member"] = workload.steps_per_member * scale
    env = {**os.environ, "JAXRL_CPU_DEVICES": devices}
    out = subprocess.run([sys.executable, "-c", POINT_MAIN,
                          json.dumps({"workload": request, "members": 1})],
                         capture_output=True, text=True, check=True, cwd=ROOT, env=env).stdout
    (line,) = [x for x in out.splitlines() if x.startswith(RESULT_PREFIX)]
    return json.loads(line[len(RESULT_PREFIX):])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out", type=Path)
    p.add_argument("--workloads", nargs="*", default=list(DEFAULT))
    p.add_argument("--passes", type=int, default=2)
    p.add_argument("--scale", nargs="*", default=[], help="NAME=K: K times the ladder's steps")
    args = p.parse_args(argv)
    scale = {k: int(v) for k, v in (x.split("=", 1) for x in args.scale)}
    done = set()
    if args.out.exists():
        done = {(x["workload"], x["setting"], x["pass"])
                for x in map(json.loads, args.out.read_text().splitlines()) if x}
    commit = checkout_commit()
    for n in range(1, args.passes + 1):
        for name in args.workloads:
            for setting, devices in SETTINGS.items():
                if (name, setting, n) in done:
                    continue
                record = point(name, scale.get(name, 1), devices)
                line = {"workload": name, "setting": setting, "pass": n,
                        "scale": scale.get(name, 1), **commit, "point": record}
                with args.out.open("a") as f:
                    f.write(json.dumps(line) + "\n")
                print(name, setting, n, record.get("status"), record.get("run_seconds"),
                      record.get("local_devices"), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

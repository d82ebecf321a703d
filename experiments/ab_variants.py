"""A/B of engine variants on the throughput ladder's workloads: each variant a fresh process
(`jaxrl.studies.throughput.point`), the variants in turn (A B A B ...) for ``--rounds`` rounds,
so that each pair is measured in the same minutes. A variant is a ladder workload at a member
count with overrides of its env options and config.

    JAXRL_CPU_DEVICES=1 python experiments/ab_variants.py OUT_DIR --workload ppo-brax-hopper \
        --members 1 --rounds 2 \
        --variant 'reset at every step={"env_kwargs": {"backend": "mjx", "prepared_starts": 0}}' \
        --variant 'prepared starts={"env_kwargs": {"backend": "mjx"}}'

A variant's ``xla_flags`` (a string) is appended to ``XLA_FLAGS`` for its process only, e.g.
``--variant 'no YNNPACK dots={"xla_flags": "--xla_cpu_experimental_ynn_fusion_type="}'``.
A variant's ``cpus`` (a ``taskset -c`` list, e.g. ``"0"``) pins its process to those CPUs.

Writes ``OUT_DIR/results.jsonl`` (one line per run: the variant, its round, the rung's record,
the commit) and prints each line's rate as it comes. ``--env`` replaces the workload's env.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from jaxrl.studies.throughput.point import RESULT_PREFIX

LADDER = Path(__file__).parent / "ladders" / "throughput.yaml"


def workload(name: str, overrides: dict, env: str | None) -> dict:
    """The ladder's workload ``name`` with ``overrides`` (``env_kwargs``, ``config``,
    ``steps_per_member``) merged in."""
    found = [w for w in yaml.safe_load(LADDER.read_text())["workloads"] if w["name"] == name]
    if not found:
        raise SystemExit(f"no workload {name!r} in {LADDER}")
    w = dict(found[0])
    if env:
        w["env"] = env
    w["env_kwargs"] = {**(w.get("env_kwargs") or {}), **overrides.get("env_kwargs", {})}
    w["config"] = {**w.get("config", {}), **overrides.get("config", {})}
    w["steps_per_member"] = overrides.get("steps_per_member", w["steps_per_member"])
    return w


def run_point(request: dict, xla_flags: str = "", cpus: str = "") -> dict:
    """One rung in its own process, ``xla_flags`` appended to its ``XLA_FLAGS`` and, with
    ``cpus``, pinned to those CPUs (``taskset -c``); its record (``status: failed`` if it
    printed none)."""
    env = dict(os.environ)
    if xla_flags:
        env["XLA_FLAGS"] = f"{env.get('XLA_FLAGS', '')} {xla_flags}".strip()
    pin = ["taskset", "-c", cpus] if cpus else []
    out = subprocess.run([*pin, sys.executable, "-m", "jaxrl.studies.throughput.point",
                          json.dumps(request)], capture_output=True, text=True, env=env)
    lines = [x for x in out.stdout.splitlines() if x.startswith(RESULT_PREFIX)]
    if not lines:
        return {"status": "failed", "reason": out.stderr.strip().splitlines()[-1:]}
    return json.loads(lines[-1][len(RESULT_PREFIX):])


def commit() -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                          cwd=Path(__file__).parent).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--workload", required=True)
    parser.add_argument("--env", default=None)
    parser.add_argument("--members", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--variant", action="append", required=True,
                        help="NAME=JSON of env_kwargs / config / steps_per_member / xla_flags / cpus")
    args = parser.parse_args()
    variants = [(v.split("=", 1)[0], json.loads(v.split("=", 1)[1])) for v in args.variant]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for round_ in range(args.rounds):
        for name, overrides in variants:
            w = workload(args.workload, overrides, args.env)
            record = run_point({"workload": w, "members": args.members},
                               overrides.get("xla_flags", ""), overrides.get("cpus", ""))
            line = {"variant": name, "round": round_, "workload": args.workload,
                    "env": w["env"], "members": args.members, "overrides": overrides,
                    "commit": commit(), "record": record}
            with open(out / "results.jsonl", "a") as f:
                f.write(json.dumps(line) + "\n")
            print(f"{name:30s} round {round_}: {record.get('env_steps_per_second', 0):10,.0f} "
                  f"env-steps/s, compile {record.get('compile_seconds', 0):5.1f} s "
                  f"({record.get('status')})", flush=True)


if __name__ == "__main__":
    main()

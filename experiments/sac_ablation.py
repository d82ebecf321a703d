"""SAC on brax hopper at one member, jaxrl beside rejax, one change at a time (issue 76, item 4).

    python experiments/sac_ablation.py OUT.jsonl [--peer-python /tmp/rejax-venv/bin/python]
        [--steps 30720] [--only NAME ...] [--code PATH --patches NAME ...] [--pin CPUS]
        [--pass N] [--jaxrl-cpu-devices N]

The throughput ladder's ``sac-brax-hopper`` rung (rejax's benchmark/hopper_1m.yaml
configuration: 128 envs, 128 gradient steps of batch 128 per 128 env steps, a 1M buffer, 10k
random steps first) at one member, each variant a fresh process, one after the other, in the
order of `VARIANTS`. Each appends one JSON line to OUT.jsonl: the variant's name, the library,
what it changes, and the point's own record (jaxrl's `jaxrl.studies.throughput.point`,
rejax's experiments/peers/rejax_point.py). A variant already in OUT.jsonl (in the same pass,
pinning and device count) is not run again.

Options that change how a point runs, each recorded in its line: ``--code PATH`` runs the
jaxrl variants from another checkout (a ``git worktree add --detach`` with the patches
``--patches`` names applied); ``--pin CPUS`` runs every variant under ``taskset -c CPUS``, so
that XLA's thread pool has as many threads as CPUS names; ``--jaxrl-cpu-devices N`` sets
``$JAXRL_CPU_DEVICES`` for the jaxrl variants (by default the point has one CPU device at one
member, as ``jaxrl train`` does; lines before 18d3e12 had one per core). rejax runs with JAX's
own device count, not the one this process's ``import jaxrl`` exports.

The variants take rejax one step toward jaxrl at a time (its replay draw, its vmap of one
member) and time both libraries at 128, 64 and 1 gradient steps per iteration (rejax also at
0; jaxrl takes at least one), so that the cost of one gradient step and the cost of the rest
of an iteration (acting, the env step, the buffer's write) are each measured, not inferred:
with the same env steps and iterations, the run seconds at 128 less those at 1, over the
127 x iterations gradient steps taken out, is the seconds of one gradient step, and the run at
1 is the rest. (rejax skips the random fill's gradient steps: its learning switch's
predicate is the same for every member, so under ``vmap`` it stays a real branch. jaxrl
computed and discarded them until afe8bb0, and now skips them too:
benchmarks/gpu-hlo-cpu/NOTES.md.)
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from jaxrl.compile_cache import default_dir as compile_cache_dir
from jaxrl.platform import JAX_VAR, MARK_VAR
from jaxrl.studies.throughput.ladder import POINT_MAIN, checkout_commit

ROOT = Path(__file__).resolve().parents[1]
WORKLOAD = "sac-brax-hopper"
REJAX_POINT = ROOT / "experiments" / "peers" / "rejax_point.py"

# name -> (library, what it changes, rejax_point.py options or jaxrl config overrides)
VARIANTS: dict[str, tuple[str, str, list[str] | dict]] = {
    "rejax": ("rejax", "as it ships", []),
    "rejax-draw": ("rejax", "replay draw with replacement (jaxrl's)",
                   ["--draw-with-replacement"]),
    "rejax-draw-novmap": ("rejax", "jaxrl's draw, one member not vmapped",
                          ["--draw-with-replacement", "--no-vmap"]),
    "rejax-draw-64": ("rejax", "jaxrl's draw, 64 gradient steps an iteration",
                      ["--draw-with-replacement", "--set", "num_epochs=64"]),
    "jaxrl": ("jaxrl", "as it ships", {}),
    "jaxrl-64": ("jaxrl", "64 gradient steps an iteration", {"gradient_steps": 64}),
    "rejax-draw-0": ("rejax", "jaxrl's draw, no gradient step",
                     ["--draw-with-replacement", "--set", "num_epochs=0"]),
    "rejax-draw-1": ("rejax", "jaxrl's draw, one gradient step an iteration",
                     ["--draw-with-replacement", "--set", "num_epochs=1"]),
    "jaxrl-1": ("jaxrl", "one gradient step an iteration (jaxrl takes at least one)",
                {"gradient_steps": 1}),
}


def pinned(pin: str | None) -> list[str]:
    """The command prefix that pins a point to ``pin``'s CPUs (``taskset -c``), or none."""
    return ["taskset", "-c", pin] if pin else []


def jaxrl_point(steps: int, overrides: dict, code: Path = ROOT, pin: str | None = None,
                cpu_devices: int | None = None) -> dict:
    from jaxrl.studies.throughput.point import RESULT_PREFIX
    from jaxrl.studies.throughput.workloads import load_ladder

    (workload,) = [w for w in load_ladder("throughput").workloads if w.name == WORKLOAD]
    request = workload.to_dict()
    request["config"] = {**request["config"], **overrides}
    request["steps_per_member"] = steps
    env = {**os.environ, "PYTHONPATH": str(code)}
    if cpu_devices:
        env["JAXRL_CPU_DEVICES"] = str(cpu_devices)
    if pin:  # XLA may split work by the thread count it compiled for: a cache of its own
        env.setdefault("JAXRL_CACHE_DIR", str(Path(compile_cache_dir()) / f"pinned-{pin}"))
    out = subprocess.run([*pinned(pin), sys.executable, "-c", POINT_MAIN,
                          json.dumps({"workload": request, "members": 1})],
                         capture_output=True, text=True, check=True, cwd=code, env=env).stdout
    (line,) = [x for x in out.splitlines() if x.startswith(RESULT_PREFIX)]
    return json.loads(line[len(RESULT_PREFIX):])


def rejax_point(python: str, steps: int, options: list[str], pin: str | None = None) -> dict:
    """rejax's point in a process of its own, with JAX's CPU device count as rejax's users get
    it (JAX's default), not the one-per-core count this process's ``import jaxrl`` set."""
    env = dict(os.environ)
    if MARK_VAR in env and env.get(JAX_VAR) == env[MARK_VAR]:
        del env[JAX_VAR], env[MARK_VAR]
    out = subprocess.run([*pinned(pin), python, str(REJAX_POINT), WORKLOAD, "1", str(steps),
                          *options], capture_output=True, text=True, check=True, cwd=ROOT,
                         env=env).stdout
    return json.loads(out.strip().splitlines()[-1])


def code_commit(code: Path) -> dict:
    """``checkout_commit()`` of the checkout at ``code`` (asked in that folder)."""
    line = ("import json; from jaxrl.studies.throughput.ladder import checkout_commit; "
            "print(json.dumps(checkout_commit()))")
    out = subprocess.run([sys.executable, "-c", line], capture_output=True, text=True,
                         check=True, cwd=code, env={**os.environ, "PYTHONPATH": str(code)})
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out")
    p.add_argument("--peer-python", default="/tmp/rejax-venv/bin/python")
    p.add_argument("--steps", type=int, default=30720)
    p.add_argument("--only", nargs="*", default=None)
    p.add_argument("--code", type=Path, default=ROOT,
                   help="the checkout whose jaxrl the jaxrl variants run")
    p.add_argument("--patches", nargs="*", default=[],
                   help="the patches applied in --code, recorded with each jaxrl line")
    p.add_argument("--pin", default=None, help="taskset -c CPUS for every variant")
    p.add_argument("--jaxrl-cpu-devices", type=int, default=None,
                   help="$JAXRL_CPU_DEVICES for the jaxrl variants (default: the point's "
                        "choice, one device at one member; lines before 18d3e12 had one "
                        "per core)")
    p.add_argument("--pass", dest="pass_", type=int, default=None,
                   help="a pass number, recorded; a variant is skipped only within its pass")
    args = p.parse_args(argv)
    out = Path(args.out)
    lines = [json.loads(x) for x in out.read_text().splitlines() if x.strip()] \
        if out.exists() else []
    done = {(x["variant"], x.get("pass"), x.get("pinned_cpus"), x.get("jaxrl_cpu_devices"))
            for x in lines}
    devices = lambda lib: args.jaxrl_cpu_devices if lib == "jaxrl" else None
    commits = {"rejax": checkout_commit(), "jaxrl": code_commit(args.code.resolve())}
    for name, (lib, change, how) in VARIANTS.items():
        if (name, args.pass_, args.pin, devices(lib)) in done or (args.only and name not in args.only):
            continue
        record = (rejax_point(args.peer_python, args.steps, how, args.pin) if lib == "rejax"
                  else jaxrl_point(args.steps, how, args.code.resolve(), args.pin,
                                 args.jaxrl_cpu_devices))
        line = {"variant": name, "lib": lib, "change": change, **commits[lib], "point": record}
        if lib == "jaxrl" and args.patches:
            line["patches"] = args.patches
        if args.pin:
            line["pinned_cpus"] = args.pin
        if lib == "jaxrl" and args.jaxrl_cpu_devices:
            line["jaxrl_cpu_devices"] = args.jaxrl_cpu_devices
        if args.pass_ is not None:
            line["pass"] = args.pass_
        with out.open("a") as f:
            f.write(json.dumps(line) + "\n")
        print(name, record.get("env_steps_per_second"), record.get("run_seconds"), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

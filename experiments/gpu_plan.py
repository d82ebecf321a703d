"""The GPU plan: what a lent GPU machine runs first, in order of value per GPU minute, each step
picking up where the last lease left off.

    python experiments/gpu_plan.py [--dry] [--store DIR] [--peer-python PATH] [--only STEP ...]

Steps (one at a time, so each has the whole GPU; a step that exits 0 is done for good):

1. ``ladder``: the throughput ladder on every workload, 1 to 8,192 members, rejax beside it
   (``jaxrl ladder``; target under 10 minutes). Pure-JAX workloads are what a GPU is for, and
   no pure-JAX workload has run on one yet.
   ``profile``: a `jax.profiler` trace of the ladder's rung where jaxrl's rate over rejax's is
   lowest (``profile/WORKLOAD-MEMBERS/trace``), to find what to fix on the slowest GPU path.
2. ``minatar``: the ``minatar`` suite at 16 seeds and full budget.
3. ``mujoco-002``: reading 002's MuJoCo table (PPO and TRPO at 1M) at 16 seeds.
4. ``spinningup-3m``: Spinning Up's 3M-step table at 16 seeds.
5. ``atari``: last: its emulators run on the host's CPU cores, so it buys the least per GPU
   minute.

Where it resumes from: the ladder's ``results.json`` (rungs it has are not measured again), and
the run store's bench runs (finished entries are skipped; an interrupted entry resumes from its
newest checkpoint: every bench step checkpoints). Both live in the store folder (``--store``,
default ``$JAXRL_RUNS_DIR``: the ladder in ``ladder-gpu/``, this plan's state in ``plan/``), which
`experiments/lease_relay.py` carries from one lease to the next (``gpu_lease.sh stop``,
``relay-out``, ``relay-in``).

``--dry`` runs every step at a tiny budget (two member counts, two seeds, a few thousand
steps, a few entries per suite): the plan's dry run on the CPU (``JAX_PLATFORMS=cpu``), relay
included (`experiments/gpu_plan_dryrun.sh`).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from jaxrl.throughput.report import whole_run_rate

JAXRL = [sys.executable, "-m", "jaxrl.cli"]


@dataclasses.dataclass(frozen=True)
class Step:
    name: str
    why: str
    args: tuple[str, ...]  # after `jaxrl`
    dry_args: tuple[str, ...]  # appended in a dry run


def steps(store: Path, peer_python: str | None) -> list[Step]:
    peer = ("--peer", "rejax", "--peer-python", peer_python) if peer_python else ()
    bench = ("--checkpoint-every", "5", "--no-progress")
    return [
        Step("ladder", "pure-JAX throughput, 1 to 8,192 members, rejax beside it",
             ("ladder", "--out", str(store / "ladder-gpu"), "--no-progress",
              "--title", "Throughput ladder on a GPU", *peer),
             ("--members", "1", "4", "--budget-scale", "0.05")),
        Step("profile", "a jax.profiler trace of the rung where jaxrl trails rejax most",
             ("ladder", "--out", str(store / "profile"), "--no-progress"), ()),
        Step("minatar", "the minatar suite, 16 seeds, full budget",
             ("bench", "minatar", "--seeds", "16", "--out", str(store / "reports" / "minatar"),
              *bench),
             ("--seeds", "2", "--budget-scale", "0.01", "--only", "ppo/gymnax:Breakout-MinAtar",
              "--only", "dqn/gymnax:Asterix-MinAtar", "--checkpoint-every", "1")),
        Step("mujoco-002", "reading 002's MuJoCo table (PPO, TRPO at 1M), 16 seeds",
             ("bench", "mujoco", "--only", "ppo/brax:*", "--only", "trpo/brax:*", "--seeds", "16",
              "--out", str(store / "reports" / "mujoco-002"), *bench),
             ("--seeds", "2", "--budget-scale", "0.002", "--only", "ppo/brax:hopper")),
        Step("spinningup-3m", "Spinning Up's 3M table, 16 seeds",
             ("bench", "mujoco", "--only", "*-3M/*", "--seeds", "16",
              "--out", str(store / "reports" / "spinningup-3m"), *bench),
             ("--seeds", "2", "--budget-scale", "0.0007", "--only", "sac-3M/brax:hopper")),
        Step("atari", "the atari suite (emulator-bound: last)",
             ("bench", "atari", "--out", str(store / "reports" / "atari"),
              "--checkpoint-every", "1", "--no-progress"),
             ("--seeds", "1", "--budget-scale", "0.0005", "--only", "ppo/atari:Pong")),
    ]


def dry_command(step: Step) -> list[str]:
    """The step's command at a dry run's budget: the dry flags replace the full ones they
    name (a dry ``--only`` replaces every full ``--only``)."""
    args, dry = list(step.args), list(step.dry_args)
    named = {a for a in dry if a.startswith("--")}
    kept, i = [], 0
    while i < len(args):
        if args[i] in named and args[i] not in ("--peer", "--peer-python"):
            i += 1
            while i < len(args) and not args[i].startswith("--"):
                i += 1  # drop the flag's values
            continue
        kept.append(args[i])
        i += 1
    return [*JAXRL, *kept, *dry]


def slowest_rung(results: Path) -> tuple[str, int, float] | None:
    """``(workload, members, ratio)`` of the ladder's rung where jaxrl's rate over the peer's
    is lowest (at most 1,024 members: a short trace), or None without paired rungs."""
    try:
        points = json.loads(results.read_text())["points"]
    except (OSError, ValueError, KeyError):
        return None
    ok = {(p["lib"], p["workload"], p["members"]): whole_run_rate(p)
          for p in points if p.get("status") == "ok"}
    ratios = [(ok[key] / ok[("rejax", *key[1:])], key[1], key[2]) for key in ok
              if key[0] == "jaxrl" and key[2] <= 1024 and ok.get(("rejax", *key[1:]))]
    if not ratios:
        return None
    ratio, workload, members = min(ratios)
    return workload, members, ratio


def profile_command(step: Step, store: Path, dry: bool) -> tuple[list[str], dict] | None:
    """The profile step's command and environment, chosen from the ladder's results."""
    found = slowest_rung(store / "ladder-gpu" / "results.json")
    if found is None:
        return None
    workload, members, ratio = found
    out = store / "profile" / f"{workload}-{members}"
    cmd = [*JAXRL, "ladder", workload, "--members", str(members), "--out", str(out),
           "--no-progress", "--title", f"Profiled rung ({ratio:.2f}x rejax in the ladder)",
           *(("--budget-scale", "0.05") if dry else ())]
    return cmd, {"JAXRL_PROFILE_DIR": str(out / "trace")}


def load_state(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return {"steps": {}}
    except (OSError, ValueError) as err:
        sys.exit(f"gpu_plan: {path} cannot be read ({err}); move it away to start the plan over")


def save_state(path: Path, state: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(state, indent=1))
    os.replace(tmp, path)


def run(store: Path, dry: bool, peer_python: str | None, only: list[str] | None) -> int:
    plan_dir = store / "plan"
    state_path = plan_dir / "plan.json"
    state = load_state(state_path)
    state.setdefault("steps", {})
    failed = False
    for step in steps(store, peer_python):
        if only and step.name not in only:
            continue
        record = state["steps"].setdefault(step.name, {"runs": []})
        if record.get("status") == "done":
            print(f"gpu_plan: {step.name}: done in an earlier run, skipped", flush=True)
            continue
        cmd = dry_command(step) if dry else [*JAXRL, *step.args]
        extra_env = {}
        if step.name == "profile":
            chosen = profile_command(step, store, dry)
            if chosen is None:
                record.update(status="done", note="no rung with rejax beside it to profile")
                save_state(state_path, state)
                print("gpu_plan: profile: no paired ladder rung; skipped", flush=True)
                continue
            cmd, extra_env = chosen
        log = plan_dir / "logs" / f"{step.name}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        started = time.time()
        record.update(status="running", command=cmd[3:], why=step.why)
        record["runs"].append({"started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                               "host": os.uname().nodename, "dry": dry})
        save_state(state_path, state)
        print(f"gpu_plan: {step.name}: {' '.join(cmd[3:])}", flush=True)
        with open(log, "a") as f:
            f.write(f"\n== {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} "
                    f"{' '.join(cmd[3:])}\n")
            f.flush()
            code = subprocess.call(cmd, stdout=f, stderr=subprocess.STDOUT,
                                   env={**os.environ, "JAXRL_RUNS_DIR": str(store),
                                        **extra_env})
        record["runs"][-1].update(exit=code, seconds=round(time.time() - started, 1))
        record["status"] = "done" if code == 0 else "failed"
        save_state(state_path, state)
        print(f"gpu_plan: {step.name}: exit {code} after {time.time() - started:.0f} s "
              f"(log {log})", flush=True)
        failed = failed or code != 0  # the next call retries it (it resumes); go on now
    return 1 if failed else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", default=os.environ.get("JAXRL_RUNS_DIR", "runs"))
    parser.add_argument("--dry", action="store_true", help="every step at a tiny budget")
    parser.add_argument("--peer-python", default=None,
                        help="a Python that imports rejax (its own venv or a wrapper script)")
    parser.add_argument("--only", nargs="+", default=None,
                        choices=[s.name for s in steps(Path("."), None)])
    args = parser.parse_args(argv)
    return run(Path(args.store).resolve(), args.dry, args.peer_python, args.only)


if __name__ == "__main__":
    raise SystemExit(main())

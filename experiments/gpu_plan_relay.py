"""The GPU plan's relay, end to end on this CPU: a bench entry cut by one call goes on in the next.

    python experiments/gpu_plan_relay.py [--out benchmarks/gpu-plan-dryrun/relay.json]

`gpu_plan.bench_step` runs one relayed entry (the classic suite's SAC on MountainCarContinuous,
8 seeds, at its full budget: long enough that a first call of 100 s cuts it) as a loan's calls
run it: the first call's deadline cuts it, `pack` brings its progress folder back in
benches.tgz, `adopt` commits it into a tree, and a second call, on another "machine" (a fresh
work folder and run store), resumes it from the adopted copy and finishes it. The same entry
is then run uninterrupted in a third store, and the two results' per-seed values are compared.
The record (each call's plan entry, what came back, the progress folder's bytes, both results)
goes to ``--out``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ENTRY = ("classic", "sac/MountainCarContinuous-v0", 8)


def load_plan():
    spec = importlib.util.spec_from_file_location("gpu_plan", HERE / "gpu_plan.py")
    plan = importlib.util.module_from_spec(spec)
    sys.modules["gpu_plan"] = plan
    spec.loader.exec_module(plan)
    return plan


def call(plan, base: Path, root: Path, seconds: float) -> dict:
    """One call of the plan's bench step with ``seconds`` to its deadline, then `adopt`."""
    args = argparse.Namespace(out=base / "out", work=base / "work", dry=False,
                              deadline=time.time() + seconds)
    args.out.mkdir(parents=True)
    state = {"calls": [{}]}
    started = time.time()
    plan.bench_step(args, state, root / plan.BENCHED)
    plan.pack(args, state)
    back = args.out / "benches.tgz"
    names = []
    if back.exists():
        with tarfile.open(back) as tar:
            names = tar.getnames()
    plan.adopt(argparse.Namespace(files_at=str(args.out), into=str(root)))
    return {"seconds": round(time.time() - started, 1), "benches": state["benches"],
            "came_back": [n for n in names if n.count("/") <= 1]}


def per_seed(results: Path) -> list[float]:
    report = json.loads(results.read_text())
    return next(r["per_seed"] for r in report["entries"] if r["run_id"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("benchmarks/gpu-plan-dryrun/relay.json"))
    args = parser.parse_args(argv)
    plan = load_plan()
    suite, entry, seeds = ENTRY
    plan.BENCHES = [plan.Bench(suite, entry, seeds, True, 1.0, "the relay check")]
    slug = plan.BENCHES[0].slug
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        root = tmp / "tree"
        (root / "benchmarks").mkdir(parents=True)
        first = call(plan, tmp / "machine1", root, 100)
        progress = root / plan.BENCHED / plan.PROGRESS / slug
        carried = json.loads((progress / "progress.json").read_text())
        second = call(plan, tmp / "machine2", root, 900)
        relayed = per_seed(root / plan.BENCHED / slug / "results.json")
        subprocess.run([sys.executable, "-m", "jaxrl.cli", "bench", suite, "--only", entry,
                        "--seeds", str(seeds), "--runs-dir", str(tmp / "whole"),
                        "--out", str(tmp / "whole-out"), "--no-progress"], check=True,
                       stdout=subprocess.DEVNULL)
        whole = per_seed(tmp / "whole-out" / "results.json")
        record = {"entry": entry, "seeds": seeds, "first_call": first,
                  "progress_adopted": carried, "second_call": second,
                  "progress_left_after": progress.exists(), "relayed_per_seed": relayed,
                  "uninterrupted_per_seed": whole, "equal": relayed == whole,
                  "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=1) + "\n")
    print(json.dumps({k: record[k] for k in ("equal", "relayed_per_seed")}))
    return 0 if record["equal"] and first["benches"][slug]["status"] == "relayed" else 1


if __name__ == "__main__":
    raise SystemExit(main())

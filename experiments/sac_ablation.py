"""SAC on brax hopper at one member, jaxrl beside rejax, one change at a time (issue 76, item 4).

    python experiments/sac_ablation.py OUT.jsonl [--peer-python /tmp/rejax-venv/bin/python]
        [--steps 30720] [--only NAME ...]

The throughput ladder's ``sac-brax-hopper`` rung (rejax's benchmark/hopper_1m.yaml
configuration: 128 envs, 128 gradient steps of batch 128 per 128 env steps, a 1M buffer, 10k
random steps first) at one member, each variant a fresh process, one after the other, in the
order of `VARIANTS`. Each appends one JSON line to OUT.jsonl: the variant's name, the library,
what it changes, and the point's own record (jaxrl's `jaxrl.studies.throughput.point`,
rejax's experiments/peers/rejax_point.py). A variant already in OUT.jsonl is not run again.

The variants take rejax one step toward jaxrl at a time (its replay draw, its vmap of one
member) and time both libraries at 128, 64 and 1 gradient steps per iteration (rejax also at
0; jaxrl takes at least one), so that the cost of one gradient step and the cost of the rest
of an iteration (acting, the env step, the buffer's write) are each measured, not inferred:
with the same env steps and iterations, the run seconds at 128 less those at 1, over the
127 x iterations gradient steps taken out, is the seconds of one gradient step, and the run at
1 is the rest. (Both libraries compute every iteration's gradient steps, the random fill's
too: under ``vmap`` the learning switch is a select.)
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from jaxrl.studies.throughput.ladder import checkout_commit

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


def jaxrl_point(steps: int, overrides: dict) -> dict:
    from jaxrl.studies.throughput.point import RESULT_PREFIX
    from jaxrl.studies.throughput.workloads import load_ladder

    (workload,) = [w for w in load_ladder("throughput").workloads if w.name == WORKLOAD]
    request = workload.to_dict()
    request["config"] = {**request["config"], **overrides}
    request["steps_per_member"] = steps
    code = ("import sys; from jaxrl.studies.throughput.point import main; "
            "sys.exit(main(sys.argv[1:]))")
    out = subprocess.run([sys.executable, "-c", code,
                          json.dumps({"workload": request, "members": 1})],
                         capture_output=True, text=True, check=True, cwd=ROOT).stdout
    (line,) = [x for x in out.splitlines() if x.startswith(RESULT_PREFIX)]
    return json.loads(line[len(RESULT_PREFIX):])


def rejax_point(python: str, steps: int, options: list[str]) -> dict:
    out = subprocess.run([python, str(REJAX_POINT), WORKLOAD, "1", str(steps), *options],
                         capture_output=True, text=True, check=True, cwd=ROOT).stdout
    return json.loads(out.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out")
    p.add_argument("--peer-python", default="/tmp/rejax-venv/bin/python")
    p.add_argument("--steps", type=int, default=30720)
    p.add_argument("--only", nargs="*", default=None)
    args = p.parse_args(argv)
    out = Path(args.out)
    done = ({json.loads(x)["variant"] for x in out.read_text().splitlines() if x.strip()}
            if out.exists() else set())
    for name, (lib, change, how) in VARIANTS.items():
        if name in done or (args.only and name not in args.only):
            continue
        record = (rejax_point(args.peer_python, args.steps, how) if lib == "rejax"
                  else jaxrl_point(args.steps, how))
        line = {"variant": name, "lib": lib, "change": change, **checkout_commit(),
                "point": record}
        with out.open("a") as f:
            f.write(json.dumps(line) + "\n")
        print(name, record.get("env_steps_per_second"), record.get("run_seconds"), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

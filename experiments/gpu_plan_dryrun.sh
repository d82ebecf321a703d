#!/usr/bin/env bash
# The GPU plan's dry run on this CPU (JAX_PLATFORMS=cpu): every step of experiments/gpu_plan.py
# at a tiny budget, cut off during its second step as a lease's end would cut it, carried by
# the relay (gpu_lease.sh stop, relay-out; lease_relay.py arrange; relay-in) into a fresh
# "machine" folder, and finished there. Checks that the second lease measures no ladder rung
# twice, resumes the interrupted step and runs the rest.
#
#   bash experiments/gpu_plan_dryrun.sh [REPORT_DIR]     # default benchmarks/gpu-plan-dryrun
#
# PEER_PYTHON: rejax's venv Python (default /tmp/rejax-venv/bin/python when it exists; see
# experiments/peers/README.md); without one the ladder runs jaxrl alone.
set -uo pipefail
cd "$(dirname "$0")/.."
REPORT=${1:-benchmarks/gpu-plan-dryrun}
D=${DRY_DIR:-/tmp/gpu_plan_dry}
rm -rf "$D" && mkdir -p "$D" "$REPORT"
export JAX_PLATFORMS=cpu PATH="$PWD/.venv/bin:$PATH"
PEER=${PEER_PYTHON:-/tmp/rejax-venv/bin/python}
[ -x "$PEER" ] || PEER=""
state1=$D/lease1/runs/plan/plan.json
step_status() {  # step_status FILE STEP
  python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['steps'].get(sys.argv[2], {}).get('status', '-'))" "$1" "$2" 2>/dev/null || echo -
}
say() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$REPORT/dryrun.log"; }
: > "$REPORT/dryrun.log"

say "lease 1: plan --dry (peer: ${PEER:-none})"
start=$(date +%s)
GPU_LEASE_DIR=$D/lease1 PEER_PYTHON=$PEER bash experiments/gpu_lease.sh plan --dry > /dev/null
# wait for the ladder to finish and a minatar entry to have a checkpoint, then cut it off
until [ "$(step_status "$state1" minatar)" = running ]; do sleep 5; done
say "lease 1: ladder $(step_status "$state1" ladder), minatar running"
checkpointed_running_run() {  # a run still running with a complete checkpoint step
  python3 - "$D/lease1/runs" <<'PY'
import json, pathlib, sys
for f in pathlib.Path(sys.argv[1]).glob("*/run.json"):
    steps = [p.name for p in (f.parent / "checkpoints").glob("[0-9]*")]
    if json.loads(f.read_text()).get("status") == "running" and steps:
        print(f.parent.name, "checkpoint steps", *sorted(steps, key=int))
        sys.exit(0)
sys.exit(1)
PY
}
until found=$(checkpointed_running_run); do sleep 2; done
say "lease 1: $found: cutting off"
GPU_LEASE_DIR=$D/lease1 bash experiments/gpu_lease.sh stop | tee -a "$REPORT/dryrun.log"
say "lease 1: minatar $(step_status "$state1" minatar) when cut off"
GPU_LEASE_DIR=$D/lease1 OUT=$D/out1 bash experiments/gpu_lease.sh relay-out 0 99 > /dev/null \
  || { say "relay-out failed"; exit 1; }
python3 experiments/lease_relay.py arrange "$D/out1" "$D/relay" | tee -a "$REPORT/dryrun.log"
say "relay: $(ls "$D/out1" | wc -l) files, $(du -sh "$D/out1" | cut -f1)"

say "lease 2: relay-in into a fresh folder, then the plan again"
GPU_LEASE_DIR=$D/lease2 RELAY_IN=$D/relay bash experiments/gpu_lease.sh relay-in \
  | tee -a "$REPORT/dryrun.log"
state2=$D/lease2/runs/plan/plan.json
[ -f "$state2" ] || { say "the plan's state did not travel"; exit 1; }
python3 experiments/gpu_plan.py --store "$D/lease2/runs" --dry ${PEER:+--peer-python "$PEER"} \
  2>&1 | tee -a "$REPORT/dryrun.log"
code=${PIPESTATUS[0]}
GPU_LEASE_DIR=$D/lease2 OUT=$D/out2 bash experiments/gpu_lease.sh collect > /dev/null
say "lease 2: plan exit $code; $(( $(date +%s) - start )) s in all"

# what each lease did, from the state and the ladder's results
cp "$state2" "$REPORT/plan.json"
cp "$D/lease2/runs/ladder-gpu/results.json" "$REPORT/ladder-results.json" 2>/dev/null
python3 - "$state2" "$D/lease2/runs/ladder-gpu/results.json" "$D/lease2/runs" <<'PY' | tee -a "$REPORT/dryrun.log"
import collections, json, pathlib, sys
state = json.load(open(sys.argv[1]))
for f in sorted(pathlib.Path(sys.argv[3]).glob("*/run.json")):
    m = json.loads(f.read_text())
    chunks = len(list((f.parent / "metrics").glob("*.parquet")))
    print(f"run {f.parent.name}: {m.get('status')}, {chunks} metric chunks")
runs = [json.loads(f.read_text()) for f in pathlib.Path(sys.argv[3]).glob("*/run.json")]
for name, step in state["steps"].items():
    tries = ", ".join(f"{r.get('host', '?')}: exit {r.get('exit', 'killed')}" for r in step["runs"])
    print(f"step {name}: {step['status']} ({len(step['runs'])} run(s): {tries})")
points = json.load(open(sys.argv[2]))["points"]
keys = collections.Counter((p["lib"], p["workload"], p["members"]) for p in points)
twice = [k for k, n in keys.items() if n > 1]
print(f"ladder: {len(points)} rungs recorded, measured twice: {twice or 'none'}")
ok = all(s["status"] == "done" for s in state["steps"].values()) and not twice \
    and all(r.get("status") == "finished" for r in runs) \
    and len(state["steps"]["minatar"]["runs"]) == 2 and len(state["steps"]["ladder"]["runs"]) == 1
print("dry run:", "PASSED" if ok else "FAILED")
sys.exit(0 if ok else 1)
PY

#!/usr/bin/env bash
# The GPU plan's dry run on this CPU (JAX_PLATFORMS=cpu), under a lent machine's limits: the
# calls of a loan as experiments/gpu_lease.sh makes them, each in a copy of the tree without
# .git (what travels), on a fresh "machine" folder, at tiny sizes (gpu_plan.py --dry).
#
#   1. the tree and the real wheels (.whl: Python 3.12, as the machine needs them) measured
#      against the 64 MiB a call carries, with the cache a call brings back;
#   2. `first`, killed at KILL_AT seconds as a call's limit would kill it: what it left in $OUT
#      is read back (results.json must parse and hold what was measured) and checked against
#      what comes back (<= 8 files, <= 16 MiB each, names, two folders down at most);
#   3. adopt, then `first` again on a fresh machine: it resumes from the committed results
#      (nothing measured twice), then adopt;
#   4. `second` on another fresh machine with the carried compilation cache: what the first
#      left, the cache check, the rest of the ladder (given 900 s here, SECOND_SECONDS, where a
#      loan's second call has about 3.4 minutes); adopt;
#   5. a later loan's `first` (600 s, LATER_SECONDS): every rung recorded, so the MinAtar
#      benches (2 seeds, a thousandth of their budget) and the profile; adopt;
#   6. `bench-smoke`: one bench of each suite the plan holds (MinAtar, Playground, Navix, the
#      MuJoCo cells, Craftax), at that size and with no deadline (the calls reach only the first
#      few), so that each imports and trains in the image-like Python with the carried wheels.
#
#   bash experiments/gpu_plan_dryrun.sh [REPORT_DIR]     # default benchmarks/gpu-plan-dryrun
#
# Needs: `bash experiments/gpu_lease.sh wheels` (.whl, measured), the same set for this Python
# (`WHEEL_PYTHON=3.11 GPU_WHEELS=/tmp/whl311 bash experiments/gpu_lease.sh wheels`, installed),
# and IMAGE_PYTHON (`bash experiments/image_python.sh` makes it, about 5 minutes), a Python with
# what the machine's image has and nothing of the calls' own
# (jax, flax, optax, chex, orbax-checkpoint, pandas, pyarrow, matplotlib, seaborn, scipy,
# PyYAML, tqdm, rich, tensorstore, ...; default /tmp/imgsim/bin/python): so an import the
# wheels lack fails here as it would there.
set -uo pipefail
cd "$(dirname "$0")/.."
REPORT=${1:-benchmarks/gpu-plan-dryrun}
D=${DRY_DIR:-/tmp/gpu_plan_dry}
IMAGE_PYTHON=${IMAGE_PYTHON:-/tmp/imgsim/bin/python}
WHEELS_HERE=${WHEELS_HERE:-/tmp/whl311}
KILL_AT=${KILL_AT:-100}
rm -rf "$D" && mkdir -p "$D" "$REPORT"
: > "$REPORT/dryrun.log"
say() { echo "[$(date -u +%H:%M:%S)] $*" | tee -a "$REPORT/dryrun.log"; }
check() { .venv/bin/python experiments/gpu_plan_limits.py "$@" 2>&1 | tee -a "$REPORT/dryrun.log"; }
failed=0
t0=$(date +%s)

# the tree as it travels: no .git, no ignored files, not what `gpu_lease.sh stow` keeps here
# (the CPU benches' progress folders); the commit goes along in JAXRL_COMMIT
mkdir -p "$D/tree"
home=$(bash experiments/gpu_lease.sh stay-home | paste -sd'|')
git ls-files -z -co --exclude-standard | grep -zvE "^(${home:-//})/" \
  | xargs -0 cp --parents -t "$D/tree" 2>/dev/null
rm -rf "$D/tree/benchmarks/throughput-gpu" "$D/tree/benchmarks/gpu-benches"  # a loan's results
say "1. what a call carries: the tree as it travels (after stow) and the wheels a loan carries"
check tree "$D/tree" .whl $([ -d .gpu-cache ] && echo .gpu-cache) || failed=1
cp -r "$WHEELS_HERE" "$D/tree/.whl"
commit=$(git rev-parse HEAD)
call() {  # call PHASE MACHINE OUT [KILL_AFTER]: one call of gpu_lease.sh in the tree copy
  local phase=$1 machine=$2 out=$3 kill=${4:-0} start=$SECONDS code
  mkdir -p "$out"
  # its own session (pid = process group), so a kill takes the call and every rung with it
  (cd "$D/tree" && exec env JAX_PLATFORMS=cpu GPU_DRY=1 GPU_PYTHON="$IMAGE_PYTHON" OUT="$out" \
    GPU_LEASE_DIR="$D/$machine" GPU_SITE="$D/$machine/site" JAXRL_COMMIT="$commit" \
    setsid bash experiments/gpu_lease.sh "$phase" > "$out.console" 2>&1) &
  local pid=$!
  if [ "$kill" -gt 0 ]; then
    sleep "$kill"
    kill -KILL -- "-$pid" 2>/dev/null
  fi
  wait $pid
  code=$?
  say "$phase on $machine: exit $code after $((SECONDS - start)) s$([ "$kill" -gt 0 ] && echo ", killed at $kill s")"
  return "$code"
}

say "2. first, killed at ${KILL_AT} s"
call first m1 "$D/out1" "$KILL_AT"
check out "$D/out1" --needs results.json || failed=1
.venv/bin/python experiments/gpu_plan.py adopt "$D/out1" --into "$D/tree" | tee -a "$REPORT/dryrun.log"

say "3. first again on a fresh machine: resumes from the adopted results"
call first m2 "$D/out2"
check out "$D/out2" --needs results.json plan.json || failed=1
check resumed "$D/out1/results.json" "$D/out2/results.json" || failed=1
.venv/bin/python experiments/gpu_plan.py adopt "$D/out2" --into "$D/tree" | tee -a "$REPORT/dryrun.log"

say "4. second on a fresh machine, the first call's compilation cache carried"
check tree "$D/tree" "$D/tree/.whl" "$D/tree/.gpu-cache" || failed=1
GPU_CALL_SECONDS=${SECOND_SECONDS:-900} call second m3 "$D/out3"
check out "$D/out3" --needs results.json plan.json || failed=1
check resumed "$D/out2/results.json" "$D/out3/results.json" || failed=1
.venv/bin/python experiments/gpu_plan.py adopt "$D/out3" --into "$D/tree" | tee -a "$REPORT/dryrun.log"

say "5. a later loan's first call on a fresh machine: the ladder recorded, the benches and the profile"
GPU_CALL_SECONDS=${LATER_SECONDS:-600} call first m4 "$D/out4"
check out "$D/out4" --needs results.json plan.json benches.tgz || failed=1
check resumed "$D/out3/results.json" "$D/out4/results.json" || failed=1
.venv/bin/python experiments/gpu_plan.py adopt "$D/out4" --into "$D/tree" | tee -a "$REPORT/dryrun.log"

say "6. one bench of each suite the plan holds, at the dry size, in the calls' Python and path"
call bench-smoke m5 "$D/out5" || failed=1
cp "$D/out5/bench-smoke.json" "$REPORT/bench-smoke.json" 2>/dev/null || failed=1

cp "$D/tree/benchmarks/throughput-gpu/results.json" "$REPORT/ladder-results.json"
cp "$D/tree/benchmarks/throughput-gpu/plan.json" "$REPORT/plan.json"
check summary "$D/tree/benchmarks/throughput-gpu" || failed=1
say "dry run: $([ $failed = 0 ] && echo PASSED || echo FAILED), $(( $(date +%s) - t0 )) s in all"
exit $failed

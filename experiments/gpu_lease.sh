#!/usr/bin/env bash
# A lent GPU machine's half hour, in steps (the machine has no package registry, starts bare
# and keeps nothing; its image has JAX with CUDA, flax, optax, chex, pandas, pyarrow, but not
# gymnax, brax, MuJoCo, ale-py or duckdb).
#
# THE PLAN, first whenever a GPU machine is lent (experiments/gpu_plan.py, steps in order of
# value per GPU minute; each call picks up where the last lease left off):
#   bash experiments/gpu_lease.sh setup && bash experiments/gpu_lease.sh peer-setup
#   bash experiments/gpu_lease.sh plan            # detached; then `wait 540` calls
#   ... 5 minutes before the lease ends: `collect`, then `stop` and `relay-out` (below);
#   the next lease: `setup`, `peer-setup`, `relay-in` per carried folder, `plan` again.
# Dry run of all of it on the CPU, relay included: bash experiments/gpu_plan_dryrun.sh
#
# Here, once (needs PyPI):
#   bash experiments/gpu_lease.sh wheels          # the missing Python 3.12 wheels into .whl/
#                                                 # (ignored by git; carry it with the call)
# There, in one call each (jaxrl runs from the checkout on PYTHONPATH with the image's JAX):
#   bash experiments/gpu_lease.sh setup           # install .whl/, print the versions
#   bash experiments/gpu_lease.sh atari-floor     # the raw ale-py floor, the adapter and PPO's
#                                                 # rollout (GPU and CPU), a short PPO Pong run
#   bash experiments/gpu_lease.sh backend-check   # the same Atari games with JAX on the GPU as
#                                                 # on the CPU (ale-py's GPU FFI targets), exact
#   bash experiments/gpu_lease.sh threads         # per-core emulator speed, then 48 envs with
#                                                 # ale-py's default thread count and with
#                                                 # jaxrl's (one per usable core), in turn
#                                                 # (experiments/atari_threads.py host, ~90 s)
#   bash experiments/gpu_lease.sh smoke [GAME]    # A2C, TRPO, DQN and ACER's presets at 6 seeds,
#                                                 # a few updates each: compile, env-steps/s,
#                                                 # and that the replay entries fit
#   bash experiments/gpu_lease.sh bench SUITE SCALE PATTERN...
#                                                 # one detached `jaxrl bench` per pattern, side
#                                                 # by side (e.g. atari 0.25 ppo/atari:Pong
#                                                 # ppo/atari:Breakout); keep the machine warm
#                                                 # with further calls while they run:
#   bash experiments/gpu_lease.sh wait SECONDS    # sleep, then each run's chunks so far
# An entry longer than a lease (CKPT=1 before `bench` checkpoints every chunk) goes on in the
# next lease from its store, carried in parts (experiments/lease_relay.py):
#   bash experiments/gpu_lease.sh stop            # end the benches (their newest checkpoint
#                                                 # is what the next lease resumes from)
#   bash experiments/gpu_lease.sh relay-out FIRST COUNT
#                                                 # pack the store once; parts FIRST.. into
#                                                 # $OUT (4 parts of 15 MiB a call at most)
# here: copy the parts that came back into one folder, then
#   python experiments/lease_relay.py arrange PARTS .relay   # .relay/in1, in2, ... a call each
# and in the next lease, after `setup`, one call per folder (carry [".relay/inK"]):
#   bash experiments/gpu_lease.sh relay-in        # gather the carried parts; with all of
#                                                 # them, unpack the store for `bench`
#   bash experiments/gpu_lease.sh collect         # logs and reports in reports.tgz, every run's
#                                                 # metrics in metrics.parquet, into $OUT (a
#                                                 # store's many small files and its checkpoints
#                                                 # would not come back)
# rejax 0.1.3 as it ships, beside jaxrl (experiments/peers/README.md):
#   bash experiments/gpu_lease.sh peer-wheels     # here: its pinned wheels into .whl-rejax/
#                                                 # (ignored by git; carry it with the call)
#   bash experiments/gpu_lease.sh peer-setup      # there: install them into /tmp/site-rejax
# then one point a call (on the image's JAX, not rejax's pinned 0.10.2):
#   PYTHONPATH=/tmp/site-rejax python3 experiments/peers/rejax_point.py WORKLOAD MEMBERS STEPS
# Work files live in /tmp/gpu_lease, which a later call on the same warm machine finds again
# (the machine goes back 30 s after a call ends: make the next call at once).
# benchmarks/atari-gpu/NOTES.md tells how the first lease went.
set -uo pipefail
W=${GPU_LEASE_DIR:-/tmp/gpu_lease}
mkdir -p "$W"
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 JAXRL_RUNS_DIR=$W/runs
OUT=${OUT:-$W/out}
mkdir -p "$OUT"

# What the image lacks, at the versions of requirements/lock-py311.txt (MuJoCo's studio, the
# viewer, is left out: 13 MB that the 64 MB a call may carry cannot spare).
WHEELS="ale-py gymnasium farama-notifications duckdb gymnax brax mujoco mujoco-core mujoco-mjx
glfw pyopengl trimesh jaxopt ml-collections tensorboardx flask flask-cors blinker itsdangerous"

case "${1:-}" in
wheels)
  mkdir -p .whl
  grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo /.whl/ >> .git/info/exclude
  for name in $WHEELS; do
    pin=$(grep -i "^${name}==" requirements/lock-py311.txt || echo "$name")
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
      --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
      --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl "$pin" \
      || echo "no wheel for $pin" >&2
  done
  du -sh .whl
  ;;
setup)
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  # ale-py's own thread count is min(envs, std::thread::hardware_concurrency()), the online
  # processors, which a container may not own; jaxrl's Atari pools use envs.atari.usable_cores()
  python3 -c "import os, pathlib; from envs.atari import usable_cores, _cgroup_cpu_quota as q; print('online processors', os.cpu_count(), 'affinity', len(os.sched_getaffinity(0)), 'cgroup quota', q(pathlib.Path('/sys/fs/cgroup')), 'usable', usable_cores())"
  python3 -c "import jax, flax, optax, chex, pandas, numpy, ale_py; print('jax', jax.__version__, jax.devices(), 'flax', flax.__version__, 'optax', optax.__version__, 'chex', chex.__version__, 'pandas', pandas.__version__, 'numpy', numpy.__version__, 'ale_py', ale_py.__version__)"
  for m in gymnax brax.envs mujoco.mjx duckdb; do  # each family's imports, one line each
    python3 -c "import $m" 2>&1 | tail -n 1 | sed "s/^/$m: /"
  done
  ;;
peer-wheels)
  # rejax's pinned environment (experiments/peers/requirements-rejax.txt) as Python 3.12
  # manylinux wheels, less what the image brings or a run never imports (about 160 MiB in all,
  # 58 MiB without these). A call carries 64 MiB: .whl-rejax/ goes in its own call (peer-setup),
  # not beside .whl/ (48 MiB; setup), and both installs stay while the machine is warm.
  # - jax, jaxlib: the image has its own, with CUDA, at 0.11.x (not rejax's 0.10.2); and JAX's
  #   own dependencies, installed with it and loaded by its jaxlib, which a copy on PYTHONPATH
  #   would shadow: numpy, ml-dtypes, scipy (35 MB), opt-einsum
  # - pandas (12 MB): the image has it (seaborn, which gymnax imports, imports it)
  # - tensorstore (22 MB), uvloop (4.5 MB): flax's and orbax's checkpointing, never imported by
  #   a training run (the image's flax brings its own)
  # - mujoco-studio (13 MB), pyopengl (3 MB): MuJoCo's viewer and rendering, not imported
  #   (jaxrl's `wheels` leaves the viewer out too)
  # Everything else at rejax's pins, flax, optax and chex included.
  skip=" jax jaxlib numpy ml-dtypes scipy opt-einsum pandas tensorstore uvloop mujoco-studio pyopengl "
  mkdir -p .whl-rejax
  missing=0
  while read -r pin; do
    name=$(echo "${pin%%==*}" | tr 'A-Z_' 'a-z-')
    case "$skip" in *" $name "*) continue ;; esac
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
      --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
      --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 -d .whl-rejax "$pin" \
      || { echo "no wheel for $pin" >&2; missing=1; }
  done < <(sed -e 's/#.*//' -e 's/[[:space:]]//g' experiments/peers/requirements-rejax.txt | grep .)
  ls .whl-rejax | wc -l
  du -sh .whl-rejax
  exit $missing
  ;;
peer-setup)
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site-rejax .whl-rejax/*.whl || exit 1
  PYTHONPATH=/tmp/site-rejax python3 - <<'PY' 2>&1 | grep -v "^Failed to import"
from importlib.metadata import version
import jax, rejax, gymnax, brax  # noqa: F401
print("rejax", version("rejax"), "gymnax", version("gymnax"), "brax", version("brax"),
      "flax", version("flax"), "optax", version("optax"), "numpy", version("numpy"))
print("jax", jax.__version__, "(the image's)", jax.devices())
PY
  ;;
atari-floor)
  # the first lease: 8.5k env-steps/s at 48 emulators on 16 cores, 1.8x the 2-core machine's
  # 16; whether ale-py's default thread count is what holds the pool back
  for n in 8 48 96; do for th in 0 16; do
    python3 experiments/atari_floor.py --envs $n --steps 128 --game Breakout --threads $th | tail -1 | tee -a "$OUT/floor.jsonl"
  done; done
  JAX_PLATFORMS=cpu python3 experiments/atari_floor.py --envs 48 --steps 128 --game Breakout | tail -1 | tee -a "$OUT/floor.jsonl"
  python3 -m jaxrl.cli train ppo --env atari:Pong --seeds 6 --total-steps 49152 --no-store \
    --no-progress --eval-episodes 1 --json "$OUT/ppo_pong_smoke.json" 2>&1 | tail -5
  ;;
backend-check)
  python3 experiments/atari_backend_check.py --members 6 --envs 8 --steps 1000 2>&1 \
    | grep -v '^\[XLA FFI\]' | tail -n 3 | tee "$OUT/backend_check.json"
  ;;
smoke)
  # the other Atari presets at 6 seeds on the GPU, a few updates each: compile time, env-steps/s
  # and that the replay entries fit (their replay starts moved early so replay runs; not a
  # learning run). About 6 minutes in all.
  game=${2:-Breakout}
  for spec in "a2c 48000" "trpo 49152" "dqn 40000 --set learning_starts=8000" \
              "acer 48000 --set replay_start=120"; do
    set -- $spec
    algo=$1 steps=$2
    shift 2
    python3 -m jaxrl.cli train "$algo" --env "atari:$game" --seeds 6 --total-steps "$steps" \
      "$@" --no-store --no-progress --eval-episodes 1 --json "$OUT/smoke_$algo.json" 2>&1 \
      | grep -v '^\[XLA FFI\]' | tail -n 3
    python3 -c "import json, sys; r = json.load(open(sys.argv[1])); print(sys.argv[2], 'compile', round(r['compile_seconds'], 1), 's,', round(r['env_steps_per_second']), 'env-steps/s,', r['devices'])" "$OUT/smoke_$algo.json" "$algo" || true
  done
  ;;
threads)
  # about 90 s: the processor facts (online, affinity, cgroup quota, model, how busy the whole
  # host is), one emulator on one thread and one per usable core (the per-core speed, nothing
  # oversubscribed), then 48 emulators with ale-py's default thread count and with jaxrl's
  # (one per usable core), A B A B, ale-py's pool alone and jaxrl's adapter with JAX on the GPU
  python3 experiments/atari_threads.py host --envs 48 --pairs 2 --seconds 2 \
    --out "$OUT/threads.json" 2>&1 | grep -v '^\[XLA FFI\]'
  ;;
plan)
  # THE GPU PLAN (experiments/gpu_plan.py), run first whenever a GPU machine is lent: the
  # throughput ladder with rejax beside it, then minatar, reading 002's MuJoCo table, Spinning
  # Up's 3M table, Atari last; detached, one step at a time, each resuming where the last
  # lease stopped (the store and the ladder's results.json travel by relay-out / relay-in).
  # `plan --dry` runs every step at a tiny budget (the CPU dry run).
  shift
  peer=${PEER_PYTHON:-}
  if [ -z "$peer" ] && [ -d /tmp/site-rejax ]; then  # rejax's own wheels (peer-setup), alone
    peer=$W/rejax-python
    printf '#!/bin/sh\nPYTHONPATH=/tmp/site-rejax exec python3 "$@"\n' > "$peer"
    chmod +x "$peer"
  fi
  setsid nohup python3 experiments/gpu_plan.py --store "$W/runs" ${peer:+--peer-python "$peer"} \
    "$@" > "$W/plan.log" 2>&1 < /dev/null &
  echo $! > "$W/plan.pid"
  sleep 5
  tail -n 5 "$W/plan.log"
  ;;
bench)
  suite=$2 scale=$3
  shift 3
  share=$(python3 -c "print(round(0.8 / $#, 2))")  # of the GPU's memory, per process
  for pattern in "$@"; do
    name=$(echo "$pattern" | tr -c 'A-Za-z0-9_\n' '_')
    XLA_PYTHON_CLIENT_MEM_FRACTION=$share setsid nohup python3 -m jaxrl.cli bench "$suite" \
      --only "$pattern" --budget-scale "$scale" --out "$W/bench_$name" --no-progress \
      ${CKPT:+--checkpoint-every "$CKPT"} \
      > "$W/bench_$name.log" 2>&1 < /dev/null &
  done
  sleep 5
  for f in "$W"/bench_*.log; do echo "== $f"; tail -n 3 "$f"; done
  ;;
wait)
  # keep the machine warm while the benches run: sleep, then each run's chunks so far
  sleep "${2:-540}"
  for d in "$W"/runs/*/metrics; do echo "$(ls "$d" | wc -l) chunks  $(basename "$(dirname "$d")")"; done
  for f in "$W"/bench_*.log; do [ -f "$f" ] && { echo "== $f"; tail -n 2 "$f"; }; done
  [ -f "$W/plan.log" ] && { echo "== plan"; tail -n 4 "$W/plan.log"; }
  for f in "$W"/runs/plan/logs/*.log; do [ -f "$f" ] && { echo "== $f"; tail -n 2 "$f"; }; done
  ;;
stop)
  # SIGKILL, as a lease's end would: the runs store marks them interrupted when packed; the
  # plan's state says which step was running, and the next plan resumes it
  pkill -KILL -f "gpu_plan.py"
  pkill -KILL -f "jaxrl.cli (bench|ladder)"
  pkill -KILL -f "jaxrl.throughput.point|rejax_point.py"
  sleep 2
  pgrep -fa "jaxrl.cli (bench|ladder)|gpu_plan.py" || echo "nothing running"
  ;;
relay-out)
  first=${2:-0} count=${3:-4}
  if [ ! -f "$W/relay/relay.json" ]; then
    python3 experiments/lease_relay.py pack "$W/runs" "$W/relay" || exit 1
  fi
  cp "$W/relay/relay.json" "$OUT/"
  for ((i = first; i < first + count; i++)); do
    f=$(printf "%s/relay/relay-%03d.part" "$W" "$i")
    [ -f "$f" ] && cp "$f" "$OUT/"
  done
  ls -la "$OUT"
  ;;
relay-in)
  mkdir -p "$W/relay_in"
  for f in "${RELAY_IN:-.relay}"/in*/*; do [ -f "$f" ] && cp "$f" "$W/relay_in/"; done
  python3 experiments/lease_relay.py unpack "$W/relay_in" "$W/runs" --if-complete
  ;;
collect)
  # two files, whatever the number of benches: a call brings back at most 8
  for f in "$W"/bench_*.log; do [ -f "$f" ] && { echo "== $f"; tail -n 5 "$f"; }; done
  # the plan's reports: the ladder's folder as it is, the rest (bench reports, plan state and
  # logs) in the tar
  [ -d "$W/runs/ladder-gpu" ] && mkdir -p "$OUT/throughput-gpu" \
    && cp "$W"/runs/ladder-gpu/* "$OUT/throughput-gpu/"
  (cd "$W" && tar czf "$OUT/reports.tgz" --ignore-failed-read $(ls -d bench_* runs/ladder-gpu \
    runs/reports runs/plan plan.log 2>/dev/null))
  python3 - "$W/runs" "$OUT/metrics.parquet" <<'PY'
import glob, sys
import pandas as pd
files = sorted(glob.glob(f"{sys.argv[1]}/*/metrics/*.parquet"))
if files:
    pd.concat([pd.read_parquet(f) for f in files], ignore_index=True).to_parquet(sys.argv[2])
print(len(files), "metric chunks")
PY
  ls -la "$OUT"
  ;;
*)
  echo "usage: $0 plan [--dry]|wheels|setup|peer-wheels|peer-setup|atari-floor|backend-check|threads|smoke [GAME]|bench SUITE SCALE PATTERN...|wait SECONDS|stop|relay-out FIRST COUNT|relay-in|collect" >&2
  exit 2 ;;
esac

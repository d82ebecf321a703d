#!/usr/bin/env bash
# A lent GPU machine, sized to what a loan gives now: 15 minutes of device time in all (the
# machine's start, every call's transfer of the tree, idle waits and the give-back count), one
# call at most 10 minutes, no machine started with under 4 minutes left. A loan is two calls,
# each walking one order of value (experiments/gpu_plan.py) until its deadline and skipping
# what earlier calls and loans measured:
#
#   bash experiments/gpu_lease.sh first    # 7.5 min on the machine, install included: the
#                                          # headline (jaxrl and rejax at the anchors' counts)
#   bash experiments/gpu_lease.sh second   # what the loan has left (GPU_CALL_SECONDS)
#
# Here, once (needs PyPI): `bash experiments/gpu_lease.sh wheels` puts what the calls import and
# the image lacks into .whl/ (ignored by git): 40.4 MiB on 2026-11-29, 13.3 of it Playground's
# (.whl/suites), which `wheels` leaves in .whl-held/ when the tree and the wheels would pass the
# 64 MiB a call carries (on 2026-11-29 the tree was 33.9 MB, the committed bench progress
# folders most of it: the first call carried 28.0 MB of wheels without Playground's).
# Before the first call: `bash experiments/gpu_lease.sh stow` moves the CPU benches' run folders
# (105 MiB of the committed tree on 2026-12-06, 16.8 MiB without them) to ../stowed-progress,
# out of the tree that travels (before any CPU bench starts: a bench resumes from them and
# writes its progress there); after the loan, `bash experiments/gpu_lease.sh unstow` before
# anything is committed or a bench is started.
# Each call, from this checkout (the tree travels without .git, so the commit goes along):
#   run(command="JAXRL_COMMIT=<git rev-parse HEAD> bash experiments/gpu_lease.sh first",
#       carry=[".whl"], timeout_s=540)
#   here:  python experiments/gpu_plan.py adopt <files_at> (may wait until after the second call:
#     the second starts from what the first left on the machine, experiments/gpu_plan.py LAST_CALL)
#     (into benchmarks/throughput-gpu/ and benchmarks/gpu-benches/; the cache into .gpu-cache/)
#   run(command="JAXRL_COMMIT=... GPU_CALL_SECONDS=<status's budget_left_s - 150> \
#       bash experiments/gpu_lease.sh second", carry=[".whl", ".gpu-cache"])
#   then give the machine back, unstow, and commit what `adopt` wrote.
# What a call carries must stay under 64 MiB: `du -sb .whl .gpu-cache` first, and leave
# .gpu-cache out of the second call's carry when the sum would pass the limit (only the cache
# check needs it, and a warm machine still holds the first call's cache).
#
# THE ARITHMETIC (measured on the first loan, one H200, 2026-11-28: benchmarks/throughput-gpu/
# NOTES.md; each pair is one process per library: start and imports ~8-12 s, compile, run; the
# PPO workloads with a peer at PPO_GPU_SCALE = 16 times the CPU ladder's budget):
#   machine start, tree and wheels in (50 MiB)                                      ~0.6 min
#   first, deadline 7.5 min on the machine:
#     install of .whl into three folders                                             0.1 min
#     PPO CartPole-v1 at 2,048 (1.07G env steps each at 45M/s, compile 10-12 s)     1.5 min
#     PPO Breakout-MinAtar at 256 (134M env steps each at 16M/s, compile 13-14 s)   1.0 min
#     PPO brax hopper at 256 (67M env steps each at 5-6M/s, compile 23-40 s)        1.8 min
#     (SAC brax hopper at 256 is measured: jaxrl 63 s, rejax 202 s in all)
#     PPO CartPole at 1 member (524k env steps each at 94k/s)                        0.7 min
#     then as the second call, as far as it goes
#   second, at once (the machine stays warm 30 s after a call: no second start)
#     the loan's rest less 2.5 min: what the first left, the cache check (0.3 min), the
#     profile of the rung where jaxrl trails most (jaxrl's run, then rejax's: ~2-3 min), then
#     results at the references' budgets (gpu_plan.BENCHES, each with its expected minutes and
#     their basis: MinAtar at 10M and 5M, 16 seeds, about 3 min an entry; Playground's DM
#     Control at 60M, 8 seeds, about 7.5; Navix's IQN; Spinning Up's off-policy cells, about 26
#     min each, only where a call has that long; Craftax), each relayed from call to call
#     through its progress folder (benches.tgz back, adopt commits it, the next call resumes
#     it), then the rest of the ladder (the 1-member rungs of MinAtar, hopper and SAC, PQN,
#     DQN, Playground, Craftax)
#   The first loan's two calls took 7.2 and 4.4 min, 12.4 min of the 15 held with the starts.
#   The third loan (2026-11-30): first 509 s on the machine (the headline recorded, so the
#   profile of PPO hopper, the timeline, rejax's SAC with jaxrl's draw), then a fresh start for
#   second (151 s): 766 s held of 900. Its benches all failed at import (duckdb, Optuna; fixed,
#   tests/test_dependencies.py). Carry: the committed bench-progress folders (36.8 MB) left
#   out of the tree for the calls (deleted there, restored with git checkout after), so the
#   tree was 14.5 MB and .whl with Playground's 41.3 MB. The next first call: the timeline's
#   second try (~1-2 min), jaxrl's SAC as shipped, patched and profiled (sac_cost_step, ~3
#   min), PPO hopper at 256 three times more at the new commit, jaxrl then rejax (repeat_step,
#   ~5.4 min at the first loan's 1.8 min a pair), then the benches; the other PPO rungs' three
#   runs after the benches.

# The Atari single measurements (each its own call; ale-py's wheels: `wheels atari`):
#   bash experiments/gpu_lease.sh atari-floor     # the raw ale-py floor, the adapter and PPO's
#                                                 # rollout (GPU and CPU), a short PPO Pong run
#   bash experiments/gpu_lease.sh backend-check   # the same Atari games with JAX on the GPU as
#                                                 # on the CPU (ale-py's GPU FFI targets), exact
#   bash experiments/gpu_lease.sh threads         # per-core emulator speed, ale-py's thread
#                                                 # count against jaxrl's (~90 s)
#   bash experiments/gpu_lease.sh smoke [GAME]    # A2C, TRPO, DQN and ACER's presets at 6 seeds
# Dry run of `first` then `second` on the CPU, limits checked: bash experiments/gpu_plan_dryrun.sh
set -uo pipefail
cd "$(dirname "$0")/.."
W=${GPU_LEASE_DIR:-/tmp/gpu_lease}
WHL=${GPU_WHEELS:-.whl}
SITE=${GPU_SITE:-/tmp/site}
PY=${GPU_PYTHON:-python3}
mkdir -p "$W"
OUT=${OUT:-$W/out}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 JAXRL_RUNS_DIR=$W/runs

# What a ladder and a MinAtar bench import that the image lacks, in three folders: `shared`
# (both libraries: brax, MuJoCo and their imports), `jaxrl` (gymnax 1.0.1) and `rejax` (rejax
# 0.1.3 and its own gymnax 0.0.9, distrax, TensorFlow Probability); `jaxrl` also holds
# MuJoCo Playground (8 MiB) for the CheetahRun workload and Craftax for its benches. duckdb (24 MiB: the run
# store's queries), ale-py and PyOpenGL (6 MiB: Atari) stay out; `wheels atari` fetches those.
# Both libraries run on the image's JAX, flax, optax and chex (versions in plan.json).
SHARED="brax mujoco mujoco-core mujoco-mjx jaxopt ml-collections tensorboardx trimesh flask
flask-cors blinker itsdangerous gymnasium farama-notifications glfw"
JAXRL_ONLY="gymnax craftax navix rlax dm-env"  # navix also needs distrax (rejax's folder, put
                                               # last) and wandb (a stand-in: experiments/gpu_stubs)
SUITES="playground lxml mediapy"  # Playground (13 MiB, no warp-lang: impl='jax'): carried only
                                  # where the tree leaves room (`wheels` says)
REJAX_ONLY="rejax gymnax distrax tfp-nightly dm-tree decorator gast"
# jaxrl's path in a call: its folders first, then the tree; rejax's folder and the stand-ins
# last, for what only Navix imports
JAXRL_PATH=$SITE-jaxrl:$SITE-suites:$SITE-shared:$PWD:$SITE-rejax:$PWD/experiments/gpu_stubs
ATARI="ale-py pyopengl duckdb"

STOW=${GPU_STOW:-../stowed-progress}
stay_home() {  # the CPU benches' run folders (progress, superseded runs): they stay here
  find benchmarks -mindepth 2 -maxdepth 2 -type d \( -name 'progress*' -o -name superseded \) \
    -not -path 'benchmarks/gpu-benches/*' | sort       # (`stow`); the GPU benches' travel
}

pin_of() {  # pin_of NAME LOCKFILE...: NAME==VERSION from the first file that pins it
  local name=$1 f
  shift
  for f in "$@"; do
    grep -i -m1 -E "^${name//-/[-_]}==" "$f" 2>/dev/null | sed 's/[[:space:]].*//' && return
  done
  echo "$name"
}

download() {  # download FOLDER LOCKFILES NAMES...
  local dir=$1 locks=$2 name pin
  shift 2
  mkdir -p "$dir"
  for name in "$@"; do
    pin=$(pin_of "$name" $locks)
    python3 -m pip download -q --no-deps --only-binary=:all: \
      --python-version "${WHEEL_PYTHON:-3.12}" --implementation cp \
      --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 \
      --platform manylinux_2_24_x86_64 --platform manylinux_2_17_x86_64 \
      --platform manylinux2014_x86_64 --platform manylinux1_x86_64 -d "$dir" "$pin" \
      || { echo "no wheel for $pin" >&2; return 1; }
  done
}

install() {  # install PART: .whl/PART/*.whl into $SITE-PART, once per machine
  local part=$1
  [ -f "$SITE-$part/.installed" ] && return 0
  compgen -G "$WHL/$part/*.whl" > /dev/null || { echo "gpu_lease: no wheels in $WHL/$part (carry $WHL)" >&2; return 1; }
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target "$SITE-$part" "$WHL"/$part/*.whl && touch "$SITE-$part/.installed"
}

setup() {  # the three folders, the rejax Python, and what the machine is, in plan.json
  local t0=$SECONDS
  install shared && install jaxrl && install rejax || return 1
  if compgen -G "$WHL/suites/*.whl" > /dev/null; then install suites || return 1; fi
  # rejax's Python: its own folder first, its compiled programs cached apart from jaxrl's
  printf '#!/bin/sh\nPYTHONPATH=%s-rejax:%s-shared JAX_COMPILATION_CACHE_DIR=%s exec %s "$@"\n' \
    "$SITE" "$SITE" "$W/xla-cache/rejax" "$(command -v "$PY")" > "$W/rejax-python"
  chmod +x "$W/rejax-python"
  export PYTHONPATH=$JAXRL_PATH
  "$PY" experiments/gpu_plan.py setup --out "$OUT" --peer-python "$W/rejax-python" \
    --install-seconds $((SECONDS - t0))
}

case "${1:-}" in
wheels)
  # here: WHEEL_PYTHON=3.11 GPU_WHEELS=DIR fetches the same set for this machine (the dry run)
  lock=requirements/lock-py311.txt rejax=experiments/peers/requirements-rejax.txt
  grep -qx "/$WHL/" .git/info/exclude 2>/dev/null || echo "/$WHL/" >> .git/info/exclude
  if [ "${2:-}" = atari ]; then
    download "$WHL/atari" "$lock" $ATARI || exit 1
  else
    download "$WHL/shared" "$lock $rejax" $SHARED && download "$WHL/jaxrl" "$lock" $JAXRL_ONLY \
      && download "$WHL/rejax" "$rejax $lock" $REJAX_ONLY && download "$WHL/suites" "$lock" $SUITES \
      || exit 1
  fi
  du -sh "$WHL"/*
  # what a call carries: the tree (tracked and untracked, not ignored, less what `stow` keeps
  # here) and the wheels, under 64 MiB; Playground's wheels stay here (.whl-held/) when they
  # would pass it
  home=$(stay_home | paste -sd'|')
  tree=$(git ls-files -z -co --exclude-standard | grep -zvE "^(${home:-//})/" \
    | du -cb --files0-from=- | tail -1 | cut -f1)
  carried=$(( tree + $(du -sb "$WHL" | cut -f1) ))
  if [ -d "$WHL/suites" ] && [ "$carried" -gt $(( 64 << 20 )) ]; then
    grep -qx "/.whl-held/" .git/info/exclude 2>/dev/null || echo "/.whl-held/" >> .git/info/exclude
    rm -rf .whl-held/suites && mkdir -p .whl-held && mv "$WHL/suites" .whl-held/
    echo "gpu_lease: tree $((tree >> 20)) MiB + wheels pass 64 MiB: Playground's left in .whl-held/suites"
  fi
  ;;
first|second)
  # the call's deadline: GPU_CALL_SECONDS (default 450 and 200) from now, install included
  budget=${GPU_CALL_SECONDS:-$([ "$1" = first ] && echo 450 || echo 200)}
  deadline=$(( $(date +%s) + budget ))
  setup || { echo "gpu_lease: setup failed" >&2; exit 1; }
  if [ -d .gpu-cache/xla-cache ] && [ ! -d "$W/xla-cache" ]; then  # a fresh machine: the
    cp -r .gpu-cache/xla-cache "$W/xla-cache" && export GPU_CACHE_CARRIED=1  # first call's cache
  fi
  export PYTHONPATH=$JAXRL_PATH JAXRL_COMPILE_CACHE=1 \
    JAXRL_CACHE_DIR=$W/xla-cache/jaxrl
  "$PY" experiments/gpu_plan.py "$1" --out "$OUT" --work "$W" --deadline "$deadline" \
    --peer-python "$W/rejax-python" ${GPU_DRY:+--dry} 2>&1 | tee -a "$OUT/plan.log"
  ;;
atari-floor)
  export PYTHONPATH=$SITE-atari:$SITE-jaxrl:$SITE-shared:$PWD
  install shared && install jaxrl && install atari || exit 1
  for n in 8 48 96; do for th in 0 16; do
    "$PY" experiments/atari_floor.py --envs $n --steps 128 --game Breakout --threads $th | tail -1 | tee -a "$OUT/floor.jsonl"
  done; done
  JAX_PLATFORMS=cpu "$PY" experiments/atari_floor.py --envs 48 --steps 128 --game Breakout | tail -1 | tee -a "$OUT/floor.jsonl"
  "$PY" -m jaxrl.cli train ppo --env atari:Pong --seeds 6 --total-steps 49152 --no-store \
    --no-progress --eval-episodes 1 --json "$OUT/ppo_pong_smoke.json" 2>&1 | tail -5
  ;;
backend-check)
  export PYTHONPATH=$SITE-atari:$SITE-jaxrl:$SITE-shared:$PWD
  install shared && install jaxrl && install atari || exit 1
  "$PY" experiments/atari_backend_check.py --members 6 --envs 8 --steps 1000 2>&1 \
    | grep -v '^\[XLA FFI\]' | tail -n 3 | tee "$OUT/backend_check.json"
  ;;
smoke)
  # the other Atari presets at 6 seeds, a few updates each: compile time, env-steps/s and that
  # the replay entries fit (not a learning run). About 6 minutes in all.
  export PYTHONPATH=$SITE-atari:$SITE-jaxrl:$SITE-shared:$PWD
  install shared && install jaxrl && install atari || exit 1
  game=${2:-Breakout}
  for spec in "a2c 48000" "trpo 49152" "dqn 40000 --set learning_starts=8000" \
              "acer 48000 --set replay_start=120"; do
    set -- $spec
    algo=$1 steps=$2
    shift 2
    "$PY" -m jaxrl.cli train "$algo" --env "atari:$game" --seeds 6 --total-steps "$steps" \
      "$@" --no-store --no-progress --eval-episodes 1 --json "$OUT/smoke_$algo.json" 2>&1 \
      | grep -v '^\[XLA FFI\]' | tail -n 3
  done
  ;;
threads)
  export PYTHONPATH=$SITE-atari:$SITE-jaxrl:$SITE-shared:$PWD
  install shared && install jaxrl && install atari || exit 1
  "$PY" experiments/atari_threads.py host --envs 48 --pairs 2 --seconds 2 \
    --out "$OUT/threads.json" 2>&1 | grep -v '^\[XLA FFI\]'
  ;;
bench-smoke)
  # the dry run's last step, not a loan's: one bench of each suite the plan holds, at the dry
  # size and with no deadline, in the calls' Python and path (they all import and train there)
  setup || { echo "gpu_lease: setup failed" >&2; exit 1; }
  export PYTHONPATH=$JAXRL_PATH
  "$PY" experiments/gpu_plan.py bench-smoke --out "$OUT" --work "$W" 2>&1 | tee -a "$OUT/plan.log"
  ;;
stay-home)
  stay_home ;;
stow)
  # here, before a loan's first call: the CPU benches' progress folders (tracked or not) move
  # to $STOW, outside the repository, so the tree that travels stays under 64 MiB
  stay_home | while read -r d; do
    mkdir -p "$STOW/$(dirname "$d")" && mv "$d" "$STOW/$d" && echo "stowed $d"
  done
  ;;
unstow)
  # here, after the loan (before committing anything else): every stowed folder back home
  [ -d "$STOW" ] || { echo "gpu_lease: nothing stowed in $STOW"; exit 0; }
  (cd "$STOW" && find . -mindepth 3 -maxdepth 3 -type d) \
    | sed 's|^\./||' | while read -r d; do
      if [ -e "$d" ]; then echo "gpu_lease: $d exists here; left in $STOW/$d" >&2
      else mkdir -p "$(dirname "$d")" && mv "$STOW/$d" "$d" && echo "home $d"; fi
    done
  find "$STOW" -type d -empty -delete 2>/dev/null
  ;;
*)
  echo "usage: $0 first|second|wheels [atari]|stow|unstow|stay-home|bench-smoke|atari-floor|" \
    "backend-check|smoke [GAME]|threads" >&2
  exit 2 ;;
esac

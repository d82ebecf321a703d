#!/usr/bin/env bash
# The Atari figures on a GPU machine (issue 19), in the steps a lent machine's lease allows.
#
#   bash experiments/gpu_atari.sh setup     # install the wheels in .whl/ beside the image's JAX
#   bash experiments/gpu_atari.sh measure   # the raw ale-py floor, the adapter and PPO's rollout
#                                           # (GPU and CPU), and a short PPO Pong run's rate
#   bash experiments/gpu_atari.sh launch S  # the atari suite's PPO Pong and Breakout entries at
#                                           # budget scale S, two processes side by side, detached
#   bash experiments/gpu_atari.sh collect   # logs, reports and the run store into $OUT
#
# The machine has no registry: `.whl/` holds the wheels its image lacks (ale-py, gymnasium,
# duckdb, gymnax for Python 3.12), and jaxrl runs from this checkout on PYTHONPATH with the
# image's JAX (CUDA). Work files live in /tmp/gpu_atari, which a later call on the same
# (warm) machine finds again.
set -uo pipefail
W=/tmp/gpu_atari
mkdir -p "$W"
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 JAXRL_RUNS_DIR=$W/runs
OUT=${OUT:-$W/out}
mkdir -p "$OUT"

case "${1:-}" in
setup)
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv
  nproc
  python3 -c "import jax, flax, optax, chex, pandas, numpy, ale_py; print('jax', jax.__version__, jax.devices(), 'flax', flax.__version__, 'optax', optax.__version__, 'chex', chex.__version__, 'pandas', pandas.__version__, 'numpy', numpy.__version__, 'ale_py', ale_py.__version__)"
  ;;
measure)
  for n in 8 48; do
    python3 experiments/atari_floor.py --envs $n --steps 128 --game Breakout | tail -1 | tee -a "$OUT/floor.jsonl"
  done
  JAX_PLATFORMS=cpu python3 experiments/atari_floor.py --envs 48 --steps 128 --game Breakout | tail -1 | tee -a "$OUT/floor.jsonl"
  python3 -m jaxrl.cli train ppo --env atari:Pong --seeds 6 --total-steps 49152 --no-store \
    --no-progress --eval-episodes 1 --json "$OUT/ppo_pong_smoke.json" 2>&1 | tail -5
  python3 -c "import json; r=json.load(open('$OUT/ppo_pong_smoke.json')); print({k: r[k] for k in ('compile_seconds','run_seconds','env_steps_per_second','devices')})"
  ;;
launch)
  scale=$2
  for game in Pong Breakout; do
    XLA_PYTHON_CLIENT_MEM_FRACTION=0.4 setsid nohup python3 -m jaxrl.cli bench atari \
      --only "ppo/atari:$game" --budget-scale "$scale" --out "$W/bench_$game" --no-progress \
      > "$W/bench_$game.log" 2>&1 < /dev/null &
  done
  sleep 5; tail -3 "$W"/bench_*.log
  ;;
collect)
  tail -20 "$W"/bench_*.log
  for game in Pong Breakout; do cp "$W/bench_$game.log" "$OUT/" 2>/dev/null; done
  tar czf "$OUT/gpu_atari_results.tgz" -C "$W" runs $(cd "$W" && ls -d bench_*/ 2>/dev/null)
  ls -la "$OUT"
  ;;
*)
  echo "usage: $0 setup|measure|launch SCALE|collect" >&2; exit 2 ;;
esac

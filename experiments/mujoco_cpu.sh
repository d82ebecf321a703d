#!/usr/bin/env bash
# benchmarks/mujoco-cpu on this 2-core CPU, one session after another: reading 002's MuJoCo
# table at 8 seeds and 1M env steps, entry by entry in order of value, from a run store that
# outlives the session (each entry checkpoints every chunk and resumes from its newest
# checkpoint; an entry already finished in the store is not run again).
#
#   nohup bash experiments/mujoco_cpu.sh STORE OUT [ENTRY ...] > STORE.log 2>&1 &
#
# With ENTRY arguments (e.g. trpo-baselines/brax:reacher) only those run, in the order given.
#
# After each entry the report of every entry finished so far is rendered into OUT (copy it
# to benchmarks/mujoco-cpu). Measured costs here (benchmarks/mujoco-cpu/NOTES.md): a pendulum
# entry 13-25 min in either configuration; a contact body 1.4-2.5 h (968 env-steps/s over 8
# seeds for hopper in baselines' configuration with another bench beside it; 1,585 for
# halfcheetah in jaxrl's defaults).
set -uo pipefail
cd "$(dirname "$0")/.."
STORE=${1:?usage: mujoco_cpu.sh STORE OUT}
OUT=${2:?usage: mujoco_cpu.sh STORE OUT}
JAXRL=${JAXRL:-.venv/bin/jaxrl}

# In order: the pendulums in both configurations (cheap), the issue's minimum (PPO on the four
# contact bodies in baselines' configuration), TRPO's in baselines' configuration, then the
# contact bodies in jaxrl's brax defaults.
ENTRIES=()
for algo in ppo trpo; do
  for cfg in "$algo" "$algo-baselines"; do
    for body in inverted_pendulum inverted_double_pendulum; do ENTRIES+=("$cfg/brax:$body"); done
  done
done
for algo in ppo-baselines trpo-baselines ppo trpo; do
  for body in hopper walker2d halfcheetah reacher; do ENTRIES+=("$algo/brax:$body"); done
done
shift 2
if (( $# )); then ENTRIES=("$@"); fi

done_so_far=()
for entry in "${ENTRIES[@]}"; do
  done_so_far+=(--only "$entry")
  echo "$(date -u +%T) $entry"
  "$JAXRL" bench mujoco "${done_so_far[@]}" --runs-dir "$STORE" --checkpoint-every 1 \
    --out "$OUT" --no-progress || { echo "$(date -u +%T) $entry failed: stopping"; exit 1; }
done
echo "$(date -u +%T) all ${#ENTRIES[@]} entries finished"

#!/usr/bin/env bash
# Spinning Up's twelve on-policy cells (VPG, TRPO and PPO at 3M env steps on brax's hopper,
# walker2d, halfcheetah and ant, 8 seeds, jaxrl's brax defaults) on this CPU, one bench call a
# cell, in order, carried across sessions in benchmarks/mujoco-cpu/progress-spinningup: a cell
# already finished there is skipped, and one interrupted resumes from its newest checkpoint.
#
#   nohup bash experiments/spinningup_cells.sh [CELL ...] > /tmp/spinningup.log 2>&1 &
#
# CELL is an entry name such as 'vpg-3M/brax:hopper' (default: all twelve, PPO hopper first).
# CODE=PATH runs the package of another checkout (a `git worktree add --detach PATH`), so that
# editing this one while the cells run does not change the code of the cells still to come.
# Commit the progress folder now and then (`git add -A benchmarks/mujoco-cpu/progress-spinningup`):
# an unfinished cell's checkpoint is about 14 MB.
set -uo pipefail
cd "$(dirname "$0")/.."
JAXRL=${JAXRL:-.venv/bin/jaxrl}
CELLS=("$@")
if (( ${#CELLS[@]} == 0 )); then
  for body in hopper walker2d halfcheetah ant; do
    for algo in ppo vpg trpo; do CELLS+=("$algo-3M/brax:$body"); done
  done
fi
for cell in "${CELLS[@]}"; do
  echo "$(date -u +%FT%T) start $cell"
  PYTHONPATH=${CODE:-} nice -n 10 "$JAXRL" bench mujoco --only "$cell" --checkpoint-every 1 \
    --resume-from benchmarks/mujoco-cpu/progress-spinningup --no-progress \
    || { echo "$(date -u +%FT%T) $cell failed: stopping"; exit 1; }
  echo "$(date -u +%FT%T) end $cell"
done

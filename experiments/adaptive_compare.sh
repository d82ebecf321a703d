#!/usr/bin/env bash
# Two real comparisons decided by AdaStop (`jaxrl compare --adaptive`), seeds added in batches
# of 5 until decided or 4 batches (20 seeds a side):
#   1. PPO against A2C on Acrobot-v1, jaxrl's defaults, 500k env steps (the classic suite's budget);
#   2. DQN on CartPole-v1 in jaxrl's defaults against CleanRL's configuration (preset
#      dqn/cleanrl-classic), 500k env steps.
# Usage: experiments/adaptive_compare.sh STORE OUT   (writes OUT/*.json and OUT/*.log)
set -euo pipefail
store=${1:?store folder}; out=${2:?output folder}
mkdir -p "$store" "$out"
jaxrl=${JAXRL:-jaxrl}
first() {  # train one side's first batch, print its run id
  "$jaxrl" train "$@" --seeds 5 --runs-dir "$store" --no-progress --json "$store/last.json" > /dev/null
  python -c "import json; print(json.load(open('$store/last.json'))['run_id'])"
}
a=$(first ppo --env Acrobot-v1 --total-steps 500000)
b=$(first a2c --env Acrobot-v1 --total-steps 500000)
"$jaxrl" compare "$a" "$b" --adaptive --runs-dir "$store" --json "$out/ppo-vs-a2c-acrobot.json" \
  | tee "$out/ppo-vs-a2c-acrobot.log"
a=$(first dqn --env CartPole-v1 --total-steps 500000)
b=$(first dqn --env CartPole-v1 --total-steps 500000 --config dqn/cleanrl-classic)
"$jaxrl" compare "$a" "$b" --adaptive --runs-dir "$store" --json "$out/dqn-defaults-vs-cleanrl-cartpole.json" \
  | tee "$out/dqn-defaults-vs-cleanrl-cartpole.log"

#!/bin/bash
# Ablation timings (no profiler): per workload the full program and its learner cut to one
# step, each a fresh process, in turn, two rounds; then each env's path alone, two rounds.
cd /work/main
O=${1:-/tmp/ablate}; mkdir -p $O
export JAXRL_CPU_DEVICES=1

ablate() {  # OUT WORKLOAD STEPS CUT-NAME CUT-CONFIG
  .venv/bin/python experiments/ab_variants.py $O/$1 --workload $2 --members 1 --rounds 2 \
    --variant "full={\"steps_per_member\": $3}" \
    --variant "$4={\"steps_per_member\": $3, \"config\": $5}"
}
PPO_CUT='{"update_epochs": 1, "num_minibatches": 1}'
ablate ppo-cartpole ppo-cartpole 524288 '1 epoch x 1 minibatch' "$PPO_CUT"
ablate ppo-minatar ppo-breakout-minatar 524288 '1 epoch x 1 minibatch' "$PPO_CUT"
ablate ppo-hopper ppo-brax-hopper 262144 '1 epoch x 1 minibatch' "$PPO_CUT"
ablate dqn-cartpole dqn-cartpole 80000 '1 gradient step per round' '{"gradient_steps": 1}'
ablate pqn-minatar pqn-breakout-minatar 196608 '1 epoch x 1 minibatch' "$PPO_CUT"
ablate sac-hopper sac-brax-hopper 30720 '1 gradient step per round' '{"gradient_steps": 1}'
E=".venv/bin/python experiments/env_path_rate.py"
for r in 1 2; do
  $E CartPole-v1 '{}' 131072 1 4
  $E Breakout-MinAtar '{}' 16384 1 32
  $E brax:hopper '{"backend": "positional"}' 8192 1 32
  $E CartPole-v1 '{}' 8000 1 10
  $E Breakout-MinAtar '{}' 1536 1 128
  $E brax:hopper '{"backend": "positional"}' 240 1 128
done

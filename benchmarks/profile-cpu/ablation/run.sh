#!/bin/bash
# Ablation timings (no profiler), each library-free variant a fresh process, in turn.
cd /work/main
O=${1:-/tmp/ablate}; mkdir -p $O
export JAXRL_CPU_DEVICES=1
AB=".venv/bin/python experiments/ab_variants.py"
$AB $O/ppo-cartpole --workload ppo-cartpole --members 1 --rounds 2 \
  --variant 'full={"steps_per_member": 524288}' \
  --variant '1 epoch x 1 minibatch={"steps_per_member": 524288, "config": {"update_epochs": 1, "num_minibatches": 1}}'
$AB $O/ppo-minatar --workload ppo-breakout-minatar --members 1 --rounds 2 \
  --variant 'full={"steps_per_member": 524288}' \
  --variant '1 epoch x 1 minibatch={"steps_per_member": 524288, "config": {"update_epochs": 1, "num_minibatches": 1}}'
$AB $O/ppo-hopper --workload ppo-brax-hopper --members 1 --rounds 2 \
  --variant 'full={"steps_per_member": 262144}' \
  --variant '1 epoch x 1 minibatch={"steps_per_member": 262144, "config": {"update_epochs": 1, "num_minibatches": 1}}'
$AB $O/dqn-cartpole --workload dqn-cartpole --members 1 --rounds 2 \
  --variant 'full={"steps_per_member": 80000}' \
  --variant '1 gradient step per round={"steps_per_member": 80000, "config": {"gradient_steps": 1}}'
$AB $O/pqn-minatar --workload pqn-breakout-minatar --members 1 --rounds 2 \
  --variant 'full={"steps_per_member": 196608}' \
  --variant '1 epoch x 1 minibatch={"steps_per_member": 196608, "config": {"update_epochs": 1, "num_minibatches": 1}}'
$AB $O/sac-hopper --workload sac-brax-hopper --members 1 --rounds 2 \
  --variant 'full={"steps_per_member": 30720}' \
  --variant '1 gradient step per round={"steps_per_member": 30720, "config": {"gradient_steps": 1}}'
E=".venv/bin/python experiments/env_path_rate.py"
for r in 1 2; do
$E CartPole-v1 '{}' 131072 1 4
$E Breakout-MinAtar '{}' 16384 1 32
$E brax:hopper '{"backend": "positional"}' 8192 1 32
$E CartPole-v1 '{}' 8000 1 10
$E Breakout-MinAtar '{}' 1536 1 128
$E brax:hopper '{"backend": "positional"}' 240 1 128
done

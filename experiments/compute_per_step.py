"""Arithmetic per env step of value-based and PPO workloads, and what this machine's matmuls reach.

Why PQN's env-steps/s is or is not several times DQN's is a question of arithmetic: a program
bound by its multiply-adds runs at (machine FLOP/s) / (FLOPs per env step). This script states
both sides:

* FLOPs of one forward pass of each workload's network on one observation, from XLA's cost
  analysis of the jitted ``apply`` (a program with no loops, so the count is exact), times the
  forward-equivalents one env step pays:
    - PQN: 1 to act + (K + 1) for the Q(lambda) targets + (K + 1) * 3 * update_epochs to train
      (a backward pass counted as two forwards; K = replay_rollouts);
    - DQN, C51, QR-DQN: 1 to act + gradient_steps / num_envs updates of batch_size samples,
      each 3 (online forward and backward) + 1 (target) + 1 if double_q (online at s');
    - PPO: 1 to act + 3 * update_epochs to train (every sample is in one minibatch per epoch;
      the forward counts the policy and the value networks both);
* the FLOP/s of jitted float32 matmuls of the networks' widths, on this machine, now
  (rows x inner @ inner x width; Craftax's first layers among them).

    python experiments/compute_per_step.py --out benchmarks/throughput-cpu/compute.json

Writes one JSON file (and prints a table). Workloads: the throughput ladder's PQN and DQN
CartPole configurations, the PQN and C51 MinAtar presets, and PPO on Craftax's two symbolic
envs in jaxrl's craftax defaults (Craftax_Baselines' 3x512 networks).
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import yaml

import envs
from jaxrl.algos import ALGORITHMS, onpolicy
from jaxrl.parts.torsos import resolve_torso

LADDER = Path(__file__).resolve().parent / "ladders" / "throughput.yaml"


def ladder_config(name: str) -> tuple[str, str, dict]:
    for w in yaml.safe_load(LADDER.read_text())["workloads"]:
        if w["name"] == name:
            return w["algo"], w["env"], w.get("config") or {}
    raise SystemExit(f"no workload {name!r} in {LADDER}")


WORKLOADS = {
    "pqn-cartpole (ladder)": ladder_config("pqn-cartpole"),
    "dqn-cartpole (ladder, rejax's config)": ladder_config("dqn-cartpole"),
    "pqn Breakout-MinAtar (preset)": ("pqn", "gymnax:Breakout-MinAtar", {}),
    "c51 Breakout-MinAtar (preset)": ("c51", "gymnax:Breakout-MinAtar", {}),
    "dqn Breakout-MinAtar (preset)": ("dqn", "gymnax:Breakout-MinAtar", {}),
    "ppo Craftax-Symbolic (craftax defaults)": ("ppo", "craftax:Craftax-Symbolic-v1", {}),
    "ppo Craftax-Classic-Symbolic (craftax defaults)":
        ("ppo", "craftax:Craftax-Classic-Symbolic-v1", {}),
}
#: Matmul shapes timed (rows, inner, width): the small nets' widths, and a Craftax minibatch
#: (512 samples) through the first layer of each symbolic env (8,268 and 1,345 inputs) and 512x512.
MATMULS = ((128, 64, 64), (1024, 64, 64), (128, 256, 256), (1024, 256, 256),
           (512, 8268, 512), (512, 1345, 512), (512, 512, 512))


def forward_flops(algo: str, env_name: str, overrides: dict) -> tuple[float, object]:
    """FLOPs of one forward pass on one observation, and the resolved config."""
    module = ALGORITHMS[algo]
    env, params = envs.make(env_name)
    config = module.default_config(env_name).replace(**overrides)
    obs_shape = env.observation_space(params).shape
    config = config.replace(torso=resolve_torso(config.torso, obs_shape))
    if algo == "ppo":
        network = onpolicy.make_network(config.static(), env, params)
    else:
        network = __import__(f"jaxrl.algos.{algo}", fromlist=["make_network"]).make_network(
            config.static(), env.action_space(params))
    batch = 256
    obs = jnp.zeros((batch, int(jnp.prod(jnp.asarray(obs_shape)))))
    variables = network.init(jax.random.key(0), obs[:1])
    cost = jax.jit(network.apply).lower(variables, obs).compile().cost_analysis()
    cost = cost[0] if isinstance(cost, list) else cost
    return float(cost["flops"]) / batch, config


def forwards_per_env_step(algo: str, config) -> float:
    if algo == "pqn":
        k = getattr(config, "replay_rollouts", 0) + 1
        return 1 + k + k * 3 * config.update_epochs
    if algo == "ppo":
        return 1 + 3 * config.update_epochs
    per_update = 3 + 1 + (1 if config.double_q else 0)
    return 1 + config.gradient_steps / config.num_envs * config.batch_size * per_update


def matmul_rate(rows: int, inner: int, width: int, seconds: float = 2.0) -> float:
    a, b = jnp.ones((rows, inner)), jnp.ones((inner, width))
    f = jax.jit(lambda a, b: (a @ b).sum())
    f(a, b).block_until_ready()
    n, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        r = f(a, b)
        n += 1
    r.block_until_ready()
    return 2 * rows * inner * width * n / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    rows = []
    for label, (algo, env_name, overrides) in WORKLOADS.items():
        flops, config = forward_flops(algo, env_name, overrides)
        passes = forwards_per_env_step(algo, config)
        rows.append({"workload": label, "algo": algo, "env": env_name,
                     "forward_flops_per_obs": flops, "forwards_per_env_step": passes,
                     "flops_per_env_step": flops * passes})
        print(f"{label:40s} {flops / 1e3:9.1f} kFLOP/forward x {passes:6.1f} = "
              f"{flops * passes / 1e6:7.2f} MFLOP per env step")
    rates = {f"{r}x{k}x{w}": matmul_rate(r, k, w) for r, k, w in MATMULS}
    for k, v in rates.items():
        print(f"matmul {k}: {v / 1e9:.1f} GFLOP/s")
    out = {"written": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "machine": f"{platform.machine()}, {len(jax.devices())} x {jax.devices()[0].platform}",
           "jax": jax.__version__, "workloads": rows, "matmul_flops_per_second": rates}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()

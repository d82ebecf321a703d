"""How fast a trained policy acts, and that it plays gymnasium's own envs: PPO on CartPole-v1 and
Pendulum-v1 (jaxrl's defaults, 64x64 MLPs, observation normalization), trained briefly here,
then per call (median of rounds of calls, one seed): `TrainResult.act` and `StoredPolicy.act`
on one observation and on a batch of 64, and the exported program (`export_policy`, run as a
serving process would: `load_exported(...).call`, checksum checked). Each exported policy then plays
gymnasium's own env (the same deterministic policy, gymnasium's physics and time limit) for a
few episodes, beside the return it scored in jaxrl's final evaluation.

    python experiments/act_latency.py benchmarks/serving-cpu
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

import gymnasium
import jax
import numpy as np

import jaxrl
from jaxrl.trained.serving import load_exported

TASKS = {"CartPole-v1": 100_000, "Pendulum-v1": 300_000}
ROUNDS, CALLS = 5, 200


def per_call_ms(fn) -> float:
    """The median over `ROUNDS` of the mean time of `CALLS` calls, the result on the host."""
    np.asarray(fn())
    rounds = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for _ in range(CALLS):
            np.asarray(fn())
        rounds.append((time.perf_counter() - start) / CALLS * 1e3)
    return float(np.median(rounds))


def play(serve, env_name: str, episodes: int = 5) -> dict:
    """The exported policy (``serve``: observations ``[1, *obs_shape]`` -> actions) in
    gymnasium's env: the return of each episode, and steps/s."""
    env = gymnasium.make(env_name)
    returns, steps, start = [], 0, time.perf_counter()
    for episode in range(episodes):
        obs, _ = env.reset(seed=episode)
        total, done = 0.0, False
        while not done:
            action = np.asarray(serve(np.asarray(obs, np.float32)[None]))[0]
            if env_name == "CartPole-v1":
                action = int(action)
            obs, reward, terminated, truncated, _ = env.step(action)
            total, steps, done = total + float(reward), steps + 1, terminated or truncated
        returns.append(total)
    return {"episodes": episodes, "returns": returns, "mean_return": float(np.mean(returns)),
            "steps_per_second": steps / (time.perf_counter() - start)}


def main(out: str) -> None:
    runs = tempfile.mkdtemp(prefix="act-latency-")
    rows = []
    for env_name, steps in TASKS.items():
        result = jaxrl.train("ppo", env_name, seeds=2, total_steps=steps, progress=False,
                             runs_dir=runs)
        space = result.policy().env.observation_space(result.policy().env_params)
        one = np.zeros(space.shape, np.float32)
        batch = np.zeros((64, *space.shape), np.float32)
        stored = jaxrl.load_policy(result.run_id, runs_dir=runs)
        path = result.export_policy(Path(runs) / f"{env_name}.jaxpolicy", seed=0)
        serve = load_exported(path)  # checks the file's SHA-256, then deserializes
        served = jax.jit(serve.call)  # as a serving loop would call it: one dispatch
        rows.append({
            "env": env_name, "total_steps": steps, "hidden": list(result.config.hidden),
            "jaxrl_final_eval_return": [float(v) for v in result.final_eval_return],
            "ms_per_call": {
                "TrainResult.act, one obs": per_call_ms(lambda: result.act(one, seed=0)),
                "TrainResult.act, batch 64": per_call_ms(lambda: result.act(batch, seed=0)),
                "StoredPolicy.act, one obs": per_call_ms(lambda: stored.act(one, seed=0)),
                "exported, Exported.call, one obs": per_call_ms(lambda: serve.call(one[None])),
                "exported, jax.jit(Exported.call), one obs": per_call_ms(
                    lambda: served(one[None])),
                "exported, jax.jit(Exported.call), batch 64": per_call_ms(lambda: served(batch)),
            },
            "gymnasium": play(served, env_name),
            "export_bytes": path.stat().st_size,
        })
        print(json.dumps(rows[-1], indent=1), flush=True)
    target = Path(out)
    target.mkdir(parents=True, exist_ok=True)
    (target / "results.json").write_text(json.dumps({
        "command": "python experiments/act_latency.py " + out, "jax": jax.__version__,
        "gymnasium": gymnasium.__version__, "devices": str(jax.devices()),
        "load_average_at_end": os.getloadavg(), "rounds": ROUNDS, "calls": CALLS,
        "rows": rows}, indent=1))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "benchmarks/serving-cpu")

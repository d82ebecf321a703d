"""Train a Stable-Baselines3 value learner as RL Baselines3 Zoo runs it, several seeds, and
evaluate each.

    python experiments/peers/sb3_zoo.py ALGO ENV --seeds N [--steps S] [--eval-episodes K] \
        [--out FILE.jsonl] [--hyperparams FILE.yaml]

ALGO is ``dqn`` (``stable_baselines3.DQN``) or ``qrdqn`` (``sb3_contrib.QRDQN``). The
hyperparameters are the zoo's section ALGO / ENV in ``sb3_zoo.yaml`` beside this file (the
zoo's own field names, passed to the algorithm's class as the zoo's ``train.py`` does): one
env, ``MlpPolicy``, the zoo's ``n_timesteps`` unless ``--steps`` sets another budget. Each seed trains in turn on one torch thread, then its greedy policy
(``deterministic=True``) plays ``--eval-episodes`` episodes on a fresh env; the mean return
of those is the seed's ``final_eval``, the measure of jaxrl's ``final_eval`` entries.

Prints one JSON line per seed (appended to ``--out`` too): ``seed``, ``final_eval``,
``train_seconds``, ``steps``, ``n_updates``, ``env``, ``hyperparams``, the versions and the
host; then a summary line (``"summary": true``) with the per-seed values, their mean and the
number of seeds whose greedy policy never reached the goal (on a task paying -1 a step, as
Acrobot: a return of ``-max_episode_steps`` on every evaluation episode; never on CartPole).

Needs its own venv (``requirements-sb3.txt``: SB3 and sb3-contrib); see README.md beside it.
"""

import argparse
import copy
import datetime
import json
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def load_section(path: Path, algo: str, env_id: str) -> dict:
    import yaml

    sections = yaml.safe_load(path.read_text()).get(algo, {})
    if env_id not in sections:
        raise SystemExit(f"sb3_zoo: no section {algo}/{env_id} in {path} "
                         f"(it has for {algo}: {', '.join(sections) or 'none'})")
    return dict(sections[env_id])


def algo_class(algo: str):
    if algo == "dqn":
        from stable_baselines3 import DQN
        return DQN
    from sb3_contrib import QRDQN
    return QRDQN


def algo_kwargs(section: dict) -> dict:
    """The zoo's section as the algorithm's keyword arguments (a ``policy_kwargs`` given as a
    mapping here; the zoo writes it as a Python expression string)."""
    kwargs = {k: v for k, v in section.items() if k not in ("n_timesteps", "policy")}
    return copy.deepcopy(kwargs)  # the library adds classes to policy_kwargs in place


def run_seed(algo: str, env_id: str, section: dict, seed: int, steps: int, episodes: int) -> dict:
    import gymnasium as gym
    import torch
    from stable_baselines3.common.evaluation import evaluate_policy
    from stable_baselines3.common.monitor import Monitor

    torch.set_num_threads(1)
    model = algo_class(algo)(section.get("policy", "MlpPolicy"), gym.make(env_id), seed=seed,
                             verbose=0, **algo_kwargs(section))
    start = time.perf_counter()
    model.learn(total_timesteps=steps)
    train_seconds = time.perf_counter() - start
    eval_env = Monitor(gym.make(env_id))
    eval_env.reset(seed=10_000 + seed)
    returns, _ = evaluate_policy(model, eval_env, n_eval_episodes=episodes, deterministic=True,
                                 return_episode_rewards=True)
    limit = eval_env.spec.max_episode_steps
    return {"seed": seed, "final_eval": float(sum(returns) / len(returns)),
            "eval_returns": [float(r) for r in returns],
            "never_reached_goal": bool(limit is not None and all(r <= -limit for r in returns)),
            "train_seconds": round(train_seconds, 1), "steps": int(model.num_timesteps),
            "n_updates": int(model._n_updates)}


def environment() -> dict:
    import gymnasium
    import sb3_contrib
    import stable_baselines3
    import torch

    return {"sb3": stable_baselines3.__version__, "sb3_contrib": sb3_contrib.__version__,
            "torch": torch.__version__,
            "gymnasium": gymnasium.__version__, "python": platform.python_version(),
            "host": platform.node(), "utc": datetime.datetime.now(datetime.UTC).isoformat()}


def emit(record: dict, out: Path | None) -> None:
    line = json.dumps(record)
    print(line, flush=True)
    if out is not None:
        with out.open("a") as f:
            f.write(line + "\n")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("algo", choices=("dqn", "qrdqn"))
    parser.add_argument("env")
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--steps", type=int, help="env steps per seed (default: the zoo's)")
    parser.add_argument("--eval-episodes", type=int, default=32)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--hyperparams", type=Path, default=HERE / "sb3_zoo.yaml")
    args = parser.parse_args(argv)
    section = load_section(args.hyperparams, args.algo, args.env)
    steps = args.steps or int(float(section["n_timesteps"]))
    common = {"lib": "stable-baselines3", "algo": args.algo, "env": args.env, "hyperparams": section,
              **environment()}
    values, failed = [], 0
    for seed in range(args.seeds):
        result = run_seed(args.algo, args.env, section, seed, steps, args.eval_episodes)
        values.append(result["final_eval"])
        failed += result["never_reached_goal"]
        emit({**common, **result}, args.out)
    emit({**common, "summary": True, "steps": steps, "final_eval_per_seed": values,
          "final_eval_mean": sum(values) / len(values), "seeds_never_reaching_goal": failed},
         args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

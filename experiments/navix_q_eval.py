"""Why do jaxrl's DQN and PQN score (nearly) 0 on Navix's LavaGapS6 where Navix's table has 0.37
and 0.96? The table evaluates rejax's Q-learners epsilon-greedily at 0.005; the navix suite
evaluates the greedy policy. A greedy policy that loops (turning in place, walking into a wall)
never ends an episode, where one random action in two hundred breaks the loop.

    .venv/bin/python experiments/navix_q_eval.py [--algo pqn] [--env navix:Navix-LavaGapS6-v0]
        [--seeds 8] [--episodes 20] [--epsilons 0 0.005 0.05] [--out FILE] [--walls-passable]
        [--total-steps N] [--set KEY=VALUE ...] [--tag NAME]
    .venv/bin/python experiments/navix_q_eval.py --amend KEY [--out FILE]

Trains the navix suite's entry (its config, 8 seeds, the full 1,048,576 steps), then evaluates
each seed's final parameters at each epsilon (``episodes`` episodes, the env's 100-step limit:
an episode that does not reach the goal in time returns 0) and records, per seed and epsilon,
the mean return; beside them the mean return of the last training episodes (epsilon at its
final value) and the suite's own measure. The JSON (default
benchmarks/navix-cpu/q_eval_epsilon.json) is merged with what is there, keyed by algo and env
(``@walls_passable`` and ``@TAG`` appended when given).

``--total-steps`` cuts the run short; ``--set`` overrides an entry of the config (each
given as YAML, e.g. ``--set eps_decay_fraction=0.4`` keeps the full run's exploration schedule
in env steps when ``--total-steps`` is a quarter of it). The record holds the config as run,
and per seed how often training episodes reached the goal once epsilon was at its final value
(`goal_reached_after_decay`); ``--amend KEY`` adds those counts to a record written without
them, from its run's metrics in the run store.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import yaml

import jaxrl
from jaxrl.algos import acting
from jaxrl.engine.spec import resolve_group, single_spec
from jaxrl.parts.evaluate import evaluate
from jaxrl.studies.bench.suite import load_suite


def epsilon_greedy(policy: acting.Policy, epsilon: float, actions: int) -> acting.Policy:
    """``policy``'s greedy action, a uniform one with probability ``epsilon``."""

    def step(state, memory, obs, key, deterministic=True):
        memory, greedy = policy.step(state, memory, obs, key, True)
        coin, pick = jax.random.split(key)
        uniform = jax.random.randint(pick, greedy.shape, 0, actions)
        return memory, jnp.where(jax.random.uniform(coin, greedy.shape) < epsilon, uniform,
                                 greedy).astype(greedy.dtype)

    return acting.Policy(policy.initial, step, policy.mode, policy.value)


def _overrides(pairs: list[str], config: dict) -> dict:
    """``KEY=VALUE`` pairs as a dict, each value read as YAML; a key the entry's config lacks
    is an error naming it."""
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or key not in config:
            raise SystemExit(f"--set {pair!r}: want KEY=VALUE with KEY one of {sorted(config)}")
        out[key] = yaml.safe_load(value)
    return out


def goal_reached_after_decay(metrics, decay_steps: float, seeds: int) -> dict:
    """Per seed, of the logged intervals (``metrics``: a run's rows, one per seed and update)
    from the step epsilon reached its final value (``decay_steps`` env steps a seed) on: how
    many had a training episode reach the goal (a return above 0), and the shortest such
    episode (its length, None where none did)."""
    late = metrics[metrics["env_steps"] >= decay_steps]
    won = late[late["episode_return_max"] > 0]
    return {"from_env_steps": round(decay_steps),
            "intervals_per_seed": [int((late["seed"] == s).sum()) for s in range(seeds)],
            "intervals_reaching_goal_per_seed": [int((won["seed"] == s).sum())
                                                 for s in range(seeds)],
            "shortest_goal_episode_per_seed": [
                None if (won["seed"] == s).sum() == 0
                else int(won.loc[won["seed"] == s, "episode_length_min"].min())
                for s in range(seeds)]}


def amend(out: Path, key: str) -> int:
    """Add `goal_reached_after_decay` to the record ``key`` of ``out`` from its run's metrics in
    the run store (a record written before the script recorded it)."""
    from jaxrl.runs.query import load_metrics

    data = json.loads(out.read_text())
    if key not in data:
        raise SystemExit(f"--amend {key!r}: no such record in {out}; records: {sorted(data)}")
    record = data[key]
    config = record["config"]
    decay = config["eps_decay_fraction"] * record["total_steps"]
    record["training_goal_after_decay"] = goal_reached_after_decay(
        load_metrics(record["run_id"]), decay, record["seeds"])
    out.write_text(json.dumps(data, indent=1) + "\n")
    print(json.dumps(record["training_goal_after_decay"]))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--algo", default="pqn")
    parser.add_argument("--env", default="navix:Navix-LavaGapS6-v0")
    parser.add_argument("--seeds", type=int, default=8)
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.0, 0.005, 0.05])
    parser.add_argument("--total-steps", type=int, default=None)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/navix-cpu/q_eval_epsilon.json"))
    parser.add_argument("--walls-passable", action="store_true",
                        help="Navix <= 0.6.16's wall bug put back (navix_doorkey_study.py's patch)")
    parser.add_argument("--set", dest="overrides", nargs="+", default=[], metavar="KEY=VALUE",
                        help="override a config entry of the suite's entry (value read as YAML)")
    parser.add_argument("--tag", default=None, help="appended to the record's key as @TAG")
    parser.add_argument("--amend", default=None, metavar="KEY",
                        help="train nothing: add the goal-reaching counts to record KEY of --out "
                             "from its run's metrics in the run store")
    args = parser.parse_args(argv)
    if args.amend is not None:
        return amend(args.out, args.amend)
    if args.walls_passable:
        import importlib.util

        path = Path(__file__).with_name("navix_doorkey_study.py")
        spec = importlib.util.spec_from_file_location("navix_doorkey_study", path)
        study = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(study)
        study.patch_walls_passable()
    entry = next(e for e in load_suite("navix").entries
                 if e.algo == args.algo and e.env == args.env)
    steps = args.total_steps or entry.total_steps
    config = {**entry.config, **_overrides(args.overrides, entry.config)}
    started = time.time()
    result = jaxrl.train(args.algo, env=args.env, seeds=args.seeds, total_steps=steps,
                         progress=False, eval_episodes=entry.eval_episodes, **config)
    train_seconds = time.time() - started
    r = resolve_group(single_spec(args.algo, args.env, args.seeds, steps, **config))
    policy = r.algorithm.policy(r.config.static(), r.env, r.env_params)
    actions = int(r.env.action_space(r.env_params).n)
    horizon = int(getattr(r.env_params, "max_steps", 0) or 100) + 1
    # the whole state onto one device first: slicing a member out of a state sharded over the
    # CPU devices runs a cross-device program per leaf (and twice ended in XLA's rendezvous
    # timeout here); on one device a slice is a plain one
    device = jax.devices()[0]
    whole = jax.tree.map(lambda x: jax.device_put(x, device), result.state)
    per_epsilon = {}
    for eps in args.epsilons:
        run = jax.jit(lambda state, key, eps=eps: evaluate(
            state, key, epsilon_greedy(policy, eps, actions), r.env, r.env_params,
            args.episodes, horizon, True))
        values = []
        for seed in range(args.seeds):
            state = jax.tree.map(lambda x, s=seed: x[s], whole)
            returns = np.asarray(run(state, jax.random.PRNGKey(1000 + seed)))
            values.append(float(np.nan_to_num(returns, nan=0.0).mean()))
        per_epsilon[str(eps)] = values
    last = result.metrics.sort_values("update").groupby("seed").tail(5)
    record = {"algo": args.algo, "env": args.env, "seeds": args.seeds, "total_steps": steps,
              "episodes": args.episodes, "config": config,
              "suite_measure_final_eval_per_seed": [float(x) for x in result.final_eval_return],
              "mean_return_by_eval_epsilon_per_seed": per_epsilon,
              "training_return_last_updates_per_seed": [
                  float(x) for x in last.groupby("seed")["episode_return_mean"].mean()],
              "training_goal_after_decay": goal_reached_after_decay(
                  result.metrics, config["eps_decay_fraction"] * steps, args.seeds),
              "train_seconds": round(train_seconds, 1), "run_id": result.run_id,
              "date": time.strftime("%Y-%m-%d"), "jax": jax.__version__}
    data = json.loads(args.out.read_text()) if args.out.is_file() else {}
    record["walls_passable"] = args.walls_passable
    record["overrides"] = sorted(args.overrides)
    key = f"{args.algo}/{args.env}" + ("@walls_passable" if args.walls_passable else "")
    data[key + (f"@{args.tag}" if args.tag else "")] = record
    args.out.write_text(json.dumps(data, indent=1) + "\n")
    print(json.dumps({k: record[k] for k in ("mean_return_by_eval_epsilon_per_seed",
                                             "training_return_last_updates_per_seed")}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

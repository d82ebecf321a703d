"""Why does jaxrl's PPO score 0 on Navix-DoorKey-8x8 where rejax's PPO (Navix's baseline table)
reaches 0.96? One-factor variants of the table's configuration, each a short run.

    .venv/bin/python experiments/navix_doorkey_study.py                      # every variant
    .venv/bin/python experiments/navix_doorkey_study.py --variants baseline rejax_init
    .venv/bin/python experiments/navix_doorkey_study.py --total-steps 262144 --seeds 4
    .venv/bin/python experiments/navix_doorkey_study.py --variants walls_passable \
        --env navix:Navix-DoorKey-16x16-v0 --total-steps 1048576 --suffix @16x16-1M

Every variant runs in its own process (one at a time), so a monkeypatched network (the
``*_init`` variants) never shares a process, or an in-process program cache, with another.
The JSON (default benchmarks/navix-cpu/doorkey_study.json) is rewritten after each variant and
merged with what is there, so variants can be added by later calls.

Variants (all: the table's PPO config, ``eval_sample`` on, ``eval_episodes`` 20):

* ``baseline``: the config of experiments/benchmarks/navix.yaml as it is;
* ``no_grad_clip``: ``max_grad_norm`` 1e9 (rejax's ``optax.clip(1)`` clips each gradient
  *element* at +-1, not the global norm: practically no clipping);
* ``no_bootstrap``: ``bootstrap_truncation=False`` (rejax's time-limit-as-termination);
* ``no_prepared_starts``: ``env_kwargs={"prepared_starts": 0}`` (a reset computed at every step);
* ``rejax_init``: every Dense layer of jaxrl's actor-critic with flax's default initializer
  (lecun normal kernels, zero biases), as rejax's networks; jaxrl's own is orthogonal (gain
  sqrt 2 for hidden layers, 0.01 for the policy's output, 1 for the value's);
* ``policy_gain1``: jaxrl's orthogonal init but the policy's output layer at gain 1 (not 0.01):
  which part of the init matters;
* ``rejax_like``: ``rejax_init`` + ``no_grad_clip`` + ``no_bootstrap``;
* ``ent0``: ``ent_coef`` 0 (the entropy bonus pulling the near-uniform policy back);
* ``walls_passable``: the baseline on Navix with the wall bug of Navix <= 0.6.16, fixed in
  navix commit f020a65 (2024-07-08, "entities are now correctly flagged as non walkable", first
  in 0.6.17): ``_can_walk_there`` combined the wall entities with ``jnp.any`` instead of
  ``jnp.all``, so a cell holding one of several wall entities was walkable (the door, a single
  entity, still blocked). Patched into navix.actions in the worker process only;
* ``random_policy`` (not training): success within 100 steps of the uniform random policy, and
  of untrained networks with jaxrl's and rejax's initializations (sampled actions);
  ``random_policy_walls_passable``: the same under the wall bug;
* ``rejax_init_walls_passable``: ``rejax_init`` under the wall bug (DoorKey-16x16, where the
  uniform start policy almost never covers the 26 cells to the goal in 100 steps).

Shortest honest episode in DoorKey-8x8 (player (1,1) facing east, goal (6,6), a wall column
with a locked door between them, the key in the first room): 10 moves, a turn, a pickup, a
toggle: at least 13 steps (more with the detours to key and door). 11 steps (5 east, a turn,
5 south), the minimum of rejax's evaluation episodes in the table's result file, is only possible
by walking through the wall.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENV = "navix:Navix-DoorKey-8x8-v0"
OUT = ROOT / "benchmarks" / "navix-cpu" / "doorkey_study.json"

#: experiments/benchmarks/navix.yaml, entry ppo/navix:Navix-DoorKey-8x8-v0.
TABLE_CONFIG = dict(num_envs=16, num_steps=128, update_epochs=2, num_minibatches=1,
                    learning_rate=3e-4, max_grad_norm=1.0, gamma=0.95, gae_lambda=0.9,
                    clip_eps=0.2, ent_coef=0.01, vf_coef=0.5, activation="tanh",
                    normalize_obs=False)

def table_config(env: str) -> dict:
    """The navix suite's PPO config for ``env`` (each task has the table's own; DoorKey-8x8's is
    `TABLE_CONFIG`), without the measure's ``eval_sample`` (the study evaluates sampled)."""
    from jaxrl.studies.bench.suite import load_suite

    entry = next(e for e in load_suite("navix").entries if e.algo == "ppo" and e.env == env)
    return {k: v for k, v in entry.config.items() if k != "eval_sample"}


VARIANTS: dict[str, dict] = {
    "baseline": {},
    "no_grad_clip": {"max_grad_norm": 1e9},
    "no_bootstrap": {"bootstrap_truncation": False},
    "no_prepared_starts": {"env_kwargs": {"prepared_starts": 0}},
    "rejax_init": {"_init": "rejax"},
    "policy_gain1": {"_init": "policy_gain1"},
    "rejax_like": {"_init": "rejax", "max_grad_norm": 1e9, "bootstrap_truncation": False},
    "ent0": {"ent_coef": 0.0},
    "walls_passable": {"_walls": "passable"},
    "rejax_init_walls_passable": {"_init": "rejax", "_walls": "passable"},
    "random_policy": {"_probe": True},
    "random_policy_walls_passable": {"_probe": True, "_walls": "passable"},
}
#: What the Navix repository's own files say (neurips branch, 250d46e9, baselines/rejax/).
REFERENCE = {
    "table_run": "results/navix_Navix-DoorKey-8x8-v0_ppo_5_0_1760716970.5776014.json (2025-10-17): "
                 "eval return per seed at 262,144 steps 0.70 0.85 0.85 0.80 0.65, at 1,048,576 "
                 "0.95 1.0 0.95 0.90 1.0; shortest evaluation episode 11 or 12 steps in every seed "
                 "from 262,144 on (11 in all at the end). DoorKey-16x16 (..._1760716970.5772562.json): final 0.85 0.85 "
                 "0.95 0.0 0.85, shortest episode 27 steps (13 east, a turn, 13 south)",
    "earlier_run_same_config": "results.bkp.2/navix_Navix-DoorKey-8x8-v0_ppo_5_0_1754061974."
                               "7842412.json (2025-08-01): final 0.0 0.05 0.0 0.0 0.0; "
                               "DoorKey-16x16 (..._1754061974.800638.json): 0.0 on all 5 seeds",
    "navix_pin": "baselines/rejax/pyproject.toml pins Navix 5fc4975a (2024-08-01), which has the "
                 "wall fix; the run that produced the table did not walk into walls only if it "
                 "used a Navix <= 0.6.16",
    "navix_fix": "navix f020a65 (2024-07-08) 'fix: entities are now correctly flagged as non "
                 "walkable': jnp.any -> jnp.all in actions._can_walk_there; first tag 0.6.17",
    "rejax_clip": "rejax 613bd7ab PPO: optax.clip(max_grad_norm) = element-wise clipping at +-1, "
                  "two Adams, flax default (lecun normal) init",
    "iqn_table_run": "results/navix_Navix-DoorKey-8x8-v0_iqn_5_0_1760742454.1812055.json "
                     "(2025-10-17): eval return per seed at 131,080 steps 0.75 0.75 0.90 0.80 "
                     "0.85, at 1,048,640 1.0 on all 5; shortest evaluation episode 11 steps in "
                     "every seed at every evaluation from 131,080 on (5 east, a turn, 5 south: "
                     "straight to the goal), mean final episode 11.30-11.55 steps",
    "iqn_earlier_run_same_config": "results.additional/navix_Navix-DoorKey-8x8-v0_iqn_5_0_"
                                   "1754041485.1390102.json (2025-08-01, config equal to the "
                                   "yaml at 250d46e9): 0.0 on all 5 seeds at every evaluation, "
                                   "every evaluation episode 100 steps (the time limit)",
}
DEFAULT_ORDER = ["random_policy", "baseline", "rejax_init", "no_grad_clip", "no_bootstrap",
                 "policy_gain1", "rejax_like", "no_prepared_starts", "ent0",
                 "random_policy_walls_passable", "walls_passable"]


# -- network patches (applied in the worker process only) ---------------------------------------
def patch_init(kind: str) -> None:
    """Replace jaxrl's Dense initializer: ``rejax``: flax's default (lecun normal kernel, zero
    bias) for every layer; ``policy_gain1``: orthogonal as jaxrl's, the policy's output gain 1."""
    import flax.linen as nn

    import jaxrl.parts.heads as jn

    if kind == "rejax":
        jn._dense = lambda features, gain: nn.Dense(features)
    elif kind == "policy_gain1":
        original = jn._dense
        jn._dense = lambda features, gain: original(features, 1.0 if gain == 0.01 else gain)
    else:
        raise ValueError(kind)


def patch_walls_passable() -> None:
    """Navix <= 0.6.16's ``_can_walk_there``: ``jnp.any`` over an entity kind's positions (see
    the module docstring); ``_move`` and ``drop`` look the function up at call time."""
    import jax
    import jax.numpy as jnp
    import navix.actions as na

    def _can_walk_there(state, position):
        walkable = jnp.equal(state.grid[tuple(position)], 0)
        events = jax.lax.cond(walkable, lambda: state.events,
                              lambda: state.events.record_grid_hit(position))
        for k in state.entities:
            same_position = na.positions_equal(state.entities[k].position, position)
            events = jax.lax.cond(jnp.any(same_position),
                                  lambda x, k=k: x.record_walk_into(state.entities[k], position),
                                  lambda x: x, events)
            obstructs = jnp.logical_and(jnp.logical_not(state.entities[k].walkable),
                                        same_position)
            walkable = jnp.logical_and(walkable, jnp.any(jnp.logical_not(obstructs)))  # the bug
        return jnp.asarray(walkable, dtype=jnp.bool_), events

    na._can_walk_there = _can_walk_there


# -- the worker ---------------------------------------------------------------------------------
def _finite(x) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


def train_variant(name: str, seeds: int, total_steps: int, eval_episodes: int,
                  env: str = ENV) -> dict:
    import numpy as np

    import jaxrl

    spec = dict(VARIANTS[name])
    init = spec.pop("_init", None)
    if init:
        patch_init(init)
    if spec.pop("_walls", None):
        patch_walls_passable()
    config = {**table_config(env), **spec}
    start = time.time()
    result = jaxrl.train("ppo", env=env, seeds=seeds, total_steps=total_steps, store=False,
                         progress=False, eval_episodes=eval_episodes, eval_sample=True, **config)
    wall = time.time() - start
    m = result.metrics
    per_seed = []
    for seed, df in m.groupby("seed"):
        df = df.sort_values("update")
        ret = df["episode_return_mean"].to_numpy(float)
        rmax = df["episode_return_max"].to_numpy(float)
        count = df["episode_count"].to_numpy(float)
        hits = np.nan_to_num(ret) * count  # return is 1 at the goal, 0 otherwise
        first = np.flatnonzero(np.nan_to_num(rmax) > 0)
        last10 = ret[-10:]
        per_seed.append({
            "seed": int(seed),
            "final_eval_return": _finite(np.asarray(result.final_eval_return)[int(seed)]),
            "last_train_return_mean": _finite(ret[-1]),
            "last10_train_return_mean": _finite(np.nanmean(last10)),
            "last_train_episode_length_mean": _finite(df["episode_length_mean"].iloc[-1]),
            "min_train_episode_length": _finite(df["episode_length_min"].min()),
            "first_update_any_train_return_gt0": int(first[0]) if first.size else None,
            "first_env_step_any_train_return_gt0": (
                _finite(df["env_steps"].iloc[first[0]]) if first.size else None),
            "train_successes": round(hits.sum()),
            "train_episodes": int(count.sum()),
            "entropy_first": _finite(df["entropy"].iloc[0]),
            "entropy_min": _finite(df["entropy"].min()),
            "entropy_last": _finite(df["entropy"].iloc[-1]),
            "grad_norm_median": _finite(df["grad_norm"].median()),
        })
    ev = result.evaluations
    if ev is not None and len(ev) and "seed" in ev.columns:
        step_col = next((c for c in ("env_steps", "update", "evaluation") if c in ev.columns), None)
        for rec in per_seed:
            rows = ev[ev["seed"] == rec["seed"]]
            if step_col is not None:
                rows = rows.sort_values(step_col)
            if len(rows):
                last = rows.iloc[-1]
                rec["final_eval"] = {c: _finite(last[c]) for c in rows.columns
                                     if c != "seed" and np.issubdtype(rows[c].dtype, np.number)}
    evals = [s["final_eval_return"] for s in per_seed]
    return {
        "variant": name,
        "env": env,
        "overrides": {k: v for k, v in VARIANTS[name].items()},
        "config": config,
        "seeds": seeds,
        "total_steps": total_steps,
        "eval_episodes": eval_episodes,
        "updates": int(m["update"].max()) + 1,
        "final_eval_return_mean": float(np.mean([e or 0.0 for e in evals])),
        "per_seed": per_seed,
        "run_seconds": _finite(result.run_seconds),
        "wall_seconds": round(wall, 1),
        "metric_columns": list(m.columns),
    }


def probe_random(episodes: int = 2048, init_seeds: int = 8, env_name: str = ENV) -> dict:
    """Success within the 100-step limit of never-trained policies (sampled actions)."""
    import flax.linen as nn
    import jax
    import jax.numpy as jnp
    import numpy as np

    import envs
    import jaxrl.parts.heads as jn
    from envs.spaces import Discrete

    env, params = envs.make(env_name)
    n_act = env.action_space(params).n
    shape = env.observation_space(params).shape
    steps = int(params.episode_length)
    per_init = episodes // init_seeds

    class RejaxPolicy(nn.Module):  # rejax.networks.DiscretePolicy at flax's default init
        @nn.compact
        def __call__(self, x):
            x = x.reshape((x.shape[0], -1))
            for _ in range(2):
                x = jnp.tanh(nn.Dense(64)(x))
            return nn.Dense(n_act)(x)

    def run(logits_fn, key):
        k0, key = jax.random.split(key)
        obs, st = jax.vmap(env.reset, in_axes=(0, None))(jax.random.split(k0, per_init), params)

        def body(c, k):
            obs, st, ret, length, done = c
            ka, ks = jax.random.split(k)
            logits = logits_fn(obs)
            a = jax.random.categorical(ka, logits)
            p = jax.nn.softmax(logits)
            ent = -(p * jnp.log(p + 1e-12)).sum(-1)
            obs, st, r, term, trunc, _ = jax.vmap(env.step, in_axes=(0, 0, 0, None))(
                jax.random.split(ks, per_init), st, a, params)
            ret = ret + jnp.where(done, 0.0, r)
            length = length + (~done)
            done = done | term | trunc
            return (obs, st, ret, length, done), ent

        c0 = (obs, st, jnp.zeros(per_init), jnp.zeros(per_init, jnp.int32),
              jnp.zeros(per_init, bool))
        (_, _, ret, length, _), ent = jax.lax.scan(body, c0, jax.random.split(key, steps))
        return ret, length, ent.mean()

    out = {"env": env_name, "episodes": per_init * init_seeds, "max_steps": steps, "policies": {}}
    for kind in ("uniform", "jaxrl_init", "rejax_init"):
        succ, ents, per = 0, [], []
        for s in range(init_seeds):
            key = jax.random.PRNGKey(1000 + s)
            if kind == "uniform":
                fn = lambda o: jnp.zeros((o.shape[0], n_act))
            elif kind == "rejax_init":
                net = RejaxPolicy()
                p = net.init(key, jnp.zeros((1, *shape)))
                fn = lambda o, p=p, net=net: net.apply(p, o)
            else:
                net = jn.PolicyHead(Discrete(n_act), (64, 64), "tanh")
                p = net.init(key, jnp.zeros((1, int(np.prod(shape)))))
                fn = lambda o, p=p, net=net: net.apply(p, o.reshape(o.shape[0], -1)).logits
            ret, _length, ent = jax.jit(lambda k, fn=fn: run(fn, k))(jax.random.PRNGKey(s))
            k = int((np.asarray(ret) > 0).sum())
            succ += k
            per.append(k)
            ents.append(float(ent))
        out["policies"][kind] = {"successes": succ, "success_rate": succ / (per_init * init_seeds),
                                 "successes_per_init_seed": per,
                                 "mean_entropy": float(np.mean(ents))}
    # The rollout budget each update has: how many successes uniform play gives per update.
    out["note"] = ("successes of 2048 episodes (8 init/sample seeds x 256), reward 1 at the goal; "
                   "a success means the agent picked up the key, opened the door and reached the "
                   "goal within 100 steps")
    return out


def worker(args) -> None:
    name = args.worker
    if VARIANTS[name].get("_probe"):
        if VARIANTS[name].get("_walls"):
            patch_walls_passable()
        start = time.time()
        res = {"variant": name, **probe_random(env_name=args.env),
               "wall_seconds": round(time.time() - start, 1)}
    else:
        res = train_variant(name, args.seeds, args.total_steps, args.eval_episodes, args.env)
    Path(args.worker_out).write_text(json.dumps(res, indent=1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--variants", nargs="*", default=DEFAULT_ORDER, choices=list(VARIANTS))
    ap.add_argument("--seeds", type=int, default=4)
    ap.add_argument("--total-steps", type=int, default=262_144)
    ap.add_argument("--eval-episodes", type=int, default=20)
    ap.add_argument("--env", default=ENV)
    ap.add_argument("--suffix", default="", help="appended to each variant's key in the JSON "
                    "(for runs on another env or budget)")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--fresh", action="store_true", help="do not merge with an existing JSON")
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--worker-out", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)

    out = Path(args.out)
    data = {}
    if out.exists() and not args.fresh:
        data = json.loads(out.read_text())
    data.setdefault("env", ENV)
    data.setdefault("table_config", TABLE_CONFIG)
    data.setdefault("results", {})
    data["reference"] = REFERENCE
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1) + "\n")
    for name in args.variants:
        key = name + args.suffix
        tmp = out.with_suffix(f".{name}.tmp.json")
        cmd = [sys.executable, __file__, "--worker", name, "--worker-out", str(tmp),
               "--env", args.env,
               "--seeds", str(args.seeds), "--total-steps", str(args.total_steps),
               "--eval-episodes", str(args.eval_episodes)]
        print(f"[{time.strftime('%H:%M:%S')}] {key} ...", flush=True)
        proc = subprocess.run(cmd, cwd=ROOT, env={**os.environ, "PYTHONWARNINGS": "ignore"})
        if proc.returncode != 0 or not tmp.exists():
            print(f"  {name} failed (rc {proc.returncode})", flush=True)
            continue
        res = json.loads(tmp.read_text())
        tmp.unlink()
        data["results"][key] = res
        if "per_seed" in res:
            summary = [(s["final_eval_return"], s["train_successes"],
                        s["first_update_any_train_return_gt0"]) for s in res["per_seed"]]
            print(f"  eval/train successes/first>0 per seed: {summary}  "
                  f"({res['wall_seconds']} s)", flush=True)
        else:
            print(f"  {json.dumps(res['policies'])}", flush=True)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(data, indent=1) + "\n")


if __name__ == "__main__":
    main()

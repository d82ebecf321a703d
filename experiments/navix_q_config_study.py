"""Which difference between the navix suite's Q-learner entries and what rejax ran at the table's
commit (rejax 613bd7a, the Navix baselines' pin) explains the LavaGapS6 gap (PQN 0.10 against
0.96, DQN 0.0 against 0.37)? One-factor-at-a-time variants of the suite's entry, each trained in
its own process at the entry's full budget and seeds, evaluated as the suite evaluates (final
evaluation, greedy, the entry's episodes).

    .venv/bin/python experiments/navix_q_config_study.py --algo pqn --variants relu relu_noclip
    .venv/bin/python experiments/navix_q_config_study.py --algo dqn --variants noclip

What rejax 613bd7a does (src/rejax/algos/pqn.py, dqn.py, mixins.py), against the suite's entry:

* PQN's network: ``create_agent`` sets ``activation = relu(LayerNorm(x))`` whatever the config
  says (the table's PQN configs name none); the suite's PQN entries use SiLU with LayerNorm;
* gradient clipping: ``optax.clip(max_grad_norm)`` clips each gradient *element* (practically
  no clipping at 1-5); the suite's entries clip the global norm at that value;
* time limits end episodes as terminations (rejax's ``done``);
* PQN's targets: the lambda-return scan carries ``max_a Q`` of the step it has just processed
  as the next-step value of the step before, so step ``t`` bootstraps from ``max_a Q(s_{t+2})``
  (``s_T`` for the last two steps) where Peng's Q(lambda) uses ``s_{t+1}``
  (``calculate_targets``): variant ``rejax_targets`` puts that into jaxrl's PQN;
* observations normalized by running statistics (the LavaGapS6 configs ask for it): jaxrl's
  Q-learners have no such option; variants ``*_obsnorm`` standardize them by fixed statistics
  of a random policy's observations (`observation_stats`) in a torso of rejax's layers
  (Dense, LayerNorm, ReLU; flax's default initialization, as rejax's).

Variants (overrides of the suite entry's config; ``_`` keys are patches):

* ``relu`` (PQN): the network rejax ran, ReLU with LayerNorm;
* ``noclip``: ``max_grad_norm`` 1e9 (rejax's element-wise clip: practically none);
* ``relu_noclip`` (PQN): both;
* ``relu_noclip_termination``: and time limits as terminations;
* ``rejax_like`` (PQN): all of the above and rejax's targets;
* ``relu_obsnorm``, ``rejax_like_obsnorm`` (PQN): those with normalized observations (and
  flax's default initialization, rejax's); ``relu_obsnorm_orthogonal``: normalized
  observations with jaxrl's orthogonal initialization;
* ``obs_noclip``: normalized observations not clipped (jaxrl clips them at 10, rejax does not);
* ``rejax_net``: rejax's DQN network as a whole Q-network (flax's default initialization);
* ``grad_noclip_termination``: ``noclip_termination`` again, on the entry as it is since it
  normalizes its observations (``noclip_termination`` ran before);
* ``dqn_rejax_like`` (DQN): rejax's network, no observation clip, no gradient clipping, time
  limits as terminations: every difference from rejax's DQN this study knows of at once;
* ``relu_normalize_obs`` (PQN): normalize_obs (running statistics), jaxrl's option
  (`jaxrl.algos.obs_normalization`: per member, updated from every rollout, read by acting,
  evaluation and learning) in place of the fixed statistics, with ReLU; the network is jaxrl's
  own (orthogonal initialization), so ``relu_obsnorm_orthogonal`` is its fixed-statistics twin.

The JSON (default benchmarks/navix-cpu/q_config_study.json) is merged with what is there, keyed
``algo/env/variant``, and rewritten after each variant.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

OUT = Path("benchmarks/navix-cpu/q_config_study.json")
NO_CLIP = {"max_grad_norm": 1e9}
RELU = {"activation": "relu"}
TERMINATION = {"bootstrap_truncation": False}
VARIANTS = {
    "relu": RELU,
    "noclip": NO_CLIP,
    "relu_noclip": {**RELU, **NO_CLIP},
    "relu_noclip_termination": {**RELU, **NO_CLIP, **TERMINATION},
    "noclip_termination": {**NO_CLIP, **TERMINATION},
    "rejax_like": {**RELU, **NO_CLIP, **TERMINATION, "_targets": "rejax"},
    "relu_obsnorm": {**RELU, "_obsnorm": True},
    "relu_obsnorm_orthogonal": {**RELU, "_obsnorm": "orthogonal"},
    "rejax_like_obsnorm": {**RELU, **NO_CLIP, **TERMINATION, "_targets": "rejax",
                           "_obsnorm": True},
    "relu_normalize_obs": {**RELU, "normalize_obs": True},
    "obs_noclip": {"_obs_clip": None},
    "rejax_net": {"_network": "rejax"},
    "dqn_rejax_like": {**NO_CLIP, **TERMINATION, "_network": "rejax", "_obs_clip": None},
    "grad_noclip_termination": {**NO_CLIP, **TERMINATION},
}
OBS_STAT_ENVS, OBS_STAT_STEPS, STD_FLOOR = 64, 512, 0.1


def observation_stats(env_name: str) -> tuple:
    """Per-feature mean and std (at least `STD_FLOOR`) of the flat observations a uniformly
    random policy sees in ``OBS_STAT_ENVS x OBS_STAT_STEPS`` steps of ``env_name``."""
    import jax
    import jax.numpy as jnp

    import envs

    env, params = envs.make(env_name)
    n = env.action_space(params).n
    keys = jax.random.split(jax.random.key(0), OBS_STAT_ENVS)
    obs, state = jax.vmap(env.reset, in_axes=(0, None))(keys, params)

    def step(carry, key):
        obs, state = carry
        act_key, step_key = jax.random.split(key)
        actions = jax.random.randint(act_key, (OBS_STAT_ENVS,), 0, n)
        obs, state, *_ = jax.vmap(env.step, in_axes=(0, 0, 0, None))(
            jax.random.split(step_key, OBS_STAT_ENVS), state, actions, params)
        return (obs, state), obs.reshape(OBS_STAT_ENVS, -1)

    _, seen = jax.lax.scan(step, (obs, state), jax.random.split(jax.random.key(1),
                                                                 OBS_STAT_STEPS))
    flat = seen.reshape(-1, seen.shape[-1]).astype(jnp.float32)
    return flat.mean(0), jnp.maximum(flat.std(0), STD_FLOOR)


def register_normalized_torso(env_name: str, init: str = "flax", hidden=(64, 64)) -> str:
    """Register (in this process) a torso that standardizes the flat observation by
    `observation_stats` (fixed: rejax keeps running statistics), then rejax's hidden layers
    (Dense, LayerNorm, ReLU), initialized as flax does by default (``flax``, rejax's) or as
    jaxrl's torsos are (``orthogonal``, gain sqrt 2); returns its name."""
    import flax.linen as nn
    import numpy as np

    from jaxrl.ops.init import orthogonal
    from jaxrl.parts.torsos import register_torso

    mean, std = observation_stats(env_name)
    kernel = {} if init == "flax" else {"kernel_init": orthogonal(np.sqrt(2.0))}

    class Normalized(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = (x - mean) / std
            for width in hidden:
                x = nn.relu(nn.LayerNorm()(nn.Dense(width, **kernel)(x)))
            return x

    register_torso("obsnorm_relu_ln", Normalized)
    return "obsnorm_relu_ln"


def register_rejax_q_network() -> str:
    """Register (in this process) rejax 613bd7a's DQN network as a whole Q-network: two Dense
    layers of 64 with SiLU and a linear output, flax's default initialization (jaxrl's: the
    same shape, orthogonal); returns its name."""
    import flax.linen as nn

    from jaxrl.parts.user_networks import register_network

    class RejaxQ(nn.Module):
        num_actions: int

        @nn.compact
        def __call__(self, x):
            for width in (64, 64):
                x = nn.silu(nn.Dense(width)(x))
            return nn.Dense(self.num_actions)(x)

    register_network("rejax_q", lambda num_actions: RejaxQ(num_actions))
    return "rejax_q"


def patch_obs_clip(clip: float | None) -> None:
    """Normalized observations clipped at ``clip`` (None: not clipped, as rejax's running
    statistics leave them) in place of jaxrl's ``OBS_CLIP`` of 10."""
    from jaxrl.algos import obs_normalization
    from jaxrl.ops import normalize

    def normalize_with(stats, obs):
        return obs if stats is None else normalize(stats, obs, clip=clip)

    obs_normalization.normalize_with = normalize_with  # read by normalize_obs / _transitions


def patch_rejax_targets() -> None:
    """jaxrl's PQN with rejax 613bd7a's targets: step ``t`` bootstraps from ``max_a Q`` of the
    observation after step ``t + 1`` (the last step's for the last two steps)."""
    import jax
    import jax.numpy as jnp

    from jaxrl.algos import action_masks, pqn_batch
    from jaxrl.ops import lambda_returns

    def targets(params, hp, steps, network, space=None):
        q_next = action_masks.allowed_q(network.apply(params, steps.next_obs), space,
                                        steps.next_obs).max(-1)  # [T, N] max_a Q(s_{t+1})
        shifted = jnp.concatenate([q_next[1:], q_next[-1:]])  # [T, N] max_a Q(s_{t+2})
        return lambda_returns(hp.reward_scale * steps.reward, jax.lax.stop_gradient(shifted),
                              steps.terminated, steps.truncated, hp.gamma, hp.q_lambda)

    pqn_batch.q_lambda_targets = targets  # where `pqn_batch.replay_batch` looks it up


def _finite(x) -> float | None:
    x = float(x)
    return x if math.isfinite(x) else None


def worker(algo: str, env: str, variant: str, seeds: int, steps: int | None, out: Path) -> None:
    """Train one variant (in this process) and write its record to ``out``."""
    import jaxrl
    from jaxrl.studies.bench.suite import load_suite

    overrides = dict(VARIANTS[variant])
    if overrides.pop("_targets", None) == "rejax":
        patch_rejax_targets()
    if "_obs_clip" in overrides:
        patch_obs_clip(overrides.pop("_obs_clip"))
    if overrides.pop("_network", None) == "rejax":
        overrides["network"] = register_rejax_q_network()
    obsnorm = overrides.pop("_obsnorm", False)
    if obsnorm:
        overrides["torso"] = register_normalized_torso(
            env, "orthogonal" if obsnorm == "orthogonal" else "flax")
    entry = next(e for e in load_suite("navix").entries if e.algo == algo and e.env == env)
    config = {**entry.config, **overrides}
    total = steps or entry.total_steps
    started = time.time()
    result = jaxrl.train(algo, env=env, seeds=seeds, total_steps=total, progress=False,
                         store=False, eval_episodes=entry.eval_episodes, **config)
    frame = result.metrics.sort_values("update")
    per_seed = []
    for seed, rows in frame.groupby("seed"):
        ret = rows["episode_return_mean"].to_numpy(float)
        per_seed.append({"seed": int(seed),
                         "final_eval_return": _finite(np.asarray(result.final_eval_return)[
                             int(seed)]),
                         "last10_train_return_mean": _finite(np.nanmean(ret[-10:]))})
    record = {"algo": algo, "env": env, "variant": variant, "overrides": VARIANTS[variant],
              "config": {k: v for k, v in config.items()}, "seeds": seeds,
              "total_steps": total, "eval_episodes": entry.eval_episodes,
              "final_eval_mean": _finite(np.mean(result.final_eval_return)),
              "solved_seeds": int(np.sum(np.asarray(result.final_eval_return) >= 0.5)),
              "per_seed": per_seed, "wall_seconds": round(time.time() - started, 1),
              "date": time.strftime("%Y-%m-%d")}
    out.write_text(json.dumps(record, indent=1, default=str))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--algo", default="pqn", choices=["pqn", "dqn"])
    ap.add_argument("--env", default="navix:Navix-LavaGapS6-v0")
    ap.add_argument("--variants", nargs="+", default=["relu", "relu_noclip",
                                                      "relu_noclip_termination", "rejax_like"],
                    choices=list(VARIANTS))
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--total-steps", type=int, default=None)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--worker-out", type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        worker(args.algo, args.env, args.worker, args.seeds, args.total_steps, args.worker_out)
        return 0
    for variant in args.variants:
        if args.algo == "dqn" and variant.startswith(("relu", "rejax_like")):
            print(f"skipping {variant}: a PQN variant", file=sys.stderr)
            continue
        tmp = args.out.with_suffix(f".{variant}.tmp")
        cmd = [sys.executable, __file__, "--algo", args.algo, "--env", args.env, "--seeds",
               str(args.seeds), "--worker", variant, "--worker-out", str(tmp)]
        if args.total_steps:
            cmd += ["--total-steps", str(args.total_steps)]
        print(f"[{time.strftime('%H:%M:%S')}] {args.algo} {variant} ...", file=sys.stderr,
              flush=True)
        subprocess.run(cmd, check=True)
        record = json.loads(tmp.read_text())
        tmp.unlink()
        merged = json.loads(args.out.read_text()) if args.out.exists() else {}
        merged[f"{args.algo}/{args.env}/{variant}"] = record
        args.out.write_text(json.dumps(merged, indent=1) + "\n")
        print(f"  {variant}: mean {record['final_eval_mean']}, solved "
              f"{record['solved_seeds']}/{args.seeds}", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

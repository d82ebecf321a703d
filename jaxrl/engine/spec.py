"""What to run: `GroupSpec` (one compiled program's request, JSON-able), its validation and
resolution into an algorithm, a wrapped env and configs (`Resolved`), and the memory plan."""

from __future__ import annotations

import dataclasses
from typing import Any

import envs
from envs.core import runs_on_host, wrapped_attr
from envs.options import checked as checked_env_options
from envs.wrappers import EpisodeStatistics
from jaxrl import algos
from jaxrl.config import AlgoConfig, ConfigError
from jaxrl.engine.members import member_sharding
from jaxrl.parts import memory
from jaxrl.parts.torsos import resolve_torso
from jaxrl.run_args import check_run_args

MAX_CHUNK_UPDATES = 50

# `train`'s keyword arguments that are engine options, not config fields
ENGINE_OPTIONS = ("seed", "eval_every", "eval_episodes", "eval_sample", "shard_seeds",
                  "max_chunk_updates",
                  "env_kwargs", "checkpoint_every", "memory_check")


@dataclasses.dataclass
class GroupSpec:
    """Everything needed to (re)build and run one compiled program: ``algo`` on ``env`` for
    ``total_steps`` env steps per seed, ``seeds`` seeds of each config in ``configs`` (override
    dicts, or full config dicts when resuming). JSON-able, so it is stored with the runs it
    produces (for `resume`) and shipped to remote workers (Ray)."""

    algo: str
    env: str
    total_steps: int
    seeds: int
    seed: int = 0
    configs: list = dataclasses.field(default_factory=lambda: [{}])
    env_kwargs: dict | None = None
    eval_every: int | None = None
    eval_episodes: int = 16
    eval_sample: bool = False  # evaluate the policy's sampled actions, not its mode
    max_chunk_updates: int = MAX_CHUNK_UPDATES
    shard: bool = True
    checkpoint_every: int | None = None
    memory_check: bool = True

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> GroupSpec:
        return cls(**{f.name: d[f.name] for f in dataclasses.fields(cls) if f.name in d})


def group_spec(algo: str, env: str, seeds: int, total_steps: int, configs: list, seed: int = 0,
               eval_every=None, eval_episodes: int = 16, shard_seeds: bool = True,
               max_chunk_updates: int = MAX_CHUNK_UPDATES, env_kwargs=None,
               checkpoint_every=None, memory_check: bool = True,
               eval_sample: bool = False) -> GroupSpec:
    """A `GroupSpec` from the engine options as `train` and `sweep` name them; the env's count
    options are checked and recorded as ints (`envs.options.checked`: ``2.0`` -> ``2``)."""
    check_run_args(seeds=seeds, total_steps=total_steps, seed=seed,  # before int() truncates
                   eval_episodes=eval_episodes, env_kwargs=env_kwargs)
    return GroupSpec(algo=algo, env=env, total_steps=int(total_steps), seeds=int(seeds),
                     seed=int(seed), configs=list(configs),
                     env_kwargs=checked_env_options(env, env_kwargs),
                     eval_every=eval_every, eval_episodes=int(eval_episodes),
                     eval_sample=_flag("eval_sample", eval_sample),
                     max_chunk_updates=int(max_chunk_updates), shard=bool(shard_seeds),
                     checkpoint_every=checkpoint_every, memory_check=bool(memory_check))


def _flag(name: str, value) -> bool:
    """``value`` as a switch: True or False (numpy's too), else one-line `ConfigError`."""
    if not isinstance(value, bool) and type(value).__name__ != "bool_":
        raise ConfigError(f"{name} must be true or false, got {value!r}")
    return bool(value)


def engine_options(kwargs: dict) -> tuple[dict, dict]:
    """Split `train`-style keyword arguments into ``(engine options, config overrides)``."""
    options = {k: v for k, v in kwargs.items() if k in ENGINE_OPTIONS}
    return options, {k: v for k, v in kwargs.items() if k not in ENGINE_OPTIONS}


def single_spec(algo: str, env: str, seeds: int, total_steps: int, **kwargs) -> GroupSpec:
    """The `GroupSpec` of a plain run: `train`'s arguments (engine options + config overrides)."""
    options, overrides = engine_options(kwargs)
    return group_spec(algo, env, seeds, total_steps, [overrides], **options)


def check_action_mask(algorithm, env, space, name: str) -> None:
    """`ConfigError` when ``env`` (named ``name``) masks its actions and ``algorithm`` cannot
    honour the mask (`jaxrl.algos.algorithm.Algorithm.action_masks`), or when its mask is one
    per action component rather than per action (no algorithm here honours that)."""
    if wrapped_attr(env, "action_mask_size", 0) and not getattr(space, "mask_size", 0):
        raise ConfigError(f"{name}'s action mask has one entry per action component, not one "
                          f"per action: no jaxrl algorithm honours it")
    if getattr(space, "mask_size", 0) and not algorithm.action_masks:
        able = sorted(n for n in algos.BUILT_IN if algos.get(n).action_masks)
        raise ConfigError(f"{algorithm.name} cannot honour {name}'s action mask (it would act "
                          f"on actions the task forbids); these can: {', '.join(able)}")


def resolve(algo: str, env: str, total_steps: int, seeds: int, env_kwargs=None, **overrides):
    """Validate the request and build ``(algorithm, env, env_params, config, num_updates)``.
    Every bad input raises a `ValueError` subclass with a one-line message."""
    algorithm = algos.get(algo)
    check_run_args(seeds=seeds, total_steps=total_steps, env_kwargs=env_kwargs)
    if int(seeds) < 1:
        raise ConfigError(f"seeds must be >= 1, got {seeds}")
    base_env, env_params = envs.make(env, **(env_kwargs or {}))
    space = base_env.action_space(env_params)
    kind = "discrete" if isinstance(space, envs.Discrete) else "continuous"
    if kind not in algorithm.action_kinds:
        raise ConfigError(f"{algorithm.name} handles {' and '.join(algorithm.action_kinds)} "
                          f"actions; {env} has {kind} actions")
    check_action_mask(algorithm, base_env, space, env)
    config = algorithm.default_config(env).replace(**overrides, total_steps=float(total_steps))
    obs_shape = base_env.observation_space(env_params).shape
    config = config.replace(torso=resolve_torso(config.torso, obs_shape))  # "auto" -> concrete
    config = config.for_env(base_env)  # what the config reads from the env (actor_obs, ...)
    num_updates = int(total_steps) // config.steps_per_update
    if num_updates < 1:
        raise ConfigError(
            f"total_steps={total_steps} is too small for one update "
            f"({config.steps_per_update} env steps per update per seed)"
        )
    return algorithm, EpisodeStatistics(base_env), env_params, config, num_updates


@dataclasses.dataclass
class Resolved:
    """A validated `GroupSpec`: algorithm, wrapped env, env params, the configs, update count."""

    algorithm: Any
    env: Any
    env_params: Any
    configs: tuple
    num_updates: int
    memory_checked: bool = False

    @property
    def config(self) -> AlgoConfig:
        return self.configs[0]


def resolve_group(spec: GroupSpec) -> Resolved:
    """Validate every config of ``spec`` (one-line `ConfigError`s) and check they share their
    static fields (one program)."""
    resolved = [resolve(spec.algo, spec.env, spec.total_steps, spec.seeds, spec.env_kwargs,
                        **overrides) for overrides in spec.configs]
    algorithm, env, env_params, _, num_updates = resolved[0]
    configs = tuple(r[3] for r in resolved)
    for c in configs[1:]:
        if c.static_key() != configs[0].static_key():
            raise ConfigError("configs of one group must share every static field "
                              f"(got {static_diff(configs[0], c)})")
    return Resolved(algorithm, env, env_params, configs, num_updates)


def static_diff(a: AlgoConfig, b: AlgoConfig) -> str:
    """``"name=a vs b, ..."`` for the static fields where two configs differ."""
    diffs = [f"{k}={va!r} vs {vb!r}" for (k, va), (_, vb) in zip(a.static_key()[1:],
                                                                 b.static_key()[1:]) if va != vb]
    return ", ".join(diffs)


def may_shard(spec: GroupSpec, r: Resolved) -> bool:
    """Whether the members may be split over devices: asked for (``spec.shard``) and the env
    is pure JAX (an env of host emulators, like Atari, keeps every member on one device)."""
    return spec.shard and not runs_on_host(r.env)


def plan_memory(spec: GroupSpec, r: Resolved):
    """The memory plan (`jaxrl.parts.memory`) for this program on the local devices: raises
    `MemoryPlanError` (with the estimate and the largest seed count that fits) before anything
    compiles or is recorded. No-op when ``spec.memory_check`` is off or it already ran."""
    if not spec.memory_check or r.memory_checked:
        return None
    sharding, padded = member_sharding(spec.seeds * len(r.configs), may_shard(spec, r))
    devices = len(sharding.device_set) if sharding is not None else 1
    estimate = memory.check(r.algorithm, r.config, r.env, r.env_params, padded, devices,
                            seeds_per_config=spec.seeds if len(r.configs) > 1 else None)
    r.memory_checked = True
    return estimate

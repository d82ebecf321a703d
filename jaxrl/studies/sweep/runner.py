"""Sweeps: many configs x many seeds, one compiled program per static group.

    configs = grid points (x random draws)          # --grid lr=1e-4,3e-4 --random ent=loguniform(a,b)
    groups  = configs split by their static fields   # same shapes -> same program
    for each group:                                   # local, or one Ray task per group
        run_group(configs x seeds as one vmapped program)   # traced hparams ride with the seeds
    table   = IQM [95% CI] of final return per config, ranked

Config ``i``, seed ``j`` gets the same PRNG key as seed ``j`` of a plain `jaxrl.train` run with
the same root seed, so a sweep's per-config results are those of separate runs. Every config is
stored as its own run, tied together by a sweep id (``jaxrl runs ls --sweep ID``,
``jaxrl runs sweep ID``).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re

import numpy as np
import pandas as pd

from jaxrl.config import ConfigError
from jaxrl.engine.spec import ENGINE_OPTIONS, group_spec, plan_memory, resolve_group
from jaxrl.runs.demos import with_demos_found
from jaxrl.runs.files import stamped_id
from jaxrl.runs.store import RunStore, first_chunks_bytes
from jaxrl.studies.sweep import groups as sweep_groups
from jaxrl.studies.sweep import manifest as sweep_manifest
from jaxrl.studies.sweep.table import format_table, load_sweep, sweep_table  # noqa: F401
from jaxrl.trained.results import TrainResult

DISTRIBUTIONS = ("loguniform", "uniform", "randint", "choice")


# -- parsing ------------------------------------------------------------------------------------
def split_values(text: str) -> list[str]:
    """``"1e-4,3e-4"`` -> two values; commas inside brackets stay (``"(64,64),(128,128)"``)."""
    out, depth, current = [], 0, ""
    for ch in text:
        depth += ch in "(["
        depth -= ch in ")]"
        if ch == "," and depth == 0:
            out.append(current.strip())
            current = ""
        else:
            current += ch
    out.append(current.strip())
    if any(not v for v in out):
        raise ConfigError(f"empty value in {text!r}")
    return out


def _key_value(item: str, flag: str) -> tuple[str, str]:
    key, sep, value = item.partition("=")
    if not sep or not key.strip() or not value.strip():
        raise ConfigError(f"{flag} expects key=values, got {item!r}")
    return key.strip(), value.strip()


def parse_grid(items: list[str] | None) -> dict[str, list[str]]:
    """``["lr=1e-4,3e-4", "hidden=(64,64),(32,32)"]`` -> ``{key: [values]}`` (strings; the config
    coerces them)."""
    grid = {}
    for item in items or []:
        key, values = _key_value(item, "--grid")
        grid[key] = [v.strip("()[] ") if v.startswith(("(", "[")) else v
                     for v in split_values(values)]
    return grid


@dataclasses.dataclass(frozen=True)
class Distribution:
    """A random-search distribution: ``loguniform(a,b)``, ``uniform(a,b)``, ``randint(a,b)``
    (inclusive) or ``choice(v1,v2,...)``."""

    kind: str
    args: tuple

    def sample(self, rng: np.random.Generator):
        if self.kind == "loguniform":
            lo, hi = (math.log(float(a)) for a in self.args)
            return float(math.exp(rng.uniform(lo, hi)))
        if self.kind == "uniform":
            return float(rng.uniform(float(self.args[0]), float(self.args[1])))
        if self.kind == "randint":
            return int(rng.integers(int(float(self.args[0])), int(float(self.args[1])) + 1))
        return self.args[int(rng.integers(len(self.args)))]


def parse_distribution(text: str) -> Distribution:
    match = re.fullmatch(r"\s*(\w+)\s*\((.*)\)\s*", text)
    if match is None or match.group(1) not in DISTRIBUTIONS:
        raise ConfigError(f"bad distribution {text!r}; use one of "
                          + ", ".join(f"{d}(...)" for d in DISTRIBUTIONS))
    kind, args = match.group(1), tuple(split_values(match.group(2)))
    if kind != "choice":
        if len(args) != 2:
            raise ConfigError(f"{kind} takes two bounds, got {text!r}")
        try:
            lo, hi = float(args[0]), float(args[1])
        except ValueError:
            raise ConfigError(f"{kind} bounds must be numbers, got {text!r}") from None
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise ConfigError(f"{kind} bounds must be finite numbers, got {text!r}")
        if not lo < hi or (kind == "loguniform" and lo <= 0):
            raise ConfigError(f"{text!r}: need 0 < low < high" if kind == "loguniform"
                              else f"{text!r}: need low < high")
    return Distribution(kind, args)


def parse_random(items: list[str] | None) -> dict[str, Distribution]:
    return {key: parse_distribution(value)
            for key, value in (_key_value(i, "--random") for i in items or [])}


def make_configs(grid: dict | None = None, random: dict | None = None, trials: int | None = None,
                 seed: int = 0) -> list[dict]:
    """Override dicts: every grid point, each combined with ``trials`` random draws (when
    ``random`` is given). Values may be strings (coerced by the config) or numbers."""
    grid, random = dict(grid or {}), dict(random or {})
    points = [dict(zip(grid, combo)) for combo in itertools.product(*grid.values())] or [{}]
    if not random:
        if trials not in (None, 1):
            raise ConfigError("--trials needs at least one --random distribution")
        return points
    trials = 8 if trials is None else int(trials)
    if trials < 1:
        raise ConfigError(f"trials must be >= 1, got {trials}")
    rng = np.random.default_rng(seed)
    dists = {k: v if isinstance(v, Distribution) else parse_distribution(v)
             for k, v in random.items()}
    draws = [{k: d.sample(rng) for k, d in dists.items()} for _ in range(trials)]
    return [{**p, **d} for p in points for d in draws]


# -- grouping -----------------------------------------------------------------------------------
def group_configs(algo: str, env: str, total_steps: int, seeds: int, configs: list[dict],
                  env_kwargs=None) -> list[list[int]]:
    """Indices of ``configs`` split by static fields (first-seen order): one program each.
    Every config is validated here, before anything compiles."""
    groups: dict[tuple, list[int]] = {}
    for i, overrides in enumerate(configs):
        spec = group_spec(algo, env, seeds, total_steps, [overrides], env_kwargs=env_kwargs)
        groups.setdefault(resolve_group(spec).config.static_key(), []).append(i)
    return list(groups.values())


def split_groups(groups: list[list[int]], configs_per_group: int | None) -> list[list[int]]:
    """Each group cut into groups of at most ``configs_per_group`` configs (None: as they are):
    more, smaller programs, e.g. one task per config on a cluster. The pieces of a group share
    its compiled program but for the member count (a config's numbers may then differ from the
    whole group's in the last float bits, as a sweep's differ from separate runs)."""
    if configs_per_group is None:
        return groups
    if int(configs_per_group) < 1:
        raise ConfigError(f"configs_per_group must be >= 1, got {configs_per_group}")
    n = int(configs_per_group)
    return [g[i:i + n] for g in groups for i in range(0, len(g), n)]


# -- results ------------------------------------------------------------------------------------
@dataclasses.dataclass
class SweepResult:
    """``table``: one row per config, ranked by IQM of final evaluation return (best first);
    ``configs[i]``: config ``i``'s swept values; ``results[i]``: its `TrainResult`;
    ``groups``: config indices per program. ``results[i]`` is None for a config whose group
    failed to run, was finished before (``resume``) or when results are not kept."""

    sweep_id: str | None
    algo: str
    env: str
    seeds: int
    configs: list[dict]
    groups: list[list[int]]
    results: list[TrainResult | None]
    failures: dict[int, str]
    table: pd.DataFrame


# -- running ------------------------------------------------------------------------------------
_ENGINE_KEYS = tuple(k for k in ENGINE_OPTIONS if k != "seed")  # sweep's own seed is explicit


def new_sweep_id(algo: str, env: str) -> str:
    return f"sweep-{stamped_id(algo, env)}"


def sweep(algo: str, env: str = "CartPole-v1", seeds: int = 8, total_steps: int = 100_000,
          grid: dict | None = None, random: dict | None = None, trials: int | None = None,
          seed: int = 0, store: bool = True, runs_dir: str | None = None,
          backend: str = "local", address: str | None = None, progress: bool = True,
          command: list[str] | None = None, resume: bool = False,
          configs_per_group: int | None = None, cpus_per_task: float = 1,
          gpus_per_task: float = 0, checkpoint_dir: str | None = None,
          keep_results: bool = True, configs: list[dict] | None = None,
          **kwargs) -> SweepResult:
    """Train every config of ``grid`` (``{key: [values]}``) x ``random`` (``{key:
    "loguniform(a,b)"}``, ``trials`` draws) for ``seeds`` seeds each; configs sharing their
    static fields run as one program (traced hyperparameters vmapped with the seeds), at most
    ``configs_per_group`` configs per program when given.

    Other keyword arguments: engine options (``eval_every``, ``eval_episodes``,
    ``max_chunk_updates``, ``shard_seeds``, ``checkpoint_every``, ``memory_check``,
    ``env_kwargs``) and fixed config overrides applied to every config.

    Each group is recorded in the run store as soon as it ends; a group that fails is recorded
    ``failed`` with its error (``failures``) and the others go on. ``resume=True`` continues the
    newest stored sweep of the same request, running only its groups that are missing or did
    not finish. ``backend="ray"`` runs each group as a Ray task (``address``; default: start a
    local Ray) asking for ``cpus_per_task`` CPUs and ``gpus_per_task`` GPUs; a task checkpoints
    every chunk into ``checkpoint_dir`` (default: the run store; either must be reachable from
    every node) and a retried task resumes from there. ``keep_results=False`` keeps no
    `TrainResult` in memory (the CLI: the head's memory stays flat in the number of groups).
    ``configs`` (instead of ``grid`` and ``random``): the swept values of each config, as given
    (a search's batch of trials, `jaxrl.studies.search`).
    """
    options = {k: kwargs.pop(k) for k in _ENGINE_KEYS if k in kwargs}
    if options.get("checkpoint_every") and not store:
        raise ConfigError("checkpoint_every needs the run store (store=True)")
    if backend not in ("local", "ray"):
        raise ConfigError(f"unknown backend {backend!r}; use 'local' or 'ray'")
    if not store and (backend == "ray" or resume):
        raise ConfigError("backend 'ray' and resume record every group in the run store; "
                          "they need store=True")
    if configs is not None and (grid or random):
        raise ConfigError("give a sweep its configs, or a grid and random draws, not both")
    swept = [dict(c) for c in configs] if configs is not None else make_configs(grid, random,
                                                                                 trials, seed)
    kwargs = with_demos_found(kwargs, runs_dir)
    configs = [{**kwargs, **c} for c in swept]  # fixed overrides + this config's values
    groups = split_groups(group_configs(algo, env, total_steps, seeds, configs,
                                        options.get("env_kwargs")), configs_per_group)
    specs = [group_spec(algo, env, seeds, total_steps, [configs[i] for i in idx], seed, **options)
             for idx in groups]
    if store:  # a read-only or full store: one line before anything compiles
        RunStore(runs_dir).ensure_writable(first_chunks_bytes(len(configs), seeds,
                                                              specs[0].max_chunk_updates))
    resolved = [resolve_group(spec) for spec in specs]
    if backend == "local":  # every plan before anything compiles; on Ray, each worker's own
        for spec, r in zip(specs, resolved):
            plan_memory(spec, r)
    plan = sweep_groups.Plan(algo, env, swept, groups, specs, resolved, command)
    if not store:
        results, failures, finals = sweep_groups.run_unrecorded(plan, progress)
        table = sweep_table(swept, finals, failures, None, groups)
        return SweepResult(None, algo, env, seeds, swept, groups, results, failures, table)
    root = RunStore(runs_dir).root
    request = {"algo": algo, "env": env, "seeds": seeds, "total_steps": total_steps,
               "seed": seed, "configs": configs, "groups": groups, "options": options}
    key = sweep_manifest.request_key(request)
    sweep_id = (sweep_manifest.find_sweep(root, key) if resume else None) or new_sweep_id(algo, env)
    sweep_manifest.write_manifest(root, sweep_id, {"sweep_id": sweep_id, "key": key, **request})
    tally = sweep_groups.run_recorded_groups(
        plan, root, sweep_id, progress=progress, backend=backend, keep_results=keep_results,
        ray={"address": address, "num_cpus": cpus_per_task, "num_gpus": gpus_per_task},
        checkpoint_root=checkpoint_dir)
    table = sweep_table(swept, tally.finals, tally.failures, tally.run_ids, groups)
    return SweepResult(sweep_id, algo, env, seeds, swept, groups, tally.results, tally.failures,
                       table)

"""Benchmark suite files: read, bounded (`jaxrl.named_yaml`: a regular file, its size, its
aliases) and checked, every problem one `SuiteError` line naming the file and the entry.
`jaxrl.studies.bench.runner` runs them.

A suite is YAML::

    name: classic
    title: Classic control                   # optional
    note: text printed under the report title (e.g. how the envs differ from the reference's)
    seeds: 8                                 # default seeds per entry
    seed: 0                                  # root seed (optional)
    eval_episodes: 32                        # final deterministic evaluation episodes (optional)
    entries:
      - algo: ppo
        env: CartPole-v1
        total_steps: 500000                  # env steps per seed
        seeds: 16                            # optional, overrides the suite's; or
                                             # adaptive (below)
        preset: ppo/baselines-mujoco         # optional: a named preset's keys (jaxrl.presets)
        config: {learning_rate: 3.0e-4}      # optional config overrides (on the preset's),
                                             # and the engine's max_chunk_updates and
                                             # eval_every (chunks): one evaluation per chunk
                                             # at most, so a short run's curve needs short
                                             # chunks; eval_sample: true evaluates the
                                             # policy's sampled actions, not its mode
        reference:                           # optional
          value: 492.4
          measure: train_last100             # how it was measured (jaxrl.measures.MEASURES)
          source: CleanRL ppo.py benchmark (3 seeds)
          budget: 500000                     # the reference's env steps
          note: anything else worth knowing
          uncertainty: 50                    # optional: a value read off a plot, good to
                                             # +- this; the verdict is no finer than it
        floor:                               # optional: the random policy's return, drawn
          value: 22.3                        # in the figure and listed in the report
          source: benchmarks/x/random_floor.json

``seeds: adaptive`` (or ``seeds: {adaptive: {batch: 8, max_batches: 4, alpha: 0.05}}``, these
being the defaults) buys seeds until the entry's verdict against its reference is decided: the
entry runs ``batch`` seeds, then another ``batch`` while no side is found, at most
``max_batches`` times, each look at ``alpha / max_batches`` (`bench_judge.sequential_verdict`;
`jaxrl.studies.adaptive.grow_entry`). It needs a reference.

Every number is finite and whole where it counts (``seeds: .inf`` or ``total_steps: 1e400`` is
one line), the root ``seed`` and ``env_kwargs`` are checked as `jaxrl.train` checks them
(`jaxrl.run_args.check_run_args`; an env option that counts, ``episode_length`` ..., a whole
number in range: `envs.options`), and entry names are unique.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from pathlib import Path
from typing import Any

from envs.options import EnvOptionError
from envs.options import checked as checked_env_options
from jaxrl import named_yaml, presets
from jaxrl.config import ConfigError, shown
from jaxrl.measures import MEASURES
from jaxrl.repo_data import SUITES_DIR
from jaxrl.run_args import check_run_args
from jaxrl.studies.bench.judge import ADAPTIVE_DEFAULTS, ENTRY_ENGINE_DEFAULTS

_ENTRY_KEYS = {"algo", "env", "total_steps", "seeds", "config", "preset", "reference", "name",
               "eval_episodes", "env_kwargs", "floor"}
_FLOOR_KEYS = {"value", "source"}
_REFERENCE_KEYS = {"value", "measure", "source", "budget", "note", "seeds", "uncertainty"}
# The other engine options (those an entry's config may set: `ENTRY_ENGINE_DEFAULTS`), and where
# a suite sets them instead.
_ENGINE_ELSEWHERE = {"seed": "the suite's 'seed'", "eval_episodes": "the entry's 'eval_episodes'",
                     "env_kwargs": "the entry's 'env_kwargs'",
                     "checkpoint_every": "`jaxrl bench --checkpoint-every`",
                     "shard_seeds": "the engine alone (seeds are split over all devices)",
                     "memory_check": "the engine alone (the memory plan is always checked)"}


class SuiteError(ConfigError):
    """A suite file that cannot be used; the message names the file and the entry."""


@dataclasses.dataclass(frozen=True)
class Entry:
    """One benchmark entry: ``algo`` on ``env`` for ``total_steps`` env steps per seed."""

    name: str
    algo: str
    env: str
    total_steps: int
    seeds: int
    config: dict
    reference: dict | None
    eval_episodes: int
    env_kwargs: dict | None = None
    adaptive: dict | None = None  # seeds: adaptive -> {batch, max_batches, alpha}
    floor: dict | None = None  # the random policy's return: {value, source}

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class Suite:
    name: str
    title: str
    note: str
    path: str
    seed: int
    entries: tuple[Entry, ...]


def suite_path(name_or_path: str) -> Path:
    """A suite by name (``experiments/benchmarks/NAME.yaml``) or by path."""
    return named_yaml.find(name_or_path, SUITES_DIR, "suite", SuiteError)


def load_suite(name_or_path: str) -> Suite:
    """Parse and check a suite file: a bounded file (`jaxrl.named_yaml`: size, aliases).
    Every problem is one `SuiteError` line naming the entry."""
    path = suite_path(name_or_path)
    raw = named_yaml.read(path, "suite", SuiteError)
    if not isinstance(raw, dict) or not isinstance(raw.get("entries"), list) or not raw["entries"]:
        raise SuiteError(f"suite {str(path)!r} needs a non-empty 'entries' list")
    name = str(raw.get("name") or path.stem)
    seeds = raw.get("seeds", 4)  # a number, or an adaptive plan every entry takes
    if _adaptive(seeds, f"{path.name}: seeds") is None:
        seeds = _positive_int(seeds, f"{path.name}: seeds")
    eval_episodes = _positive_int(raw.get("eval_episodes", 16), f"{path.name}: eval_episodes")
    entries = [_entry(e, i, path.name, seeds, eval_episodes) for i, e in enumerate(raw["entries"])]
    duplicates = sorted(n for n, count in Counter(e.name for e in entries).items() if count > 1)
    if duplicates:
        raise SuiteError(f"{path.name}: duplicate entry names {duplicates}; give them a 'name'")
    return Suite(name=name, title=str(raw.get("title") or name), note=str(raw.get("note") or ""),
                 path=str(path), seed=_root_seed(raw.get("seed", 0), path.name),
                 entries=tuple(entries))


def _positive_int(value, what: str) -> int:
    """A whole number >= 1 (``1e6`` as text is fine, as YAML reads it); `SuiteError` else,
    infinities and numbers past a float's range included."""
    try:
        number = int(float(value))
        whole = number == float(value)
    except (TypeError, ValueError, OverflowError):
        whole = False
    if not whole or number < 1:
        raise SuiteError(f"{what} must be a positive integer, got {shown(value)}")
    return number


def _root_seed(value, file: str) -> int:
    """The suite's root ``seed``, checked as `train` checks it (`check_run_args`)."""
    try:
        check_run_args(seed=value)
    except ConfigError as err:
        raise SuiteError(f"{file}: {err}") from None
    return int(value)


def _entry(raw: Any, index: int, file: str, seeds: Any, eval_episodes: int) -> Entry:
    where = f"{file}: entry {index + 1}"
    if not isinstance(raw, dict):
        raise SuiteError(f"{where} must be a mapping with algo, env and total_steps")
    unknown = set(raw) - _ENTRY_KEYS
    if unknown:
        raise SuiteError(f"{where}: unknown keys {sorted(unknown)}; valid: {sorted(_ENTRY_KEYS)}")
    missing = [k for k in ("algo", "env", "total_steps") if k not in raw]
    if missing:
        raise SuiteError(f"{where}: missing {', '.join(missing)}")
    algo, env = str(raw["algo"]).lower(), str(raw["env"])
    where = f"{file}: entry {index + 1} ({algo} on {env})"
    config = raw.get("config") or {}
    if not isinstance(config, dict):
        raise SuiteError(f"{where}: config must be a mapping of overrides")
    if raw.get("preset") is not None:
        config = _preset(raw, algo, where)
    config = _engine_keys(config, where)
    reference = raw.get("reference")
    if reference is not None:
        reference = _reference(reference, where)
    try:
        check_run_args(env_kwargs=raw.get("env_kwargs"))
        env_kwargs = checked_env_options(env, raw.get("env_kwargs"))
    except (ConfigError, EnvOptionError) as err:
        raise SuiteError(f"{where}: {err}") from None
    adaptive = _adaptive(raw.get("seeds", seeds), where)
    if adaptive is not None and reference is None:
        raise SuiteError(f"{where}: seeds: adaptive decides against a reference; give one")
    return Entry(name=str(raw.get("name") or f"{algo}/{env}"), algo=algo, env=env,
                 total_steps=_positive_int(raw["total_steps"], f"{where}: total_steps"),
                 seeds=(adaptive["batch"] if adaptive is not None else
                        _positive_int(raw.get("seeds", seeds), f"{where}: seeds")),
                 adaptive=adaptive,
                 config=dict(config), reference=reference,
                 eval_episodes=_positive_int(raw.get("eval_episodes", eval_episodes),
                                             f"{where}: eval_episodes"),
                 env_kwargs=env_kwargs,
                 floor=None if raw.get("floor") is None else _floor(raw["floor"], where))


def _floor(raw: Any, where: str) -> dict:
    """An entry's ``floor`` (the random policy's return, measured the entry's way): ``{value,
    source}``, the value finite."""
    if not isinstance(raw, dict) or set(raw) != _FLOOR_KEYS:
        raise SuiteError(f"{where}: floor must be a mapping of exactly {sorted(_FLOOR_KEYS)}")
    return {"value": _finite(raw["value"], f"{where}: floor value"), "source": str(raw["source"])}


def _engine_keys(config: dict, where: str) -> dict:
    """``config`` with the engine options it sets checked (those `ENTRY_ENGINE_DEFAULTS` names:
    whole numbers, ``eval_sample`` a switch); `SuiteError` for one a suite sets elsewhere."""
    elsewhere = sorted(set(config) & set(_ENGINE_ELSEWHERE))
    if elsewhere:
        key = elsewhere[0]
        raise SuiteError(f"{where}: config: {key} is set by {_ENGINE_ELSEWHERE[key]}")
    return {k: (_engine_value(k, v, f"{where}: config: {k}") if k in ENTRY_ENGINE_DEFAULTS
                else v) for k, v in config.items()}


def _engine_value(key: str, value, where: str):
    """An engine option an entry sets: ``eval_sample`` a switch, the others whole numbers."""
    if key != "eval_sample":
        return _positive_int(value, where)
    if not isinstance(value, bool):
        raise SuiteError(f"{where} must be true or false, got {value!r}")
    return value


def _adaptive(raw: Any, where: str) -> dict | None:
    """``seeds: adaptive`` or ``{adaptive: {batch, max_batches, alpha}}`` as the full mapping
    (`ADAPTIVE_DEFAULTS` filled in); None for a number of seeds."""
    if raw == "adaptive":
        raw = {"adaptive": {}}
    if not isinstance(raw, dict):
        return None
    if set(raw) != {"adaptive"} or not isinstance(raw["adaptive"] or {}, dict):
        raise SuiteError(f"{where}: seeds must be a number, 'adaptive' or {{adaptive: {{batch, "
                         f"max_batches, alpha}}}}, got {shown(raw)}")
    given = raw["adaptive"] or {}
    unknown = set(given) - set(ADAPTIVE_DEFAULTS)
    if unknown:
        raise SuiteError(f"{where}: unknown seeds.adaptive keys {sorted(unknown)}; valid: "
                         f"{sorted(ADAPTIVE_DEFAULTS)}")
    out = {**ADAPTIVE_DEFAULTS, **given}
    batch = _positive_int(out["batch"], f"{where}: seeds.adaptive.batch")
    looks = _positive_int(out["max_batches"], f"{where}: seeds.adaptive.max_batches")
    alpha = _finite(out["alpha"], f"{where}: seeds.adaptive.alpha")
    if batch < 2 or not 0.0 < alpha < 1.0:
        raise SuiteError(f"{where}: seeds.adaptive needs batch >= 2 and 0 < alpha < 1, got "
                         f"batch {batch}, alpha {shown(alpha)}")
    return {"batch": batch, "max_batches": looks, "alpha": alpha}


def with_batch(plan: dict, seeds: Any, where: str) -> dict:
    """An entry's adaptive ``plan`` with ``seeds`` as its batch (`jaxrl bench --seeds`), checked
    by the rule of the suite file's own ``seeds.adaptive`` (`SuiteError`: batch >= 2)."""
    return _adaptive({"adaptive": {**plan, "batch": seeds}}, where)


def _preset(raw: dict, algo: str, where: str) -> dict:
    """The entry's preset's keys under its config overrides (`jaxrl.presets.entry_config`);
    the preset must be one of ``algo``'s."""
    name = str(raw["preset"])
    if name.split("/")[0] != algo:
        raise SuiteError(f"{where}: preset {name!r} is not one of {algo}'s (ALGO/NAME)")
    try:
        return presets.entry_config(raw)
    except presets.PresetError as err:
        raise SuiteError(f"{where}: {err}") from None


def _reference(raw: Any, where: str) -> dict:
    if not isinstance(raw, dict):
        raise SuiteError(f"{where}: reference must be a mapping (value, measure, source, budget)")
    unknown = set(raw) - _REFERENCE_KEYS
    if unknown:
        raise SuiteError(f"{where}: unknown reference keys {sorted(unknown)}; "
                         f"valid: {sorted(_REFERENCE_KEYS)}")
    for key in ("value", "measure", "source"):
        if key not in raw:
            raise SuiteError(f"{where}: reference needs {key!r}")
    value = _finite(raw["value"], f"{where}: reference value")
    budget = raw.get("budget")
    if budget is not None and not _finite(budget, f"{where}: reference budget") > 0:
        raise SuiteError(f"{where}: reference budget must be > 0, got {shown(budget)}")
    uncertainty = raw.get("uncertainty")
    if uncertainty is not None and not _finite(uncertainty, f"{where}: reference uncertainty") >= 0:
        raise SuiteError(f"{where}: reference uncertainty must be >= 0, got {shown(uncertainty)}")
    if raw["measure"] not in MEASURES:
        raise SuiteError(f"{where}: reference measure {raw['measure']!r} is not one of "
                         f"{', '.join(MEASURES)}")
    return {**raw, "value": value}


def _finite(value, what: str) -> float:
    """``float(value)``, a finite number; `SuiteError` else (``.inf``, ``1e400`` as text, an
    integer past a float's range)."""
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        number = math.nan
    if not math.isfinite(number):
        raise SuiteError(f"{what} must be a finite number, got {shown(value)}")
    return number

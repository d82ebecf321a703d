"""Benchmark suites: entries of (algorithm, env, budget, seeds, overrides) run against published
references, each entry one recorded multi-seed run.

    suite   = load_suite("classic")                     # experiments/benchmarks/classic.yaml
    entries = select(suite, only, seeds, budget_scale)  # smoke runs scale the budget down
    bench   = bench id (suite + what was selected to run) and its manifest in the run store
    for entry in entries:
        skip it if the store has a finished run of this bench id and entry
        train(algo, env, seeds, steps, meta={bench_id, bench_entry}, **overrides)
    report  = jaxrl.runs.bench_report.build(bench id)   # IQM [95% CI] beside each reference

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
        seeds: 16                            # optional, overrides the suite's
        preset: ppo/baselines-mujoco         # optional: a named preset's keys (jaxrl.presets)
        config: {learning_rate: 3.0e-4}      # optional config overrides (on the preset's)
        reference:                           # optional
          value: 492.4
          measure: train_last100             # how it was measured (jaxrl.measures.MEASURES)
          source: CleanRL ppo.py benchmark (3 seeds)
          budget: 500000                     # the reference's env steps
          note: anything else worth knowing

Each entry's request (algorithm, env, budget after ``--budget-scale``, seeds, root seed,
overrides, evaluation episodes) has a key; a stored bench run with that key finishes the entry,
so re-running a suite after a kill, piece by piece with ``--only``, or after editing some of
its entries trains only what is missing. The bench id is the suite name plus a digest of the
entries' names and keys (not of ``--only``, not of the references).
"""

from __future__ import annotations

import dataclasses
import fnmatch
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from jaxrl import algos, named_yaml, presets
from jaxrl.api import resume, train
from jaxrl.bench_ray import run_entries
from jaxrl.config import ConfigError, check_run_args
from jaxrl.engine import programs
from jaxrl.engine.spec import resolve
from jaxrl.measures import MEASURES
from jaxrl.runs import bench_report
from jaxrl.runs.store import Run, RunStore
from jaxrl.trained.results import NonFiniteMetricError

SUITES_DIR = Path(__file__).resolve().parents[1] / "experiments" / "benchmarks"
_ENTRY_KEYS = {"algo", "env", "total_steps", "seeds", "config", "preset", "reference", "name",
               "eval_episodes", "env_kwargs"}
_REFERENCE_KEYS = {"value", "measure", "source", "budget", "note", "seeds"}


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
    """Parse and check a suite file. Every problem is one `SuiteError` line naming the entry."""
    path = suite_path(name_or_path)
    raw = named_yaml.read(path, "suite", SuiteError)
    if not isinstance(raw, dict) or not isinstance(raw.get("entries"), list) or not raw["entries"]:
        raise SuiteError(f"suite {str(path)!r} needs a non-empty 'entries' list")
    name = str(raw.get("name") or path.stem)
    seeds = _positive_int(raw.get("seeds", 4), f"{path.name}: seeds")
    eval_episodes = _positive_int(raw.get("eval_episodes", 16), f"{path.name}: eval_episodes")
    entries = [_entry(e, i, path.name, seeds, eval_episodes) for i, e in enumerate(raw["entries"])]
    names = [e.name for e in entries]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise SuiteError(f"{path.name}: duplicate entry names {duplicates}; give them a 'name'")
    return Suite(name=name, title=str(raw.get("title") or name), note=str(raw.get("note") or ""),
                 path=str(path), seed=int(raw.get("seed", 0)), entries=tuple(entries))


def _positive_int(value, what: str) -> int:
    try:
        number = int(float(value))
    except (TypeError, ValueError):
        raise SuiteError(f"{what} must be a positive integer, got {value!r}") from None
    if number < 1 or number != float(value):
        raise SuiteError(f"{what} must be a positive integer, got {value!r}")
    return number


def _entry(raw: Any, index: int, file: str, seeds: int, eval_episodes: int) -> Entry:
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
    reference = raw.get("reference")
    if reference is not None:
        reference = _reference(reference, where)
    return Entry(name=str(raw.get("name") or f"{algo}/{env}"), algo=algo, env=env,
                 total_steps=_positive_int(raw["total_steps"], f"{where}: total_steps"),
                 seeds=_positive_int(raw.get("seeds", seeds), f"{where}: seeds"),
                 config=dict(config), reference=reference,
                 eval_episodes=_positive_int(raw.get("eval_episodes", eval_episodes),
                                             f"{where}: eval_episodes"),
                 env_kwargs=raw.get("env_kwargs"))


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
    try:
        value = float(raw["value"])
    except (TypeError, ValueError):
        raise SuiteError(f"{where}: reference value must be a number, got {raw['value']!r}") from None
    if raw["measure"] not in MEASURES:
        raise SuiteError(f"{where}: reference measure {raw['measure']!r} is not one of "
                         f"{', '.join(MEASURES)}")
    return {**raw, "value": value}


# -- selecting ----------------------------------------------------------------------------------
def matches(name: str, patterns: list[str] | None) -> bool:
    """Glob patterns (``ppo/*Breakout*``); a pattern with no wildcard matches as a substring."""
    if not patterns:
        return True
    return any(fnmatch.fnmatchcase(name, p) if any(c in p for c in "*?[") else p in name
               for p in patterns)


def scaled(entry: Entry, seeds: int | None, budget_scale: float) -> Entry:
    """The entry with ``seeds`` (if given) and its budget times ``budget_scale``, never below
    one update of its config."""
    steps = entry.total_steps
    if budget_scale != 1.0:
        try:
            config = algos.get(entry.algo).default_config(entry.env).replace(**entry.config)
        except ValueError as err:
            raise SuiteError(f"{entry.name}: {err}") from None
        steps = max(round(steps * budget_scale), config.steps_per_update)
    return dataclasses.replace(entry, seeds=int(seeds or entry.seeds), total_steps=int(steps))


def entry_key(entry: Entry, seed: int) -> str:
    """What the entry runs (algorithm, env, budget, seeds, root seed, overrides, evaluation),
    digested: a stored run with the same key finishes this entry (`bench_report.spec_key`)."""
    return bench_report.spec_key({**entry.to_dict(), "seed": seed})


def bench_id(suite: Suite, entries: list[Entry], budget_scale: float) -> str:
    """``<suite>-<digest>`` of the entries' keys and names: not of the selection (``--only``)
    and not of the references (correcting a reference's source keeps the bench)."""
    del budget_scale  # already in each entry's total_steps
    payload = json.dumps(sorted((e.name, entry_key(e, suite.seed)) for e in entries))
    return f"{suite.name}-{hashlib.sha1(payload.encode()).hexdigest()[:8]}"


# -- running ------------------------------------------------------------------------------------
@dataclasses.dataclass
class BenchResult:
    bench_id: str
    report_dir: str
    ran: list[str]  # entry names trained now
    skipped: list[str]  # entry names already finished in the store
    failed: dict[str, str]  # entry name -> message
    table: Any  # pandas DataFrame, one row per entry (see `bench_report.entry_rows`)


def bench(suite: str, only: list[str] | str | None = None, seeds: int | None = None,
          budget_scale: float = 1.0, runs_dir: str | None = None, progress: bool = True,
          out: str | None = None, command: list[str] | None = None,
          checkpoint_every: int | None = None, backend: str = "local",
          address: str | None = None, cpus_per_task: float = 1, gpus_per_task: float = 0,
          checkpoint_dir: str | None = None) -> BenchResult:
    """Run the entries of ``suite`` (a name under ``experiments/benchmarks/`` or a YAML path)
    that match ``only`` (glob patterns over entry names such as ``ppo/CartPole-v1``), each as
    one recorded run of ``seeds`` seeds (default: the suite's), with budgets times
    ``budget_scale``. Entries this bench already finished are skipped. Writes the report
    (``report.md``, ``results.json``, ``curves.png``) to the bench folder of the run store and,
    with ``out``, to that folder too. With ``checkpoint_every`` (chunks) each entry's run is
    checkpointed, and a later call resumes an interrupted entry from its newest checkpoint
    instead of training it again (a killed process, a session that ran out of time).

    ``backend="ray"``: every entry to run is a Ray task (`jaxrl.backends.ray`, ``address``,
    ``cpus_per_task``, ``gpus_per_task``), recorded as soon as it ends; its worker checkpoints
    every chunk into ``checkpoint_dir`` (default: the bench's folder of the run store), so a
    retried task, or the same bench run again, resumes the entry from there."""
    if backend not in ("local", "ray"):
        raise ConfigError(f"unknown backend {backend!r}; use 'local' or 'ray'")
    if seeds is not None:  # None: the suite's
        check_run_args(seeds=seeds)
    if not budget_scale > 0:
        raise ConfigError(f"budget_scale must be > 0, got {budget_scale}")
    patterns = [only] if isinstance(only, str) else list(only or [])
    spec = load_suite(suite)
    entries = [scaled(e, seeds, float(budget_scale)) for e in spec.entries]
    chosen = [e for e in entries if matches(e.name, patterns)]
    if not chosen:
        raise SuiteError(f"no entry of suite {spec.name!r} matches {patterns}; entries: "
                         + ", ".join(e.name for e in entries))
    validate(spec, chosen)  # every selected entry, before anything runs
    store = RunStore(runs_dir)
    store.ensure_writable()
    bid = bench_id(spec, entries, float(budget_scale))
    bench_report.write_manifest(store, bid, {
        "bench_id": bid, "suite": spec.name, "title": spec.title, "note": spec.note,
        "suite_path": spec.path, "seed": spec.seed, "budget_scale": float(budget_scale),
        "entries": [{**e.to_dict(), "key": entry_key(e, spec.seed)} for e in entries]})
    latest = bench_report.bench_runs(store, bid)
    done = bench_report.finished_entries(store, bid)
    ran, skipped, failed = [], [], {}
    trained = set()  # request keys run by this call (two entries may share one, see bench_runs)
    remote = []  # entries for Ray
    for entry in chosen:
        key = entry_key(entry, spec.seed)
        if key in trained:
            skipped.append(entry.name)
            _say(progress, f"bench {bid}: {entry.name} is the same request as an entry just run, "
                           "skipped")
            continue
        trained.add(key)
        if entry.name in done:
            skipped.append(entry.name)
            _say(progress, f"bench {bid}: {entry.name} already finished "
                           f"(run {done[entry.name]}), skipped")
            continue
        if backend == "ray":
            remote.append(entry)
            continue
        try:
            if resumable(store, latest.get(entry.name)):
                run_id = latest[entry.name]["run_id"]
                _say(progress, f"bench {bid}: {entry.name}, resuming run {run_id}")
                resume(run_id, runs_dir=str(store.root), progress=progress)
                ran.append(entry.name)
                continue
            _say(progress, f"bench {bid}: {entry.name}, {entry.seeds} seeds x "
                           f"{entry.total_steps:,} env steps")
            train(entry.algo, env=entry.env, seeds=entry.seeds, total_steps=entry.total_steps,
                  seed=spec.seed, eval_episodes=entry.eval_episodes, env_kwargs=entry.env_kwargs,
                  runs_dir=str(store.root), progress=progress,
                  command=command if command is not None else list(sys.argv),
                  meta={"bench_id": bid, "bench_entry": entry.name},
                  checkpoint_every=checkpoint_every, **entry.config)
            ran.append(entry.name)
        except NonFiniteMetricError as err:
            failed[entry.name] = str(err)
        finally:
            programs.forget()  # no other entry uses this one's programs
    if remote:
        done_now, failed_now = run_entries(
            remote, [entry_key(e, spec.seed) for e in remote], spec.seed, store, bid,
            command if command is not None else list(sys.argv),
            progress=progress, checkpoint_root=checkpoint_dir,
            ray={"address": address, "num_cpus": cpus_per_task, "num_gpus": gpus_per_task})
        ran += done_now
        failed.update(failed_now)
    report_dir = bench_report.write(store, bid, out=out)
    return BenchResult(bid, str(report_dir), ran, skipped, failed,
                       bench_report.entry_table(store, bid))


def resumable(store: RunStore, meta: dict | None) -> bool:
    """Whether a stored bench run can be continued: interrupted, with checkpoints on disk."""
    if not meta or meta.get("status") != "interrupted":
        return False
    folder = Run(store.root / meta["run_id"], meta).checkpoint_dir
    return folder is not None and folder.is_dir() and any(folder.iterdir())


def validate(spec: Suite, entries: list[Entry]) -> None:
    """Resolve every entry (algorithm, env, config keys and values, budget) without training;
    the first bad one raises `SuiteError` naming the suite file and the entry."""
    for e in entries:
        try:
            resolve(e.algo, e.env, e.total_steps, e.seeds, e.env_kwargs, **e.config)
        except ValueError as err:
            raise SuiteError(f"{Path(spec.path).name}: {e.name}: {err}") from None


def _say(enabled: bool, text: str) -> None:
    if enabled:
        print(text, file=sys.stderr, flush=True)

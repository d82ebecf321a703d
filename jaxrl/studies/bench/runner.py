"""Benchmark suites: entries of (algorithm, env, budget, seeds, overrides) run against published
references, each entry one recorded multi-seed run.

    suite   = load_suite("classic")                     # experiments/benchmarks/classic.yaml
    entries = select(suite, only, seeds, budget_scale)  # smoke runs scale the budget down
    bench   = bench id (suite + what was selected to run) and its manifest in the run store
    for entry in entries:
        skip it if the store has a finished run of this bench id and entry
        train(algo, env, seeds, steps, meta={bench_id, bench_entry}, **overrides)
    report  = jaxrl.studies.bench.report.build(bench id)   # IQM [95% CI] beside each reference

A suite is YAML (`jaxrl.studies.bench.suite`, where it is read and checked).

Each entry's request (algorithm, env, budget after ``--budget-scale``, seeds, root seed,
overrides, evaluation episodes) has a key; a stored bench run with that key finishes the entry,
so re-running a suite after a kill, piece by piece with ``--only``, or after editing some of
its entries trains only what is missing. The bench id is the suite name plus a digest of the
entries' names and keys (not of ``--only``, not of the references). An entry is trained while
its claim is held (a lock file of the bench, `jaxrl.runs.run_lock.claim`): a second bench of the
suite into the same store trains the other entries first, then waits for the first process's
and skips those it finished, so two benches of two entries make two runs, not four.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fnmatch
import functools
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from jaxrl import algos
from jaxrl.api import resume, train
from jaxrl.config import ConfigError
from jaxrl.engine import programs, resumption
from jaxrl.engine.spec import engine_options, resolve
from jaxrl.run_args import check_run_args
from jaxrl.runs.run_lock import claim, holder
from jaxrl.runs.store import Run, RunStore
from jaxrl.studies.adaptive import grow_entry
from jaxrl.studies.bench import carry
from jaxrl.studies.bench import report as bench_report
from jaxrl.studies.bench.remote import run_entries
from jaxrl.studies.bench.suite import (  # noqa: F401  (re-exported: the suite file's types and reader)
    SUITES_DIR,
    Entry,
    Suite,
    SuiteError,
    load_suite,
    suite_path,
    with_batch,
)
from jaxrl.trained.results import NonFiniteMetricError


# -- selecting ----------------------------------------------------------------------------------
def matches(name: str, patterns: list[str] | None, names: tuple[str, ...] = ()) -> bool:
    """Glob patterns (``ppo/*Breakout*``); a pattern with no wildcard matches as a substring,
    unless it is the whole name of one of the suite's entries (``names``): then it is that
    entry alone (``ppo/playground:CartpoleBalance`` is not also ``...CartpoleBalanceSparse``)."""
    if not patterns:
        return True
    return any(fnmatch.fnmatchcase(name, p) if any(c in p for c in "*?[")
               else (p == name if p in names else p in name) for p in patterns)


def scaled(entry: Entry, seeds: int | None, budget_scale: float) -> Entry:
    """The entry with ``seeds`` (if given; an adaptive entry's batch, which the suite file's
    rule holds to >= 2) and its budget times ``budget_scale``, never below one update of its
    config."""
    steps = entry.total_steps
    if budget_scale != 1.0:
        try:
            config = algos.get(entry.algo).default_config(entry.env).replace(
                **engine_options(entry.config)[1])  # the engine's keys are no config's
        except ValueError as err:
            raise SuiteError(f"{entry.name}: {err}") from None
        steps = max(round(steps * budget_scale), config.steps_per_update)
    adaptive = entry.adaptive if entry.adaptive is None or not seeds else with_batch(
        entry.adaptive, seeds, f"--seeds {seeds} (the batch of {entry.name}'s seeds: adaptive)")
    return dataclasses.replace(entry, seeds=int(seeds or entry.seeds), total_steps=int(steps),
                               adaptive=adaptive)


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
          checkpoint_dir: str | None = None, resume_from: str | None = None) -> BenchResult:
    """Run the entries of ``suite`` (a name under ``experiments/benchmarks/`` or a YAML path)
    that match ``only`` (glob patterns over entry names such as ``ppo/CartPole-v1``), each as
    one recorded run of ``seeds`` seeds (default: the suite's), with budgets times
    ``budget_scale``. Entries this bench already finished are skipped. Writes the report
    (``report.md``, ``results.json``, ``curves.png``) to the bench folder of the run store and,
    with ``out``, to that folder too. With ``checkpoint_every`` (chunks) each entry's run is
    checkpointed, and a later call resumes an interrupted entry from its newest checkpoint
    instead of training it again (a killed process, a session that ran out of time).

    ``resume_from``: a folder of the bench's progress (`jaxrl.studies.bench.carry`), small
    enough to commit: its runs the store lacks are copied in first (an interrupted one then
    resumes from its checkpoint, on this machine or any other), and the folder is kept up to
    date as the bench goes (after a checkpoint, at most once a minute, and after each entry).

    ``backend="ray"``: every entry to run is a Ray task (`jaxrl.studies.ray`, ``address``,
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
    names = tuple(e.name for e in entries)
    chosen = [e for e in entries if matches(e.name, patterns, names)]
    if not chosen:
        raise SuiteError(f"no entry of suite {spec.name!r} matches {patterns}; entries: "
                         + ", ".join(e.name for e in entries))
    validate(spec, chosen)  # every selected entry, before anything runs
    store = RunStore(runs_dir)
    store.ensure_writable()
    if resume_from is not None:
        carried = carry.load(resume_from, store)
        if carried:
            _say(progress, f"bench: {len(carried)} run(s) carried in from {resume_from}")
    bid = bench_id(spec, entries, float(budget_scale))
    bench_report.write_manifest(store, bid, {
        "bench_id": bid, "suite": spec.name, "title": spec.title, "note": spec.note,
        "suite_path": spec.path, "seed": spec.seed, "budget_scale": float(budget_scale),
        "entries": [{**e.to_dict(), "key": entry_key(e, spec.seed)} for e in entries]})
    done = bench_report.finished_entries(store, bid)
    ran, skipped, failed = [], [], {}
    trained = set()  # request keys run by this call (two entries may share one, see bench_runs)
    local, remote = [], []  # entries to train here, and on Ray
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
        (remote if backend == "ray" else local).append(entry)
    train_here = functools.partial(
        _train_claimed, store, bid, spec, progress=progress, tally=(ran, skipped, failed),
        command=command if command is not None else list(sys.argv),
        checkpoint_every=checkpoint_every)
    mirror = carry.Mirror(store, bid, resume_from) if resume_from is not None else None
    with carried_along(mirror):
        waiting = []  # entries another process was training when this one reached them
        for entry in local:
            if not train_here(entry, wait=False):
                waiting.append(entry)
        for entry in waiting:
            _say(progress, f"bench {bid}: waiting for the process training {entry.name}")
            train_here(entry, wait=True)
    if remote:
        done_now, failed_now = run_entries(
            remote, [entry_key(e, spec.seed) for e in remote], spec.seed, store, bid,
            command if command is not None else list(sys.argv),
            progress=progress, checkpoint_root=checkpoint_dir,
            ray={"address": address, "num_cpus": cpus_per_task, "num_gpus": gpus_per_task})
        ran += done_now
        failed.update(failed_now)
    for entry in chosen:
        if entry.adaptive is not None and entry.name not in failed:
            _grow_claimed(store, bid, spec, entry, progress=progress, ran=ran)
    report_dir = bench_report.write(store, bid, out=out)
    return BenchResult(bid, str(report_dir), ran, skipped, failed,
                       bench_report.entry_table(store, bid))


@contextlib.contextmanager
def carried_along(mirror: carry.Mirror | None):
    """While training, ``mirror`` (if any) saves the bench's progress after checkpoints; it
    saves once more however the block ends (an entry's error, Ctrl-C)."""
    if mirror is None:
        yield
        return
    resumption.AFTER_CHECKPOINT.append(mirror)
    try:
        yield
    finally:
        resumption.AFTER_CHECKPOINT.remove(mirror)
        mirror.flush()


def _train_claimed(store: RunStore, bid: str, spec: Suite, entry: Entry, *, wait: bool,
                   progress: bool, tally: tuple, command: list,
                   checkpoint_every: int | None) -> bool:
    """Train (or resume) ``entry`` here while holding its claim (`jaxrl.runs.run_lock.claim`),
    so two benches of one suite into one store never train an entry twice; skip it if a run
    finished it meanwhile (another bench). False, at once, when another process holds the
    claim and not ``wait``. ``tally``: the ``(ran, skipped, failed)`` it adds the entry to."""
    ran, skipped, failed = tally
    path = bench_report.claim_path(store, bid, entry_key(entry, spec.seed))
    with claim(path, wait) as held:
        if not held:
            _say(progress, f"bench {bid}: {entry.name} is being trained by {holder(path)}; "
                           "the other entries first")
            return False
        meta = bench_report.bench_runs(store, bid).get(entry.name)  # as of now, claim held
        try:
            if meta and meta.get("status") == "finished":
                skipped.append(entry.name)
                _say(progress, f"bench {bid}: {entry.name} finished by another process "
                               f"(run {meta['run_id']}), skipped")
            elif resumable(store, meta):
                _say(progress, f"bench {bid}: {entry.name}, resuming run {meta['run_id']}")
                resume(meta["run_id"], runs_dir=str(store.root), progress=progress)
                ran.append(entry.name)
            else:
                _say(progress, f"bench {bid}: {entry.name}, {entry.seeds} seeds x "
                               f"{entry.total_steps:,} env steps")
                train(entry.algo, env=entry.env, seeds=entry.seeds,
                      total_steps=entry.total_steps, seed=spec.seed,
                      eval_episodes=entry.eval_episodes, env_kwargs=entry.env_kwargs,
                      runs_dir=str(store.root), progress=progress, command=command,
                      meta={"bench_id": bid, "bench_entry": entry.name},
                      checkpoint_every=checkpoint_every, **entry.config)
                ran.append(entry.name)
        except NonFiniteMetricError as err:
            failed[entry.name] = str(err)
        finally:
            programs.forget()  # no other entry uses this one's programs
    return True


def _grow_claimed(store: RunStore, bid: str, spec: Suite, entry: Entry, *, progress: bool,
                  ran: list) -> None:
    """An entry with ``seeds: adaptive`` whose first batch finished: add batches of seeds until
    its verdict is decided or the cap (`jaxrl.studies.adaptive.grow_entry`), holding its claim."""
    with claim(bench_report.claim_path(store, bid, entry_key(entry, spec.seed)), True):
        meta = bench_report.bench_runs(store, bid).get(entry.name)
        if not meta or meta.get("status") != "finished":
            return
        reference = entry.reference or {}
        found = grow_entry(meta["run_id"], store, entry.adaptive, float(reference["value"]),
                           reference.get("measure", "final_eval"), progress=progress)
        programs.forget()
        _say(progress, f"bench {bid}: {entry.name} (seeds: adaptive): {found}")
        if entry.name not in ran:
            ran.append(entry.name)


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
            resolve(e.algo, e.env, e.total_steps, e.seeds, e.env_kwargs,
                    **engine_options(e.config)[1])
        except ValueError as err:
            raise SuiteError(f"{Path(spec.path).name}: {e.name}: {err}") from None


def _say(enabled: bool, text: str) -> None:
    if enabled:
        print(text, file=sys.stderr, flush=True)

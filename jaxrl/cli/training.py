"""The commands that train: ``train``, ``sweep``, ``bench``, ``resume``, ``probe``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from jaxrl import named_yaml, platform, stats
from jaxrl.api import resume, train
from jaxrl.cli.common import (
    UsageError,
    bench_view,
    check_writable,
    parse_env_args,
    parse_sets,
    print_frame,
    print_result,
    result_json,
    run_overrides,
    write_json,
)
from jaxrl.measures import MEASURES
from jaxrl.output_paths import check_folder
from jaxrl.runs.files import finite_or_none
from jaxrl.runs.provenance import measured_here
from jaxrl.runs.store import RunStore
from jaxrl.studies import adaptive
from jaxrl.studies.bench.runner import bench
from jaxrl.studies.probe import PROBE_STEPS, run_ladder
from jaxrl.studies.sweep.runner import format_table, parse_grid, parse_random, sweep
from jaxrl.trained.results import NonFiniteMetricError


# -- train, sweep, bench, resume --------------------------------------------------------------------------------------
def cmd_train(args) -> int:
    check_writable(args.json)
    overrides = run_overrides(args)
    if getattr(args, "whole_process", False):  # not inside a session that trains more
        platform.one_device_for_one_member(args.seeds)
    about = measured_here() if args.json else None  # the code loaded, as the run starts
    try:
        result = train(args.algo, env=args.env, seeds=args.seeds, total_steps=args.total_steps,
                       seed=args.seed, progress=not args.no_progress,
                       eval_episodes=args.eval_episodes, store=not args.no_store,
                       runs_dir=args.runs_dir, command=["jaxrl", *sys.argv[1:]],
                       **_driver_options(args), **overrides)
    except NonFiniteMetricError as err:
        where = f" (run kept in {err.result.run_dir})" if err.result.run_dir else ""
        print(f"jaxrl: {err}{where}", file=sys.stderr)
        return 1
    print_result(result)
    print_notes(result)
    write_json(args.json, {**result_json(result), "about": about})
    if result.run_dir:
        print(f"run {result.run_id}: report and curves in {result.run_dir}")
    return 0


def print_notes(result) -> None:
    """What the run could not measure (`TrainResult.notes`), one line each on stderr."""
    for note in result.notes():
        print(f"jaxrl: {note}", file=sys.stderr)


def _driver_options(args) -> dict:
    """The engine options of `train` and `sweep` from their flags."""
    if args.checkpoint_every is not None and args.checkpoint_every < 1:
        raise UsageError(f"--checkpoint-every must be >= 1 chunk, got {args.checkpoint_every}")
    if args.max_chunk_updates < 1:
        raise UsageError(f"--max-chunk-updates must be >= 1, got {args.max_chunk_updates}")
    return {"checkpoint_every": args.checkpoint_every, "max_chunk_updates": args.max_chunk_updates,
            "shard_seeds": not args.no_shard, "memory_check": not args.no_memory_check,
            "env_kwargs": parse_env_args(args.env_arg)}


_SWEPT_COST = ("compile_seconds", "run_seconds", "env_steps_per_second")


def _swept_config(overrides: dict, result, run_id: str | None, runs_dir) -> dict:
    """One config of a sweep as ``--json`` writes it: its swept values, each seed's final
    evaluation return and the program's cost, from its result if kept, else from its run's
    record in the store; only the values for a config that has neither (a failed group)."""
    if result is not None:
        returns, cost = result.final_eval_return, result.summary()
    elif isinstance(run_id, str) and run_id:  # the table holds NaN where no run was stored
        cost = RunStore(runs_dir).load(run_id)
        returns = cost.get("final_eval_return") or []
    else:
        return {"overrides": overrides}
    return {"overrides": overrides, "run_id": run_id,
            "final_eval_return": [finite_or_none(r) for r in returns],
            **{k: cost.get(k) for k in _SWEPT_COST}}


def cmd_sweep(args) -> int:
    check_writable(args.json)
    if not args.grid and not args.random:
        raise UsageError("jaxrl sweep needs at least one --grid or --random")
    about = measured_here() if args.json else None  # the code loaded, as the sweep starts
    result = sweep(args.algo, env=args.env, seeds=args.seeds, total_steps=args.total_steps,
                   grid=parse_grid(args.grid), random=parse_random(args.random),
                   trials=args.trials, seed=args.seed, store=not args.no_store,
                   runs_dir=args.runs_dir, progress=not args.no_progress,
                   command=["jaxrl", *sys.argv[1:]], resume=args.resume,
                   configs_per_group=args.configs_per_group, keep_results=False,
                   eval_episodes=args.eval_episodes, **_backend_options(args),
                   **_driver_options(args), **run_overrides(args))
    print(f"\n{args.algo} on {args.env}: {len(result.configs)} configs x {args.seeds} seeds in "
          f"{len(result.groups)} program(s); final eval return, IQM [95% CI] over seeds")
    print(format_table(result.table))
    if result.sweep_id:
        print(f"sweep {result.sweep_id}: `jaxrl runs sweep {result.sweep_id}` shows this table")
    run_of = dict(zip(result.table["config"], result.table["run_id"]))
    write_json(args.json, {"sweep_id": result.sweep_id, "algo": args.algo, "env": args.env,
                            "seeds": args.seeds, "groups": result.groups,
                            "table": result.table.to_dict(orient="records"),
                            "configs": [_swept_config(c, r, run_of.get(i), args.runs_dir)
                                        for i, (c, r) in enumerate(zip(result.configs,
                                                                       result.results))],
                            "about": about})
    if result.failures:
        failed = sorted({g for g, idx in enumerate(result.groups) for i in idx
                         if i in result.failures})
        print(f"jaxrl: {len(failed)} of {len(result.groups)} groups failed (configs "
              f"{', '.join(str(i) for i in sorted(result.failures))}):", file=sys.stderr)
        for g in failed:
            first = next(i for i in result.groups[g] if i in result.failures)
            print(f"  group {g}: {result.failures[first]}", file=sys.stderr)
        return 1
    return 0


def stored_study(args, what: str) -> None:
    """What `search` and `pbt` check first: ``--json`` writable, and the run store kept
    (``what`` they keep there)."""
    check_writable(args.json)
    if args.no_store:
        raise UsageError(f"jaxrl {args.command} keeps {what} in the run store: --no-store "
                         f"cannot be given")


def cmd_search(args) -> int:
    stored_study(args, "its study and its trials' runs")
    from jaxrl.studies.search.runner import search  # Optuna: imported by the studies that use it
    space = search_space(args.space, args.param)
    result = search(args.algo, env=args.env, space=space, trials=args.trials, batch=args.batch,
                    seeds=args.seeds, total_steps=args.total_steps, sampler=args.sampler,
                    seed=args.seed, objective=args.objective, runs_dir=args.runs_dir,
                    resume=args.resume, progress=not args.no_progress,
                    command=["jaxrl", *sys.argv[1:]], eval_episodes=args.eval_episodes,
                    prune=args.prune, **_driver_options(args), **run_overrides(args))
    shown = result.table.head(10)
    pruned = "" if args.prune is None else f", pruned {(result.table.state == 'PRUNED').sum()}"
    print(f"\n{args.algo} on {args.env}: {len(result.table)} trials x {args.seeds} seeds "
          f"({args.sampler}, batches of {args.batch}{pruned}); {args.objective}, best first")
    print_frame(shown.drop(columns=["batch"], errors="ignore"))
    print(f"best: {result.best} ({args.objective} {result.best_value:.4g})")
    print(f"search {result.search_id}: `jaxrl search ... --resume {result.search_id}` continues "
          f"it")
    write_json(args.json, {"search_id": result.search_id, "algo": args.algo, "env": args.env,
                            "best": result.best, "best_value": result.best_value,
                            "trials": result.table.to_dict(orient="records")})
    return 0


def cmd_pbt(args) -> int:
    stored_study(args, "its slots' runs and lineage")
    from jaxrl.studies.pbt.runner import pbt  # Optuna: imported by the studies that use it
    from jaxrl.studies.pbt.schedule import Rule
    rule = Rule(interval=args.interval, fraction=args.fraction,
                resample_probability=args.resample_probability, window=args.window)
    result = pbt(args.algo, env=args.env, space=search_space(args.space, args.param),
                 population=args.population, seeds=args.seeds, total_steps=args.total_steps,
                 rule=rule, seed=args.seed, runs_dir=args.runs_dir, resume=args.resume,
                 progress=not args.no_progress, command=["jaxrl", *sys.argv[1:]],
                 eval_episodes=args.eval_episodes, **_driver_options(args),
                 **run_overrides(args))
    print(f"\n{args.algo} on {args.env}: a population of {args.population} x {args.seeds} "
          f"seeds, {len(result.lineage)} exploits; per seed, the slot with the best final "
          f"training return and its final evaluation return")
    print_frame(result.final)
    returns = result.final["final_eval_return"].to_numpy(float)
    print(f"final evaluation over seeds: IQM {stats.iqm(returns):.4g}, mean "
          f"{np.nanmean(returns):.4g}")
    print(f"pbt {result.pbt_id}: lineage in the run store's pbt/{result.pbt_id}/lineage.json")
    write_json(args.json, {"pbt_id": result.pbt_id, "final": result.final.to_dict("records"),
                            "lineage": result.lineage})
    return 0


def search_space(path: str | None, params: list[str] | None) -> dict:
    """The search space of ``--space FILE`` (a YAML mapping) and every ``--param KEY=DIST``."""
    space = {}
    if path is not None:
        space = named_yaml.read(path, "--space", UsageError, unique_keys=True)
        if not isinstance(space, dict):
            raise UsageError(f"--space {path!r} is not a mapping of config fields to "
                             f"distributions")
    for item in params or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise UsageError(f"--param expects KEY=DIST, got {item!r}")
        space[key.strip()] = value.strip()
    if not space:
        raise UsageError("a search space is needed: --space FILE.yaml or --param KEY=DIST")
    return space


def _backend_options(args) -> dict:
    """Where `sweep` and `bench` run their groups, from their flags."""
    if args.cpus_per_task <= 0 or args.gpus_per_task < 0:
        raise UsageError(f"--cpus-per-task must be > 0 and --gpus-per-task >= 0, got "
                         f"{args.cpus_per_task} and {args.gpus_per_task}")
    if args.backend == "local" and (args.address or args.gpus_per_task or args.checkpoint_dir):
        raise UsageError("--address, --gpus-per-task and --checkpoint-dir need --backend ray")
    return {"backend": args.backend, "address": args.address,
            "cpus_per_task": args.cpus_per_task, "gpus_per_task": args.gpus_per_task,
            "checkpoint_dir": args.checkpoint_dir}


def cmd_bench(args) -> int:
    check_writable(args.json)
    if args.out is not None:
        check_folder(args.out, "--out")
    if args.resume_from is not None and args.backend != "local":
        raise UsageError("--resume-from needs --backend local (Ray's tasks checkpoint elsewhere)")
    if args.resume_from is not None and args.checkpoint_every is None:
        raise UsageError("--resume-from needs --checkpoint-every: an entry's progress is its "
                         "checkpoints")
    result = bench(args.suite, only=args.only, seeds=args.seeds, budget_scale=args.budget_scale,
                   runs_dir=args.runs_dir, progress=not args.no_progress, out=args.out,
                   command=["jaxrl", *sys.argv[1:]], checkpoint_every=args.checkpoint_every,
                   resume_from=args.resume_from, **_backend_options(args))
    print_frame(bench_view(result.table))
    print(f"bench {result.bench_id}: ran {len(result.ran)}, skipped {len(result.skipped)} "
          f"already finished, {len(result.failed)} failed; report in {result.report_dir}"
          + (f" and {args.out}" if args.out else ""))
    for name, message in result.failed.items():
        print(f"  {name}: {message}", file=sys.stderr)
    write_json(args.json, {"bench_id": result.bench_id, "report_dir": result.report_dir,
                            "ran": result.ran, "skipped": result.skipped,
                            "failed": result.failed,
                            "entries": result.table.to_dict(orient="records")})
    return 1 if result.failed else 0


def cmd_resume(args) -> int:
    check_writable(args.json)
    try:
        results = resume(args.run_id, runs_dir=args.runs_dir, progress=not args.no_progress)
    except NonFiniteMetricError as err:
        print(f"jaxrl: {err} (run kept in {err.result.run_dir})", file=sys.stderr)
        return 1
    for result in results:
        print_result(result)
        print_notes(result)
        print(f"run {result.run_id}: report and curves in {result.run_dir}")
    write_json(args.json, result_json(results[0]) if len(results) == 1
                else {"runs": [result_json(r) for r in results]})
    return 0


# -- probe --------------------------------------------------------------------------------------
def cmd_probe(args) -> int:
    check_writable(args.json)
    about = measured_here() if args.json else None  # the code loaded, as the ladder starts
    overrides = parse_sets(args.set)
    rungs = [r if r.startswith("probe:") else f"probe:{r}" for r in args.rungs] if args.rungs else None
    results = run_ladder(args.algo, seeds=args.seeds, rungs=rungs,
                         total_steps=args.steps or PROBE_STEPS, **overrides)
    first_fail = None
    for r in results:
        mark = "PASS" if r.passed else "FAIL"
        print(f"rung {r.rung} {r.name:<30} {mark}  ({r.seconds:.1f} s)")
        if not r.expected:  # it never finished training
            print(f"    {r.diagnosis}")
        for what in ("values", "actions"):
            if what in r.expected:
                got = np.asarray(r.measured[what], dtype=float)
                print(f"    {what:<8} expected {r.expected[what]}  measured per seed "
                      f"{np.round(got, 3).tolist()}  tol {r.tolerance[what[:-1]]}")
        if not r.passed and first_fail is None:
            first_fail = r
    if first_fail is None:
        print(f"all {len(results)} rungs passed")
    else:
        print(f"first failing rung: {first_fail.rung} ({first_fail.name}) -> {first_fail.diagnosis}")
    write_json(args.json, {"algo": args.algo, "seeds": args.seeds,
                           "steps_per_rung": args.steps or PROBE_STEPS, "overrides": overrides,
                           "about": about, "rungs": [
        {"name": r.name, "rung": r.rung, "passed": r.passed, "measured": r.measured,
         "expected": r.expected, "tolerance": r.tolerance, "diagnosis": r.diagnosis,
         "seconds": r.seconds} for r in results]})
    return 0 if first_fail is None else 1


def cmd_compare_adaptive(args) -> int:
    """`jaxrl compare RUN_A RUN_B --adaptive`: AdaStop over two stored runs, training more
    seeds of each as the test asks (`jaxrl.studies.adaptive`)."""
    store = RunStore(args.runs_dir)
    if args.measure not in MEASURES:
        raise UsageError(f"--measure must be one of {sorted(MEASURES)}, got {args.measure!r}")
    try:
        result = adaptive.compare_runs(args.run_a, args.run_b, store, args.measure, args.batch,
                                       args.max_batches, args.alpha, progress=False)
    except ValueError as err:
        raise UsageError(str(err)) from None
    for (pair, decision) in result.decisions.items():
        a, b = pair.split(" vs ")
        print(f"{a} vs {b}: {decision} (alpha {args.alpha:g}, {result.interims} interim(s) of "
              f"{args.batch} seeds, cap {args.max_batches})")
    for note in result.notes:
        print(f"note: {note}")
    for run_id, scores in result.scores.items():
        added = result.runs[run_id][1:]
        print(f"{run_id}: {len(scores)} seeds, mean {np.mean(scores):.2f}"
              + (f"; seeds added in runs {', '.join(added)}" if added else ""))
    if args.json:
        check_writable(args.json, "--json")
        Path(args.json).write_text(json.dumps(result.to_dict(), indent=1) + "\n")
        print(f"wrote {args.json}")
    return 0

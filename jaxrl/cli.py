"""The ``jaxrl`` command line: ``train``, ``sweep``, ``bench``, ``resume``, ``probe``, ``runs``,
``plot``, ``compare``, ``export``.

Bad input (unknown algorithm or env, unknown or ill-typed ``--set`` key, an out-of-range
hyperparameter, seeds that are not a whole number >= 1, too few steps for one update, an
unwritable ``--json`` file or ``--out`` folder, any argument argparse refuses) exits with status 2
and one line on stderr, before anything compiles.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings

import numpy as np

from jaxrl.output_paths import check_file, check_folder
from jaxrl.runs import query
from jaxrl.runs.text_table import format_frame


class UsageError(ValueError):
    pass


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (a `UsageError`, printed by `main`), not
    usage text and a second line."""

    def error(self, message: str):
        raise UsageError(f"{message} (see {self.prog} --help)")


def _whole_number(text: str) -> int:
    """A CLI whole number: ``8``, ``1e6``, ``100_000`` (not ``2.5``). Ranges are checked by the
    API (`jaxrl.config.check_run_args`), so the CLI and Python say the same thing."""
    try:
        value = float(text.replace("_", ""))
        if value.is_integer():
            return int(value)
    except ValueError:
        pass
    raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}")


def _parse_sets(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--set expects key=value, got {item!r}")
        out[key.strip()] = value.strip()
    return out


def _check_writable(path: str | None, flag: str = "--json") -> None:
    """One line (exit 2) now, before anything compiles, if ``path`` could not be written."""
    if path is not None:
        check_file(path, flag)


def _write_json(path: str | None, payload: dict) -> None:
    from pathlib import Path

    from jaxrl.runs.store import atomic_write_text, json_default

    if path is not None:
        atomic_write_text(Path(path), json.dumps(payload, indent=2, default=json_default))


# -- train --------------------------------------------------------------------------------------
def cmd_train(args) -> int:
    from jaxrl.driver import NonFiniteMetricError, train

    _check_writable(args.json)
    overrides = _parse_sets(args.set)
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
    _print_result(result)
    _write_json(args.json, _result_json(result))
    if result.run_dir:
        print(f"run {result.run_id}: report and curves in {result.run_dir}")
    return 0


def _driver_options(args) -> dict:
    if args.checkpoint_every is not None and args.checkpoint_every < 1:
        raise UsageError(f"--checkpoint-every must be >= 1 chunk, got {args.checkpoint_every}")
    if args.max_chunk_updates < 1:
        raise UsageError(f"--max-chunk-updates must be >= 1, got {args.max_chunk_updates}")
    return {"checkpoint_every": args.checkpoint_every, "max_chunk_updates": args.max_chunk_updates,
            "shard_seeds": not args.no_shard, "memory_check": not args.no_memory_check}


def _print_result(result) -> None:
    from jaxrl import stats

    returns = result.final_eval_return
    print(f"\n{result.algo} on {result.env}: {result.seeds} seeds x "
          f"{result.total_steps_per_seed:,} env steps")
    print(f"{'seed':>6}  {'final eval return':>18}")
    for s, r in enumerate(returns):
        print(f"{s:>6}  {r:>18.2f}")
    print(f"{'mean':>6}  {np.nanmean(returns):>18.2f}")
    print(f"{'IQM':>6}  {stats.iqm(returns):>18.2f}")
    print(f"compile {result.compile_seconds:.1f} s | run {result.run_seconds:.1f} s | "
          f"{result.env_steps_per_second:,.0f} env-steps/s (all seeds) | {result.devices}")


def _result_json(result) -> dict:
    from jaxrl import stats
    from jaxrl.runs.store import finite_or_none

    returns = result.final_eval_return
    return {
        "algo": result.algo, "env": result.env, "seeds": result.seeds,
        "total_steps_per_seed": result.total_steps_per_seed,
        "compile_seconds": result.compile_seconds, "run_seconds": result.run_seconds,
        "env_steps_per_second": result.env_steps_per_second, "devices": result.devices,
        "final_eval_return": [finite_or_none(r) for r in returns],
        "final_eval_return_iqm": finite_or_none(stats.iqm(returns)),
        "config": result.config.to_dict(), "run_id": result.run_id,
    }


def cmd_sweep(args) -> int:
    from jaxrl.sweeps import format_table, parse_grid, parse_random, sweep

    _check_writable(args.json)
    if not args.grid and not args.random:
        raise UsageError("jaxrl sweep needs at least one --grid or --random")
    result = sweep(args.algo, env=args.env, seeds=args.seeds, total_steps=args.total_steps,
                   grid=parse_grid(args.grid), random=parse_random(args.random),
                   trials=args.trials, seed=args.seed, store=not args.no_store,
                   runs_dir=args.runs_dir, backend=args.backend, address=args.address,
                   progress=not args.no_progress, command=["jaxrl", *sys.argv[1:]],
                   eval_episodes=args.eval_episodes, **_driver_options(args),
                   **_parse_sets(args.set))
    print(f"\n{args.algo} on {args.env}: {len(result.configs)} configs x {args.seeds} seeds in "
          f"{len(result.groups)} program(s); final eval return, IQM [95% CI] over seeds")
    print(format_table(result.table))
    if result.sweep_id:
        print(f"sweep {result.sweep_id}: `jaxrl runs sweep {result.sweep_id}` shows this table")
    _write_json(args.json, {"sweep_id": result.sweep_id, "algo": args.algo, "env": args.env,
                            "seeds": args.seeds, "groups": result.groups,
                            "table": result.table.to_dict(orient="records")})
    return 0 if not result.failures else 1


def cmd_bench(args) -> int:
    from jaxrl.benchmarks import bench

    _check_writable(args.json)
    if args.out is not None:
        check_folder(args.out, "--out")
    result = bench(args.suite, only=args.only, seeds=args.seeds, budget_scale=args.budget_scale,
                   runs_dir=args.runs_dir, progress=not args.no_progress, out=args.out,
                   command=["jaxrl", *sys.argv[1:]])
    _print_frame(_bench_view(result.table))
    print(f"bench {result.bench_id}: ran {len(result.ran)}, skipped {len(result.skipped)} "
          f"already finished, {len(result.failed)} failed; report in {result.report_dir}"
          + (f" and {args.out}" if args.out else ""))
    for name, message in result.failed.items():
        print(f"  {name}: {message}", file=sys.stderr)
    _write_json(args.json, {"bench_id": result.bench_id, "report_dir": result.report_dir,
                            "ran": result.ran, "skipped": result.skipped,
                            "failed": result.failed,
                            "entries": result.table.to_dict(orient="records")})
    return 1 if result.failed else 0


def _bench_view(table):
    """The bench table for a terminal: IQM [CI] in one column."""
    view = table.copy()
    view["IQM [95% CI]"] = [
        "–" if r.iqm is None or r.iqm != r.iqm else f"{r.iqm:.1f} [{r.ci_low:.1f}, {r.ci_high:.1f}]"
        for r in table.itertuples()]
    return view[["entry", "seeds", "total_steps", "measure", "IQM [95% CI]", "reference",
                 "verdict", "wall_seconds", "env_steps_per_second", "status"]]


def cmd_resume(args) -> int:
    from jaxrl.driver import NonFiniteMetricError, resume

    _check_writable(args.json)
    try:
        results = resume(args.run_id, runs_dir=args.runs_dir, progress=not args.no_progress)
    except NonFiniteMetricError as err:
        print(f"jaxrl: {err} (run kept in {err.result.run_dir})", file=sys.stderr)
        return 1
    for result in results:
        _print_result(result)
        print(f"run {result.run_id}: report and curves in {result.run_dir}")
    _write_json(args.json, _result_json(results[0]) if len(results) == 1
                else {"runs": [_result_json(r) for r in results]})
    return 0


# -- probe --------------------------------------------------------------------------------------
def cmd_probe(args) -> int:
    from jaxrl.probe import PROBE_STEPS, run_ladder

    _check_writable(args.json)
    overrides = _parse_sets(args.set)
    rungs = [r if r.startswith("probe:") else f"probe:{r}" for r in args.rungs] if args.rungs else None
    results = run_ladder(args.algo, seeds=args.seeds, rungs=rungs,
                         total_steps=args.steps or PROBE_STEPS, **overrides)
    first_fail = None
    for r in results:
        mark = "PASS" if r.passed else "FAIL"
        print(f"rung {r.rung} {r.name:<30} {mark}  ({r.seconds:.1f} s)")
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
    _write_json(args.json, {"algo": args.algo, "rungs": [
        {"name": r.name, "rung": r.rung, "passed": r.passed, "measured": r.measured,
         "expected": r.expected, "tolerance": r.tolerance, "diagnosis": r.diagnosis,
         "seconds": r.seconds} for r in results]})
    return 0 if first_fail is None else 1


# -- runs, plot, compare -------------------------------------------------------------------------
def _store(args):
    from jaxrl.runs.store import RunStore

    return RunStore(args.runs_dir)


def _print_frame(frame) -> None:
    print(format_frame(frame))


def _one_line_warnings(command):
    """``command`` with each distinct warning (a bad file skipped by a query) on one stderr
    line, once."""
    def run(args) -> int:
        shown = set()

        def show(message, *_args, **_kwargs) -> None:
            if str(message) not in shown:
                shown.add(str(message))
                print(f"jaxrl: warning: {message}", file=sys.stderr)

        with warnings.catch_warnings():
            warnings.simplefilter("always")
            warnings.showwarning = show
            return command(args)
    return run


def _runs_check(store, move: bool) -> int:
    """``jaxrl runs check``: the store's bad files (status 1 if any), moved aside if ``move``."""
    bad = query.check(store, move=move)
    if bad.empty:
        print(f"no bad files in {store.root}")
        return 0
    _print_frame(bad)
    hint = (f"{bad['moved_to'].notna().sum()} moved to {store.root / '.quarantine'}, their runs "
            "stay flagged damaged" if move else "`jaxrl runs check --quarantine` moves them aside")
    print(f"{len(bad)} bad files; {hint}")
    return 1


@_one_line_warnings
def cmd_runs(args) -> int:
    store = _store(args)
    if args.runs_command == "ls":
        _print_frame(query.ls(store, algo=args.algo, env=args.env, status=args.status,
                              sweep=args.sweep))
    elif args.runs_command == "sweep":
        from jaxrl.sweeps import format_table, load_sweep

        print(format_table(load_sweep(args.sweep_id, store.root)))
    elif args.runs_command == "bench":
        from jaxrl.runs import bench_report

        folder = bench_report.write(store, args.bench_id, out=args.out)
        _print_frame(_bench_view(bench_report.entry_table(store, args.bench_id)))
        print(f"report in {folder}" + (f" and {args.out}" if args.out else ""))
    elif args.runs_command == "show":
        print(json.dumps(query.show(args.run_id, store), indent=2))
    elif args.runs_command == "top":
        _print_frame(query.top(args.env, args.metric, k=args.k, algo=args.algo, store=store))
    elif args.runs_command == "latest":
        _print_frame(query.latest(store))
    elif args.runs_command == "sql":
        _print_frame(query.sql(args.query, store))
    elif args.runs_command == "check":
        return _runs_check(store, args.quarantine)
    return 0


@_one_line_warnings
def cmd_plot(args) -> int:
    from jaxrl.runs.plots import plot_runs

    store = _store(args)
    latest = query.latest(store)
    latest = latest[latest.env == args.env]
    if latest.empty:
        raise UsageError(f"no finished run on env {args.env!r} in {str(store.root)!r}")
    curves = {}
    for row in latest.itertuples():
        frame = query.load_evaluations(row.run_id, store) if args.metric == "eval_return" \
            else query.load_metrics(row.run_id, store)
        curves[f"{row.algo} {row.run_id[-6:]}"] = frame
    out = args.out or f"{args.env.replace(':', '_')}-{args.metric}.png"
    _check_writable(out, "--out")
    plot_runs(curves, args.metric, f"{args.env}: latest run per algorithm", path=out,
              band=args.band)
    print(f"wrote {out} ({len(curves)} runs)")
    return 0


def cmd_compare(args) -> int:
    from jaxrl import stats
    from jaxrl.runs import query

    store = _store(args)
    metas = [query.show(r, store) for r in (args.run_a, args.run_b)]
    scores = []
    for meta in metas:
        r = np.asarray([np.nan if v is None else v for v in (meta.get("final_eval_return") or [])],
                       dtype=float)
        r = r[np.isfinite(r)]
        if r.size == 0:
            raise UsageError(f"run {meta['run_id']} has no final evaluation returns")
        scores.append(r)
    c = stats.compare(scores[0], scores[1], seed=args.seed)
    for tag, meta in zip("ab", metas):
        print(f"{meta['run_id']}: {meta['algo']} on {meta['env']}, n={c['n_' + tag]} seeds, "
              f"IQM {c['iqm_' + tag]:.2f} [{c['iqm_' + tag + '_ci_low']:.2f}, "
              f"{c['iqm_' + tag + '_ci_high']:.2f}]")
    print(f"Welch t = {c['welch_t']:.3f}, p = {c['welch_p']:.4g}")
    print(f"P(A > B) = {c['prob_improvement']:.3f} [{c['prob_improvement_ci_low']:.3f}, "
          f"{c['prob_improvement_ci_high']:.3f}]")
    print(f"intervals: {c.get('ci_method', '95% stratified percentile bootstrap')}")
    return 0


def cmd_export(args) -> int:
    from jaxrl.runs.export import to_tensorboard, to_wandb

    if args.format == "wandb":
        out = to_wandb(args.run_id, args.out, _store(args))
        print(f"wrote offline W&B runs under {out / 'wandb'} (upload with: wandb sync)")
        return 0
    out = to_tensorboard(args.run_id, args.out, _store(args))
    print(f"wrote TensorBoard event files to {out} (tensorboard --logdir {out})")
    return 0


def _add_run_flags(p, seeds: int, seed_help: str) -> None:
    """What `train` and `sweep` share: algorithm, env, budget, overrides, outputs, driver flags."""
    p.add_argument("algo")
    p.add_argument("--env", default="CartPole-v1")
    p.add_argument("--seeds", type=_whole_number, default=seeds)
    p.add_argument("--total-steps", type=_whole_number, default=100_000,
                   help="env steps per seed (1e6 is fine)")
    p.add_argument("--seed", type=_whole_number, default=0, help=seed_help)
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="config override")
    p.add_argument("--eval-episodes", type=int, default=16)
    p.add_argument("--json", metavar="PATH")
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--runs-dir", default=None, help="run store root (default $JAXRL_RUNS_DIR or ./runs)")
    p.add_argument("--no-store", action="store_true", help="do not record the run")
    _add_driver_flags(p)


def _add_driver_flags(p) -> None:
    p.add_argument("--checkpoint-every", type=int, default=None, metavar="CHUNKS",
                   help="checkpoint every N chunks (orbax, async) so `jaxrl resume` can continue")
    p.add_argument("--max-chunk-updates", type=int, default=50,
                   help="updates per jitted chunk (at most)")
    p.add_argument("--no-shard", action="store_true",
                   help="keep the seed axis on one device (default: split over all local devices)")
    p.add_argument("--no-memory-check", action="store_true",
                   help="skip the device-memory plan made before compiling")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="jaxrl", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    t = sub.add_parser("train", help="train an algorithm on an env over many seeds")
    _add_run_flags(t, seeds=1, seed_help="root seed")
    t.set_defaults(func=cmd_train)

    sw = sub.add_parser("sweep", help="train many configs x seeds; one program per static group")
    _add_run_flags(sw, seeds=8, seed_help="root seed (and random-search seed)")
    sw.add_argument("--grid", action="append", metavar="KEY=V1,V2,...",
                    help="grid values (tuples in brackets: hidden=(64,64),(128,128))")
    sw.add_argument("--random", action="append", metavar="KEY=DIST",
                    help="loguniform(a,b) | uniform(a,b) | randint(a,b) | choice(v1,v2,...)")
    sw.add_argument("--trials", type=int, default=None, help="random draws (default 8)")
    sw.add_argument("--backend", choices=("local", "ray"), default="local")
    sw.add_argument("--address", default=None, help="Ray cluster address (default: local Ray)")
    sw.set_defaults(func=cmd_sweep)

    b = sub.add_parser("bench", help="run a benchmark suite against its published references")
    b.add_argument("suite", help="a suite name (experiments/benchmarks/NAME.yaml) or a YAML path")
    b.add_argument("--only", action="append", metavar="PATTERN",
                   help="only entries whose name (algo/env) matches this glob or substring")
    b.add_argument("--seeds", type=_whole_number, default=None,
                   help="seeds per entry (default: the suite's)")
    b.add_argument("--budget-scale", type=float, default=1.0,
                   help="multiply every budget (smoke runs); at least one update per entry")
    b.add_argument("--out", default=None, help="also copy report.md, results.json, curves.png here")
    b.add_argument("--runs-dir", default=None, help="run store root (default $JAXRL_RUNS_DIR or ./runs)")
    b.add_argument("--json", metavar="PATH")
    b.add_argument("--no-progress", action="store_true")
    b.set_defaults(func=cmd_bench)

    rm = sub.add_parser("resume", help="continue an interrupted, checkpointed run (or sweep group)")
    rm.add_argument("run_id")
    rm.add_argument("--runs-dir", default=None)
    rm.add_argument("--json", metavar="PATH")
    rm.add_argument("--no-progress", action="store_true")
    rm.set_defaults(func=cmd_resume)

    r = sub.add_parser("runs", help="query the run store")
    r.add_argument("--runs-dir", default=None)
    rs = r.add_subparsers(dest="runs_command", required=True)
    ls = rs.add_parser("ls")
    ls.add_argument("--algo")
    ls.add_argument("--env")
    ls.add_argument("--status")
    ls.add_argument("--sweep", help="only the runs of this sweep id")
    swq = rs.add_parser("sweep", help="the ranked table of a stored sweep")
    swq.add_argument("sweep_id")
    bq = rs.add_parser("bench", help="rebuild a stored benchmark's report")
    bq.add_argument("bench_id")
    bq.add_argument("--out", default=None, help="also copy the report files here")
    show = rs.add_parser("show")
    show.add_argument("run_id")
    top = rs.add_parser("top")
    top.add_argument("--env", required=True)
    top.add_argument("--algo")
    top.add_argument("--metric", default="episode_return_mean")
    top.add_argument("-k", type=int, default=5)
    rs.add_parser("latest")
    q = rs.add_parser("sql", help="read-only SQL over the views runs, metrics, evaluations")
    q.add_argument("query")
    ck = rs.add_parser("check", help="read every file of the store; list the bad ones")
    ck.add_argument("--quarantine", action="store_true",
                    help="move bad files to <runs-dir>/.quarantine/<run_id>/ (never deletes)")
    for sp in (ls, show, top, q, swq, bq, ck, rs.choices["latest"]):
        sp.add_argument("--runs-dir", default=argparse.SUPPRESS)
    r.set_defaults(func=cmd_runs)

    pl = sub.add_parser("plot", help="learning curves of the latest run of each algorithm on an env")
    pl.add_argument("--env", required=True)
    pl.add_argument("--metric", default="episode_return_mean")
    pl.add_argument("--band", choices=("iqm", "mean"), default="iqm")
    pl.add_argument("--out", default=None, help="PNG path")
    pl.add_argument("--runs-dir", default=None)
    pl.set_defaults(func=cmd_plot)

    cp = sub.add_parser("compare", help="IQM [CI], Welch's t-test and P(improvement) of two runs")
    cp.add_argument("run_a")
    cp.add_argument("run_b")
    cp.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    cp.add_argument("--runs-dir", default=None)
    cp.set_defaults(func=cmd_compare)

    ex = sub.add_parser("export", help="export a stored run (TensorBoard, W&B offline)")
    ex.add_argument("format", choices=("tensorboard", "wandb"))
    ex.add_argument("run_id")
    ex.add_argument("--out", default=None)
    ex.add_argument("--runs-dir", default=None)
    ex.set_defaults(func=cmd_export)

    p = sub.add_parser("probe", help="run an algorithm up the probe ladder")
    p.add_argument("algo")
    p.add_argument("--seeds", type=int, default=4)
    p.add_argument("--steps", type=int, default=None, help="env steps per seed per rung")
    p.add_argument("--rungs", nargs="+", metavar="NAME", help="only these rungs (e.g. value truncation)")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="config override")
    p.add_argument("--json", metavar="PATH")
    p.set_defaults(func=cmd_probe)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        return args.func(args)
    except ValueError as err:  # our config/env/algo errors are ValueError subclasses
        print(f"jaxrl: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("jaxrl: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())

"""The commands that read the run store: ``runs``, ``plot``, ``compare``, ``export``. None of
them loads JAX or the engine."""

from __future__ import annotations

import json
import warnings

import numpy as np

from jaxrl import stats
from jaxrl.cli.common import UsageError, bench_view, check_writable, one_line_warnings, print_frame
from jaxrl.runs import query
from jaxrl.runs.demos import list_demos
from jaxrl.runs.export import to_tensorboard, to_wandb
from jaxrl.runs.integrity import FOREIGN
from jaxrl.runs.plots import plot_runs
from jaxrl.runs.progress import format_progress, read_progress, running
from jaxrl.runs.runmeta import strict_json
from jaxrl.runs.store import RunStore
from jaxrl.runs.text_table import clip_cells
from jaxrl.studies.bench import report as bench_report
from jaxrl.studies.sweep.table import format_table, load_sweep


def _store(args) -> RunStore:
    """The run store the command names (``--runs-dir``)."""
    return RunStore(args.runs_dir)


def _runs_check(store, move: bool) -> int:
    """``jaxrl runs check``: the store's bad files (status 1 if any), moved aside if ``move``."""
    bad = query.check(store, move=move)
    if bad.empty:
        print(f"no bad files in {store.root}")
        return 0
    print_frame(bad)
    hint = "`jaxrl runs check --quarantine` moves them aside"
    if move:
        removed = (bad["moved_to"] == query.REMOVED).sum()
        moved = bad["moved_to"].notna().sum() - removed
        said = [f"{moved} moved to {store.root / '.quarantine'}, their runs stay flagged "
                "damaged"] if moved else []
        said += [f"{removed} leftover temp files removed"] if removed else []
        foreign = (bad["reason"] == FOREIGN).sum()
        said += [f"{foreign} foreign files left in place (never read)"] if foreign else []
        hint = "; ".join(said) or "none moved"
    print(f"{len(bad)} bad files; {hint}")
    return 1


def _runs_sql(store, text: str, limit: int, timeout: float, cell_chars: int) -> None:
    """``jaxrl runs sql``: the first ``limit`` rows (0: all) within ``timeout`` seconds (0: no
    limit), each cell cut to ``cell_chars`` characters (0: whole), and a line saying when rows
    were left out or cells cut."""
    if limit < 0 or not timeout >= 0 or cell_chars < 0:
        raise UsageError(f"--limit, --timeout and --cell-chars must be >= 0, got {limit}, "
                         f"{timeout} and {cell_chars}")
    frame, more = query.sql_head(text, store, limit=limit or None, timeout=timeout or None)
    frame, cut = clip_cells(frame, cell_chars) if cell_chars else (frame, 0)
    print_frame(frame)
    if more:
        print(f"… more rows not shown: only the first {limit:,} (--limit N shows N, --limit 0 "
              "all)")
    if cut:
        print(f"… {cut:,} {'cell' if cut == 1 else 'cells'} cut to their first {cell_chars:,} "
              "characters (--cell-chars N shows N, --cell-chars 0 all)")


def _runs_show(store, run_id: str) -> None:
    """``jaxrl runs show``: the run's ``run.json`` as strict JSON (a NaN or an infinity, which
    JSON has not, printed as null and named in a warning)."""
    text, nulled = strict_json(query.show(run_id, store))
    print(text)
    if nulled:
        shown = ", ".join(nulled[:5]) + (f" and {len(nulled) - 5} more" if len(nulled) > 5 else "")
        warnings.warn(f"printed as null: {shown} (NaN or Infinity in the run.json, not JSON)",
                      stacklevel=1)


def print_demos(sets: list[dict]) -> None:
    """One line per demonstration set: id, source run and seed, episodes, mean return."""
    if not sets:
        print("no demonstrations (`jaxrl demos RUN_ID` records some)")
        return
    for d in sets:
        returns = d.get("returns") or [float("nan")]
        print(f"{d['demo_id']}  from {d.get('run_id')} seed {d.get('seed')}  "
              f"{d.get('episodes')} episodes  mean return {np.mean(returns):.1f}  "
              f"({'deterministic' if d.get('deterministic') else 'sampled'})")


@one_line_warnings
def cmd_runs(args) -> int:
    store = _store(args)
    if args.runs_command == "sweep":
        print(format_table(load_sweep(args.sweep_id, store.root)))
    elif args.runs_command == "bench" and args.from_results:
        if args.bench_id or args.merge:
            raise UsageError("--from-results re-renders one file: give no bench id or --merge")
        folder = bench_report.write_from_results(args.from_results, out=args.out,
                                                 evidence=args.split_evidence)
        report = json.loads((folder / "results.json").read_text())
        print(f"report in {folder}" + (f": stale ({len(report['stale'])} reasons)"
                                       if report["stale"] else ""))
    elif args.runs_command == "bench":
        if not args.bench_id:
            raise UsageError("give a bench id (or --from-results RESULTS_JSON)")
        folder = bench_report.write(store, args.bench_id, out=args.out, merge=args.merge,
                                    evidence=args.split_evidence)
        written = json.loads((folder / "results.json").read_text())
        print_frame(bench_view(bench_report.entry_table(store, args.bench_id, written)))
        print(f"report in {folder}" + (f" and {args.out}" if args.out else ""))
    elif args.runs_command == "show":
        _runs_show(store, args.run_id)
    elif args.runs_command == "progress":
        run_ids = args.run_ids or running(store)
        if not run_ids:
            print(f"no run is running in {store.root} (give run ids for others)")
        for run_id in run_ids:
            print(format_progress(read_progress(run_id, store)))
    elif args.runs_command == "top":
        print_frame(query.top(args.env, args.metric, k=args.k, algo=args.algo, store=store))
    elif args.runs_command == "latest":
        print_frame(query.latest(store))
    elif args.runs_command == "sql":
        _runs_sql(store, args.query, args.limit, args.timeout, args.cell_chars)
    elif args.runs_command == "demos":
        print_demos(list_demos(store.root))
    elif args.runs_command == "check":
        return _runs_check(store, args.quarantine)
    return 0


@one_line_warnings
def cmd_plot(args) -> int:
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
    check_writable(out, "--out")
    plot_runs(curves, args.metric, f"{args.env}: latest run per algorithm", path=out,
              band=args.band)
    print(f"wrote {out} ({len(curves)} runs)")
    return 0


def cmd_compare(args) -> int:
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
    if args.format == "wandb":
        out = to_wandb(args.run_id, args.out, _store(args))
        print(f"wrote offline W&B runs under {out / 'wandb'} (upload with: wandb sync)")
        return 0
    out = to_tensorboard(args.run_id, args.out, _store(args))
    print(f"wrote TensorBoard event files to {out} (tensorboard --logdir {out})")
    return 0

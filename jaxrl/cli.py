"""The ``jaxrl`` command line: ``jaxrl train`` and ``jaxrl probe``.

Bad input (unknown algorithm or env, unknown or ill-typed ``--set`` key, seeds < 1, too few
steps for one update, an unwritable ``--json`` path) exits with status 2 and one line on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np


class UsageError(ValueError):
    pass


def _parse_sets(items: list[str]) -> dict[str, str]:
    out = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--set expects key=value, got {item!r}")
        out[key.strip()] = value.strip()
    return out


def _check_writable(path: str | None) -> None:
    if path is None:
        return
    folder = os.path.dirname(os.path.abspath(path)) or "."
    if not os.path.isdir(folder) or not os.access(folder, os.W_OK):
        raise UsageError(f"cannot write --json file {path!r}: folder {folder!r} is not writable")


def _write_json(path: str | None, payload: dict) -> None:
    if path is None:
        return
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        json.dump(payload, f, indent=2, default=_json_default)
    os.replace(tmp, path)


def _json_default(x):
    if isinstance(x, (np.floating, np.integer)):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, tuple):
        return list(x)
    return str(x)


def _finite_or_none(x) -> float | None:
    return float(x) if np.isfinite(x) else None


# -- train --------------------------------------------------------------------------------------
def cmd_train(args) -> int:
    from jaxrl import stats
    from jaxrl.driver import NonFiniteMetricError, train

    _check_writable(args.json)
    overrides = _parse_sets(args.set)
    try:
        result = train(args.algo, env=args.env, seeds=args.seeds, total_steps=args.total_steps,
                       seed=args.seed, progress=not args.no_progress,
                       eval_episodes=args.eval_episodes, **overrides)
    except NonFiniteMetricError as err:
        print(f"jaxrl: {err}", file=sys.stderr)
        return 1
    returns = result.final_eval_return
    print(f"\n{result.algo} on {result.env}: {result.seeds} seeds x "
          f"{result.total_steps_per_seed:,} env steps")
    print(f"{'seed':>6}  {'final eval return':>18}")
    for s, r in enumerate(returns):
        print(f"{s:>6}  {r:>18.2f}")
    print(f"{'mean':>6}  {np.nanmean(returns):>18.2f}")
    print(f"{'IQM':>6}  {stats.iqm(returns):>18.2f}")
    print(f"compile {result.compile_seconds:.1f} s | run {result.run_seconds:.1f} s | "
          f"{result.env_steps_per_second:,.0f} env-steps/s (all seeds)")
    _write_json(args.json, {
        "algo": result.algo, "env": result.env, "seeds": result.seeds,
        "total_steps_per_seed": result.total_steps_per_seed,
        "compile_seconds": result.compile_seconds, "run_seconds": result.run_seconds,
        "env_steps_per_second": result.env_steps_per_second,
        "final_eval_return": [_finite_or_none(r) for r in returns],
        "final_eval_return_iqm": _finite_or_none(stats.iqm(returns)),
        "config": result.config.to_dict(),
    })
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jaxrl", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    t = sub.add_parser("train", help="train an algorithm on an env over many seeds")
    t.add_argument("algo")
    t.add_argument("--env", default="CartPole-v1")
    t.add_argument("--seeds", type=int, default=1)
    t.add_argument("--total-steps", type=float, default=100_000, help="env steps per seed")
    t.add_argument("--seed", type=int, default=0, help="root seed")
    t.add_argument("--set", action="append", metavar="KEY=VALUE", help="config override")
    t.add_argument("--eval-episodes", type=int, default=16)
    t.add_argument("--json", metavar="PATH")
    t.add_argument("--no-progress", action="store_true")
    t.set_defaults(func=cmd_train)

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
    args = build_parser().parse_args(argv)
    if getattr(args, "total_steps", None) is not None:
        if args.total_steps != int(args.total_steps):
            print("jaxrl: --total-steps must be a whole number", file=sys.stderr)
            return 2
        args.total_steps = int(args.total_steps)
    try:
        return args.func(args)
    except ValueError as err:  # our config/env/algo errors are ValueError subclasses
        print(f"jaxrl: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("jaxrl: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())

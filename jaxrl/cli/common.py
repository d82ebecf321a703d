"""What the ``jaxrl`` commands share: one-line usage errors, argument parsing helpers, output
files and printing."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from jaxrl import named_yaml, presets, stats
from jaxrl.cli.parsing import (  # noqa: F401  (re-exported: what the commands share)
    Parser,
    UsageError,
    one_line_warnings,
    whole_number,
)
from jaxrl.output_paths import check_file
from jaxrl.runs.files import atomic_write_text, finite_or_none, json_default
from jaxrl.runs.text_table import format_frame


def parse_sets(items: list[str], flag: str = "--set") -> dict[str, str]:
    """``["key=value", ...]`` (repeated ``--set``) -> ``{key: value}``."""
    out = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"{flag} expects key=value, got {item!r}")
        out[key.strip()] = value.strip()
    return out


def load_config_file(path: str | None) -> dict:
    """The config keys of a YAML file (``--config``): a mapping of key -> value, values typed
    as YAML reads them (checked like ``--set`` values when the config is built). One line
    (`UsageError`) for a file that is missing, not a bounded regular file (`jaxrl.named_yaml`),
    not YAML, has a key twice, or is not a mapping."""
    if path is None:
        return {}
    if not Path(path).exists() and presets.is_name(path):  # a named preset: ppo/baselines-mujoco
        try:
            return presets.load(path)
        except presets.PresetError as err:
            raise UsageError(f"--config {path}: {err}") from None
    data = named_yaml.read(path, "--config", UsageError, unique_keys=True)
    if data is None:
        return {}
    if not isinstance(data, dict) or not all(isinstance(k, str) for k in data):
        raise UsageError(f"--config {path}: expected a mapping of config keys to values, got "
                         f"{type(data).__name__}")
    return data


def run_overrides(args) -> dict:
    """The config overrides of `train` / `sweep`: the ``--config`` file's keys, then every
    ``--set`` on top of them."""
    overrides = {**load_config_file(getattr(args, "config", None)), **parse_sets(args.set)}
    if getattr(args, "demos", None) is not None:
        overrides["demos"] = args.demos
    if "total_steps" in overrides:
        raise UsageError("total_steps is the run's budget, set by --total-steps (not by --set "
                         "or --config)")
    return overrides


def parse_env_args(items: list[str] | None) -> dict | None:
    """``["key=value", ...]`` (repeated ``--env-arg``) -> env options, each value read as YAML
    (``1000`` a number, ``[0, 2]`` a list, ``baselines`` a string); None when there are none."""
    out = {}
    for key, value in parse_sets(items or [], "--env-arg").items():
        out[key] = named_yaml.load_text(value, f"--env-arg {key}: {value!r}", UsageError)
    return out or None


def check_writable(path: str | None, flag: str = "--json") -> None:
    """One line (exit 2) now, before anything compiles, if ``path`` could not be written."""
    if path is not None:
        check_file(path, flag)


def write_json(path: str | None, payload: dict) -> None:
    """Write ``payload`` to ``path`` (atomically) if a path was given."""
    if path is not None:
        atomic_write_text(Path(path), json.dumps(payload, indent=2, default=json_default))


def print_frame(frame) -> None:
    print(format_frame(frame))


def bench_view(table):
    """The bench table for a terminal: the mean [bootstrap-t CI] the verdict is read from, or
    the per-seed values under 8 seeds (`bench_judge.MIN_SEEDS`), and the IQM."""
    view = table.copy()
    view["ours"] = [
        "–" if r.iqm is None or r.iqm != r.iqm else
        f"{r.mean:.1f} [{r.mean_ci_low:.1f}, {r.mean_ci_high:.1f}]" if r.n_finite >= 8 else
        "per seed: " + ", ".join("–" if v is None else f"{v:.1f}" for v in r.per_seed)
        for r in table.itertuples()]
    view["IQM"] = ["–" if r.iqm is None or r.iqm != r.iqm else f"{r.iqm:.1f}"
                   for r in table.itertuples()]
    return view[["entry", "seeds", "total_steps", "measure", "ours", "IQM", "reference",
                 "verdict", "wall_seconds", "env_steps_per_second", "status"]]


def print_result(result) -> None:
    """A training result for a terminal: final return per seed, mean, IQM, timings."""
    returns = result.final_eval_return
    print(f"\n{result.algo} on {result.env}: {result.seeds} seeds x "
          f"{result.total_steps_per_seed:,} env steps")
    print(f"{'seed':>6}  {'final eval return':>18}")
    for s, r in enumerate(returns):
        print(f"{s:>6}  {r:>18.2f}")
    print(f"{'mean':>6}  {stats.mean(returns):>18.2f}")
    print(f"{'IQM':>6}  {stats.iqm(returns):>18.2f}")
    finished = int(np.isfinite(np.asarray(returns, dtype=np.float64)).sum())
    evaluated = len(getattr(result, "evaluations", [None])) > 0
    if not evaluated:
        print("(no final evaluation ran: --eval-episodes 0)")
    elif finished == 0:
        print("(no mean or IQM: no seed's final evaluation finished an episode)")
    elif finished < len(returns):
        print(f"(mean and IQM over {finished} of {len(returns)} seeds: the other final "
              "evaluations finished no episode)")
    cached = "" if result.compile_source == "compiled" else f" ({result.compile_source})"
    print(f"compile {result.compile_seconds:.1f} s{cached}{phases_text(result.compile_phases)} | "
          f"run {result.run_seconds:.1f} s | "
          f"{result.env_steps_per_second:,.0f} env-steps/s (all seeds) | {result.devices}")


def phases_text(phases: dict) -> str:
    """`` (trace 1.2 s, lower 0.4 s, XLA 9.8 s; 0.3 s of it at the first evaluation)``: the
    compile phases summed over a run's programs (`jaxrl.engine.programs.Built`), and how much
    of the wait came at the first evaluation (its program compiles behind the first chunks);
    empty when none was compiled here."""
    totals = {k: sum(p.get(k, 0.0) for p in phases.values()) for k in ("trace", "lower",
                                                                          "compile")}
    if not any(totals.values()):
        return ""
    waited = phases.get("eval", {}).get("waited")  # the evaluation compiles behind the chunks
    behind = "" if waited is None else f"; {waited:.1f} s of it at the first evaluation"
    return (f" (trace {totals['trace']:.1f} s, lower {totals['lower']:.1f} s, XLA "
            f"{totals['compile']:.1f} s{behind})")


def result_json(result) -> dict:
    """A training result as ``--json`` writes it."""
    returns = result.final_eval_return
    return {
        "algo": result.algo, "env": result.env, "seeds": result.seeds,
        "total_steps_per_seed": result.total_steps_per_seed,
        "compile_seconds": result.compile_seconds, "compile_source": result.compile_source,
        "compile_parts": result.compile_parts, "compile_phases": result.compile_phases,
        "run_seconds": result.run_seconds,
        "env_steps_per_second": result.env_steps_per_second, "devices": result.devices,
        "final_eval_return": [finite_or_none(r) for r in returns],
        "final_eval_return_iqm": finite_or_none(stats.iqm(returns)),
        "config": result.config.to_dict(), "run_id": result.run_id,
    }

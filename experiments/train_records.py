"""The runs docs/measured.md once quoted from a terminal, made again into committed files.

    python experiments/train_records.py run [--out DIR] [--only NAME,NAME]
    python experiments/train_records.py table [--out DIR]

``run`` calls ``jaxrl ARGS --json OUT/NAME.json`` for each record in `RECORDS` not yet in
``OUT`` (so a session that stops part way resumes with the next record); the log beside each
file is what the CLI printed. ``table`` prints the markdown table of the files found: per
record the command, every seed's final deterministic evaluation, the IQM with its 95%
bootstrap CI, the mean, and the cost (training seconds, env-steps/s over all seeds, compile
seconds). A record that expects a refusal (``expect_error``) keeps the CLI's exit status, its
message and the seconds it took, in place of a run.
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from jaxrl import stats
from jaxrl.runs.provenance import measured_here, write_results

OUT = Path(__file__).resolve().parents[1] / "benchmarks" / "experiments-cpu" / "train"


@dataclass(frozen=True)
class Record:
    """One CLI call and what it measures again."""

    name: str
    args: str  # after `jaxrl`
    what: str
    expect_error: bool = False


ZOO_A2C_PENDULUM = ("train a2c --env Pendulum-v1 --seeds 8 --total-steps 1000000 --set num_envs=8 "
                    "--set learning_rate=7e-4 --set normalize_advantages=false --set vf_coef=0.8 "
                    "--set rmsprop_style=pytorch")

RECORDS = (
    Record("acer_cartpole", "train acer --env CartPole-v1 --seeds 16 --total-steps 500000",
           "ACER, jaxrl's discrete defaults"),
    Record("a2c_cartpole", "train a2c --env CartPole-v1 --seeds 16 --total-steps 1000000",
           "A2C, jaxrl's discrete defaults"),
    Record("trpo_cartpole", "train trpo --env CartPole-v1 --seeds 16 --total-steps 1000000",
           "TRPO, jaxrl's discrete defaults"),
    Record("vpg_cartpole", "train vpg --env CartPole-v1 --seeds 16 --total-steps 1000000",
           "VPG, jaxrl's discrete defaults"),
    Record("vpg_pendulum", "train vpg --env Pendulum-v1 --seeds 8 --total-steps 1000000",
           "VPG, jaxrl's continuous defaults"),
    Record("a2c_pendulum", "train a2c --env Pendulum-v1 --seeds 8 --total-steps 1000000",
           "A2C, jaxrl's continuous defaults: the zoo's settings' baseline"),
    Record("a2c_pendulum_zoo", ZOO_A2C_PENDULUM,
           "A2C in RL Baselines3 Zoo's Pendulum settings without its gSDE, initial log std 0"),
    Record("a2c_pendulum_zoo_logstd-2", ZOO_A2C_PENDULUM + " --set init_log_std=-2",
           "the same at the zoo's initial log std of -2 (chosen for gSDE)"),
    Record("pqn_cartpole_replay0", "train pqn --env CartPole-v1 --seeds 8 --total-steps 200000 "
           "--set eps_end=0.05 --set replay_rollouts=0", "PQN (purejaxql's CartPole preset), "
           "each rollout fitted once"),
    Record("pqn_cartpole_replay2", "train pqn --env CartPole-v1 --seeds 8 --total-steps 200000 "
           "--set eps_end=0.05 --set replay_rollouts=2", "the same, the last two rollouts "
           "refitted with each new one"),
    Record("ppo_cartpole_lr_sweep", "sweep ppo --env CartPole-v1 --seeds 8 --total-steps 500000 "
           "--grid learning_rate=1e-4,3e-4,1e-3", "three learning rates x 8 seeds as one program"),
    Record("sac_memory_refused", "train sac --env Pendulum-v1 --seeds 10000 "
           "--set buffer_size=10000000", "the memory plan refusing a run that cannot fit, "
           "before compiling", expect_error=True),
)


def run_one(record: Record, out: Path) -> None:
    """One record's CLI call into ``out/NAME.json`` (and its log)."""
    path = out / f"{record.name}.json"
    argv = [sys.executable, "-m", "jaxrl.cli", *shlex.split(record.args), "--no-progress"]
    if not record.expect_error:
        argv += ["--json", str(path)]
    about = measured_here(["jaxrl", *shlex.split(record.args)]) if record.expect_error else None
    start = time.perf_counter()
    with open(out / f"{record.name}.log", "w") as log:
        done = subprocess.run(argv, stdout=log, stderr=subprocess.STDOUT, check=False)
    if record.expect_error:
        message = (out / f"{record.name}.log").read_text().strip().splitlines()
        write_results(path, about, returncode=done.returncode, message=message,
                      seconds=time.perf_counter() - start)


def run(out: Path, names: list[str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for record in RECORDS:
        if record.name in names and not (out / f"{record.name}.json").exists():
            print(f"{time.strftime('%H:%M:%S')} {record.name}", flush=True)
            run_one(record, out)


def seeds_text(values) -> str:
    return ", ".join(f"{v:.1f}" for v in values)


def summary_cells(values) -> str:
    """``IQM [low, high] | mean`` of a list of per-seed returns."""
    s = stats.summarize(np.asarray(values, dtype=float))
    return f"{s['iqm']:.1f} [{s['iqm_ci_low']:.1f}, {s['iqm_ci_high']:.1f}] | {s['mean']:.1f}"


def cost_cells(d: dict) -> str:
    return (f"{d['run_seconds']:,.1f} | {d['env_steps_per_second']:,.0f} | "
            f"{d['compile_seconds']:.1f}")


def rows(record: Record, d: dict) -> list[str]:
    """A record's file as table rows: one per run (a sweep has one per config)."""
    if "configs" in d:  # a sweep: one program, a row per config
        return [f"| `{record.name}` {', '.join(f'{k}={v}' for k, v in c['overrides'].items())} "
                f"| {d['seeds']} | {seeds_text(c['final_eval_return'])} | "
                f"{summary_cells(c['final_eval_return'])} | {cost_cells(c)} |"
                for c in d["configs"]]
    return [f"| `{record.name}` | {d['seeds']} | {seeds_text(d['final_eval_return'])} | "
            f"{summary_cells(d['final_eval_return'])} | {cost_cells(d)} |"]


def table(out: Path) -> str:
    """The markdown table of every record file in ``out``, in `RECORDS` order."""
    lines = ["| record | seeds | final evaluation, per seed | IQM [95% CI] | mean | training s "
             "| env-steps/s (all seeds) | compile s |", "|---|---|---|---|---|---|---|---|"]
    for record in RECORDS:
        path = out / f"{record.name}.json"
        if path.exists() and not record.expect_error:
            lines += rows(record, json.loads(path.read_text()))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("what", choices=("run", "table"))
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--only", default=",".join(r.name for r in RECORDS))
    args = parser.parse_args()
    if args.what == "run":
        run(args.out, args.only.split(","))
    else:
        print(table(args.out))


if __name__ == "__main__":
    main()

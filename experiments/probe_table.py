"""One-setting-at-a-time probes, from their stored runs into one small committed file.

    python experiments/probe_table.py BASE_RUN_DIR RUN_DIR ... --out FILE.json [--late 100]

Every run is set beside the first (the baseline): the config keys it changed (the algorithm too,
when it differs), the command that made it, and per seed the mean of its last 100 training
episodes, its greedy final evaluation and its policy entropy averaged over the last ``--late``
updates (the run's metrics are megabytes; what the notes quote of them fits here). Also its
mean-return curve (the IQM over seeds at ten evenly spaced updates) and its cost. A run that did
not finish is refused with its status, so no row is made of part of a run.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from jaxrl import stats
from jaxrl.runs.query import load_metrics
from jaxrl.runs.store import RunStore


def metrics(run: Path) -> pd.DataFrame:
    """The run's per-update metrics, ``[updates x seeds]`` rows (the store's own reader: a
    damaged chunk is skipped with a warning)."""
    return load_metrics(run.name, RunStore(run.parent))


def late_entropy(frame: pd.DataFrame, late: int) -> list[float]:
    """Each seed's policy entropy averaged over the run's last ``late`` updates."""
    tail = frame[frame["update"] >= frame["update"].max() - (late - 1)]
    return [float(v) for v in tail.groupby("seed")["entropy"].mean()]


def iqm_curve(frame: pd.DataFrame, points: int = 10) -> dict[str, list[float]]:
    """The IQM over seeds of the training episodes' mean return at ``points`` updates."""
    updates = np.linspace(0, frame["update"].max(), points + 1)[1:].round().astype(int)
    at = frame[frame["update"].isin(updates)].sort_values(["update", "seed"])
    grouped = at.groupby("update")
    return {"env_steps": [int(v) for v in grouped["env_steps"].first()],
            "iqm": [float(stats.iqm(g.to_numpy())) for _, g in grouped["episode_return_mean"]]}


def changed(base: dict, meta: dict) -> dict:
    """The config keys ``meta`` sets otherwise than ``base`` (and the algorithm, if another)."""
    keys = {k: v for k, v in meta["config"].items()
            if k != "total_steps" and base["config"].get(k) != v}
    if meta["algo"] != base["algo"]:
        keys = {"algo": meta["algo"], **keys}
    return keys


def row(base: dict, run: Path, late: int) -> dict:
    meta = json.loads((run / "run.json").read_text())
    if meta["status"] != "finished":
        sys.exit(f"{run.name}: status {meta['status']!r}, not finished: no row made of it")
    frame = metrics(run)
    last100 = np.asarray(meta["train_return_last100"], dtype=float)
    return {"run_id": meta["run_id"], "algo": meta["algo"], "env": meta["env"],
            "env_kwargs": meta["group"]["spec"]["env_kwargs"],
            "changed": changed(base, meta), "config": meta["config"],
            "command_line": meta["command_line"],
            "seeds": meta["seeds"], "total_steps_per_seed": meta["total_steps_per_seed"],
            "updates": int(frame["update"].max()) + 1,
            "train_return_last100": last100.tolist(),
            "mean": float(last100.mean()), "iqm": float(stats.iqm(last100)),
            "final_eval_return": meta["final_eval_return"],
            f"entropy_last{late}": late_entropy(frame, late), "curve": iqm_curve(frame),
            "run_seconds": meta["run_seconds"],
            "env_steps_per_second": meta["env_steps_per_second"],
            "compile_seconds": meta["compile_seconds"], "git_commit": meta["git_commit"],
            "versions": meta["versions"], "devices": meta["devices"]}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", type=Path, help="run folders; the first is the baseline")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--late", type=int, default=100, help="updates the late entropy averages")
    args = ap.parse_args(argv)
    base = json.loads((args.runs[0] / "run.json").read_text())
    rows = [row(base, run, args.late) for run in args.runs]
    args.out.write_text(json.dumps({"baseline": rows[0]["run_id"], "rows": rows}, indent=1)
                        + "\n")
    for r in rows:
        print(f"{r['mean']:6.2f} (IQM {r['iqm']:.2f})  {r['changed'] or 'baseline'}")


if __name__ == "__main__":
    main()

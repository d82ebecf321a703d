"""The report every run ends with: ``report.md`` (summary table and config) and
``curves.png`` (training return and evaluation return over env steps, band over seeds)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np

from jaxrl import stats
from jaxrl.runs.files import atomic_write_bytes, atomic_write_text
from jaxrl.runs.plots import empty_note, plot_runs


def summary_lines(meta: dict, returns: np.ndarray) -> list[str]:
    s = stats.summarize(returns[np.isfinite(returns)]) if np.isfinite(returns).sum() else None
    iqm = f"{s['iqm']:.2f} [{s['iqm_ci_low']:.2f}, {s['iqm_ci_high']:.2f}]" if s else "n/a"
    mean = f"{s['mean']:.2f} ± {s['std']:.2f}" if s else "n/a"
    return [
        "| algo | env | seeds | steps/seed | final eval IQM [95% CI] | mean ± std | compile s | run s | env-steps/s |",
        "|---|---|---|---|---|---|---|---|---|",
        f"| {meta['algo']} | {meta['env']} | {meta['seeds']} | {meta['total_steps_per_seed']:,}"
        f"{frames_text(meta['total_steps_per_seed'], meta.get('frames_per_step'))} | "
        f"{iqm} | {mean} | {compile_text(meta)} | {meta['run_seconds']:.1f} | "
        f"{meta['env_steps_per_second']:,.0f} |",
        "",
        f"Interval: {s['ci_method']} over seeds." if s else "",
    ]


def frames_text(steps, frames_per_step: int | None) -> str:
    """`` (40M frames)`` for 10M steps of an env with a frame skip of 4; nothing without one."""
    if not frames_per_step or int(frames_per_step) <= 1:
        return ""
    frames = float(steps) * int(frames_per_step)
    return f" ({frames / 1e6:.4g}M frames)" if frames >= 1e6 else f" ({frames:,.0f} frames)"


def compile_text(meta: dict) -> str:
    """Compile seconds, marked when the programs came from the compilation cache."""
    if meta.get("compile_seconds") is None:
        return "–"
    source = meta.get("compile_source", "compiled")
    return f"{meta['compile_seconds']:.1f}" + ("" if source == "compiled" else f" ({source})")


def ran_on(meta: dict) -> str:
    """The devices the run's members ran on, out of the machine's when fewer: an Atari run
    keeps its seeds on one device of a 2-device CPU ("ran on 1 x cpu of 2 x cpu")."""
    machine = f"{meta['device_count']} x {meta['device_kind']}"
    used = meta.get("devices")  # "N x platform", from the engine
    if not used or used.split(" x ")[0] == str(meta["device_count"]):
        return f"ran on {machine}"
    return f"ran on {used} of {machine}"


def write_report(folder: Path, meta: dict, result) -> None:
    """``report.md`` and ``curves.png`` of a finished run (``result``: its `TrainResult`), with
    what it could not measure (`TrainResult.notes`: no training or evaluation episode ended)."""
    returns = np.asarray(result.final_eval_return, dtype=float)
    per_seed = " ".join(f"{r:.1f}" if np.isfinite(r) else "n/a" for r in returns)
    notes = result.notes()
    lines = [f"# {meta['algo']} on {meta['env']} — run {meta['run_id']}", ""]
    lines += summary_lines(meta, returns)
    lines += ["", f"Final evaluation return per seed: {per_seed}", ""]
    lines += [line for note in notes for line in (f"**Note:** {note}.", "")]
    lines += [f"Status: {meta['status']}; started {meta['started_at']}, ended {meta['ended_at']}; "
              f"git {meta['git_commit'] or 'n/a'}{' (dirty)' if meta['git_dirty'] else ''}; "
              f"{ran_on(meta)}.", "",
              f"Command: `{meta['command_line']}`", "", "![curves](curves.png)", "",
              "## Config", "", "```json", json.dumps(meta["config"], indent=2, default=str), "```",
              ""]
    atomic_write_text(folder / "report.md", "\n".join(lines))
    _write_curves(folder, meta, result, plot_runs)


def _write_curves(folder: Path, meta: dict, result, plot_runs) -> None:
    """``curves.png``: training return (or BC's loss) and evaluation return; a panel with
    nothing to draw says why in its middle, and no legend is asked of it."""
    from matplotlib.figure import Figure  # no pyplot: never touches the user's backend

    fig = Figure(figsize=(12, 4.2), dpi=110)
    axes = fig.subplots(1, 2)
    train = result.metrics.copy()
    if "episode_return_mean" in train:
        plot_runs({meta["algo"]: train}, "episode_return_mean", "training episode return",
                  ax=axes[0], empty="no training episode ended within the budget")
    elif "bc_nll" in train:  # behaviour cloning takes no env steps: its loss instead
        plot_runs({meta["algo"]: train}, "bc_nll", "expert negative log-likelihood", ax=axes[0])
    evals = result.evaluations
    title = "evaluation return (deterministic)"
    if len(evals):
        plot_runs({meta["algo"]: evals}, "eval_return", title, ax=axes[1],
                  empty="no evaluation episode ended within its step limit")
    else:
        axes[1].set_title(title)
        empty_note(axes[1], "no evaluation (eval_episodes=0)")
    for ax in axes:
        if not ax.lines and result.total_steps_per_seed:  # an empty panel spans the run
            ax.set_xlim(0, result.total_steps_per_seed)
    fig.suptitle(f"{meta['algo']} on {meta['env']}, {meta['seeds']} seeds")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    atomic_write_bytes(folder / "curves.png", buffer.getvalue())

"""Optional exporters of stored runs, one exported run per seed:

    jaxrl export tensorboard RUN_ID [--out DIR]   # event files; default <run folder>/tensorboard
    jaxrl export wandb RUN_ID [--out DIR]         # Weights & Biases, offline mode by default

TensorBoard uses ``tensorboardX`` (``pip install 'jaxrl[tensorboard]'``); W&B uses ``wandb``
(``pip install 'jaxrl[wandb]'``) in offline mode, so no server or account is needed
(``wandb sync`` uploads later). The embedded store stays the source of truth; exporting is a
read-only view of it. An output folder that cannot be written (an existing file, a path under
``/proc``, a read-only file system) is a one-line `OutputPathError` before anything is written.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from jaxrl.output_paths import check_folder
from jaxrl.runs.files import write_error
from jaxrl.runs.query import load_evaluations, load_metrics
from jaxrl.runs.store import RunStore


def to_tensorboard(run_id: str, out: str | None = None, store: RunStore | None = None) -> Path:
    """Write every stored metric as scalars ``train/<metric>`` (x = env steps) and evaluations as
    ``eval/return``, into ``out/seed_<k>/``. Returns the output folder."""
    try:
        from tensorboardX import SummaryWriter
    except ImportError as err:  # pragma: no cover - tensorboardX ships with brax
        raise ImportError("the TensorBoard exporter needs tensorboardX "
                          "(pip install 'jaxrl[tensorboard]')") from err
    store = store or RunStore()
    out_dir = Path(out) if out else Path(store.root) / run_id / "tensorboard"
    metrics = load_metrics(run_id, store)
    evals = load_evaluations(run_id, store)
    check_folder(out_dir, "--out")
    try:
        _write_tensorboard(SummaryWriter, out_dir, metrics, evals)
    except OSError as err:  # the folder changed since the check, or the disk filled
        raise write_error(out_dir, err) from None
    return out_dir


def _write_tensorboard(writer_class, out_dir: Path, metrics, evals) -> None:
    """One event file folder ``out_dir/seed_<k>`` per seed of ``metrics`` and ``evals``."""
    names = [c for c in metrics.columns if c not in ("run_id", "seed", "update", "env_steps")]
    for seed, frame in metrics.groupby("seed"):
        writer = writer_class(str(out_dir / f"seed_{int(seed)}"))
        for row in frame.itertuples(index=False):
            step = int(row.env_steps)
            for name in names:
                value = getattr(row, name)
                if np.isfinite(value):
                    writer.add_scalar(f"train/{name}", float(value), step)
        if len(evals):
            for row in evals[evals.seed == seed].itertuples(index=False):
                writer.add_scalar("eval/return", float(row.eval_return), int(row.env_steps))
        writer.close()


def _per_step_records(metrics, evals, seed) -> list[tuple[int, dict]]:
    """``[(env_steps, {"train/<m>": v, "eval/return": v})]`` in increasing step order, finite
    values only (W&B needs non-decreasing steps, so train and eval rows are merged)."""
    names = [c for c in metrics.columns if c not in ("run_id", "seed", "update", "env_steps")]
    records: dict[int, dict] = {}
    for row in metrics[metrics.seed == seed].itertuples(index=False):
        values = {f"train/{n}": float(getattr(row, n)) for n in names
                  if np.isfinite(getattr(row, n))}
        records.setdefault(int(row.env_steps), {}).update(values)
    if len(evals):
        for row in evals[evals.seed == seed].itertuples(index=False):
            if np.isfinite(row.eval_return):
                records.setdefault(int(row.env_steps), {})["eval/return"] = float(row.eval_return)
    return sorted(records.items())


def to_wandb(run_id: str, out: str | None = None, store: RunStore | None = None,
             project: str = "jaxrl", mode: str = "offline") -> Path:
    """Log a stored run to W&B as one run per seed (grouped by run id, config attached).
    Returns the folder the offline runs were written to."""
    try:
        import wandb
    except ImportError as err:
        raise ImportError("the W&B exporter needs wandb (pip install 'jaxrl[wandb]')") from err
    store = store or RunStore()
    meta = store.load(run_id)
    out_dir = Path(out) if out else Path(store.root) / run_id
    check_folder(out_dir, "--out")
    out_dir.mkdir(parents=True, exist_ok=True)
    metrics = load_metrics(run_id, store)
    evals = load_evaluations(run_id, store)
    for seed in sorted(metrics.seed.unique()):
        config = {**meta["config"], "algo": meta["algo"], "env": meta["env"],
                  "seed_index": int(seed), "jaxrl_run_id": run_id}
        run = wandb.init(project=project, mode=mode, dir=str(out_dir), group=run_id,
                         name=f"{run_id}-seed{int(seed)}", config=config, reinit="create_new")
        for step, values in _per_step_records(metrics, evals, seed):
            run.log(values, step=step)
        run.finish()
    return out_dir

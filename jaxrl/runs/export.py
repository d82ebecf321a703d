"""Optional exporters of stored runs: TensorBoard event files, one folder per seed.

    jaxrl export tensorboard RUN_ID [--out DIR]       # default: <run folder>/tensorboard

Uses ``tensorboardX`` (installed with brax; ``pip install jaxrl[tensorboard]`` pins it). The
embedded store stays the source of truth; exporting is a read-only view of it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import numpy as np

from jaxrl.runs.query import load_evaluations, load_metrics
from jaxrl.runs.store import RunStore


def to_tensorboard(run_id: str, out: Optional[str] = None, store: Optional[RunStore] = None) -> Path:
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
    names = [c for c in metrics.columns if c not in ("run_id", "seed", "update", "env_steps")]
    for seed, frame in metrics.groupby("seed"):
        writer = SummaryWriter(str(out_dir / f"seed_{int(seed)}"))
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
    return out_dir

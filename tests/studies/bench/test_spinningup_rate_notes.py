"""benchmarks/mujoco-cpu/NOTES.md's VPG hopper rate is the median, over the committed run's first
32 chunks, of each chunk's own env-steps per second (the median of its rows)."""

import re
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[3]
RUN = ROOT / "benchmarks/mujoco-cpu/progress-spinningup/20261130-141824-vpg-brax-hopper-ee973e"


def test_the_vpg_hopper_rate_is_its_first_32_chunks_median():
    notes = (ROOT / "benchmarks/mujoco-cpu/NOTES.md").read_text()
    (quoted,) = re.findall(r"<!-- vpg-rate -->([\d,]+)<!-- /vpg-rate -->", notes)
    chunks = [RUN / "metrics" / f"chunk-{i:05d}.parquet" for i in range(32)]
    rates = [float(np.median(pd.read_parquet(c)["env_steps_per_second"])) for c in chunks]
    assert f"{np.median(rates):,.0f}" == quoted
    assert (f"from {min(rates):,.0f} to {max(rates):,.0f}:"
            in " ".join(notes.split())), (min(rates), max(rates))

"""A tiny SAC run on a brax env learns: its metrics count gradient updates > 0.

The mujoco smoke (`benchmarks/mujoco-smoke-cpu`) ran SAC, TD3 and DDPG for 2,400 steps, under
the brax preset's ``learning_starts`` of 10,000: they never took a gradient step, so the smoke
showed they compile and act, not that they learn. Here ``learning_starts`` is small and the run
a few hundred steps, on brax's trivial ``fast`` env (through the same brax adapter and brax
preset as the MuJoCo bodies, compiled in seconds rather than a minute and a half for an MJX
body on 2 cores)."""

import numpy as np
import pandas as pd
import pytest

import jaxrl

pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore:Brax System:UserWarning"),
]


def test_a_tiny_sac_brax_run_takes_gradient_steps(tmp_path):
    result = jaxrl.train("sac", env="brax:fast", seeds=1, total_steps=400, progress=False,
                         runs_dir=str(tmp_path), num_envs=4, learning_starts=100,
                         batch_size=32, buffer_size=1_000, log_interval=25, hidden=(16, 16),
                         eval_episodes=1, env_kwargs={"episode_length": 50})
    m = result.metrics.sort_values("update")
    assert result.config.learning_starts == 100 and result.total_steps_per_seed == 400
    updates = m["gradient_updates"].to_numpy()
    assert updates[-1] > 0, updates  # the counter of gradient updates
    assert np.all(np.diff(updates) >= 0) and updates[0] == 0  # nothing before learning_starts
    learned = m[m["gradient_updates"] > 0]
    assert np.isfinite(learned[["critic_loss", "actor_loss", "alpha"]].to_numpy()).all()
    assert (learned["learning_fraction"] > 0).all()
    # the same count in the run store, where a report reads it
    chunks = sorted((tmp_path / result.run_id / "metrics").glob("chunk-*.parquet"))
    stored = pd.concat([pd.read_parquet(f) for f in chunks])
    assert stored["gradient_updates"].max() == updates[-1]

"""experiments/benchmarks/ppo_work.yaml: the mujoco suite's PPO walker2d defaults row with
baselines' gradient steps per sample and minibatch size, and nothing else changed."""

from pathlib import Path

import yaml

from jaxrl.algos.ppo import default_config
from jaxrl.studies.bench.suite import load_suite

ROOT = Path(__file__).resolve().parents[2]
BASELINES = yaml.safe_load((ROOT / "presets/ppo/baselines-mujoco.yaml").read_text())


def _gradient_steps_per_sample(c: dict) -> float:
    return c["update_epochs"] * c["num_minibatches"] / (c["num_envs"] * c["num_steps"])


def test_the_entry_is_the_defaults_row_with_baselines_gradient_steps_per_sample():
    row = {e.name: e for e in load_suite("mujoco").entries}["ppo/brax:walker2d"]
    (entry,) = load_suite("ppo_work").entries
    assert entry.name == "ppo-work5x/brax:walker2d"
    assert (entry.algo, entry.env, entry.env_kwargs, entry.total_steps, entry.seeds,
            entry.eval_episodes) == (row.algo, row.env, row.env_kwargs, row.total_steps,
                                     row.seeds, row.eval_episodes)
    assert entry.reference == {**row.reference, "note": entry.reference["note"]}
    assert row.config == {}
    defaults = vars(default_config(entry.env))
    moved = {**defaults, **entry.config}
    assert set(entry.config) == {"update_epochs", "num_minibatches"}
    assert _gradient_steps_per_sample(moved) == _gradient_steps_per_sample(BASELINES)
    batch = moved["num_envs"] * moved["num_steps"]
    assert batch // moved["num_minibatches"] == (
        BASELINES["num_envs"] * BASELINES["num_steps"] // BASELINES["num_minibatches"]) == 64
    assert _gradient_steps_per_sample(moved) / _gradient_steps_per_sample(defaults) == 5.0

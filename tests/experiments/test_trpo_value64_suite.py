"""experiments/benchmarks/trpo_value64.yaml: the mujoco suite's TRPO defaults rows on hopper,
walker2d and halfcheetah with the one setting that closed most of TRPO reacher's gap moved to
baselines' value (benchmarks/trpo-reacher-cpu), and nothing else."""

from pathlib import Path

import yaml

from jaxrl.algos.trpo import default_config
from jaxrl.studies.bench.suite import load_suite

ROOT = Path(__file__).resolve().parents[2]
BASELINES = yaml.safe_load((ROOT / "presets/trpo/baselines-mujoco.yaml").read_text())


def test_each_entry_is_the_defaults_row_with_baselines_value_minibatch():
    base = {e.name: e for e in load_suite("mujoco").entries}
    entries = load_suite("trpo_value64").entries
    assert [e.env for e in entries] == ["brax:hopper", "brax:walker2d", "brax:halfcheetah"]
    for e in entries:
        row = base[f"trpo/{e.env}"]
        assert e.name == f"trpo-value64/{e.env}"
        assert (e.algo, e.env, e.env_kwargs, e.total_steps, e.seeds, e.eval_episodes) == (
            row.algo, row.env, row.env_kwargs, row.total_steps, row.seeds, row.eval_episodes)
        assert e.reference == {**row.reference, "note": e.reference["note"]}
        assert row.config == {} and e.config == {"value_minibatches": 64}
        defaults = default_config(e.env)
        batch = defaults.num_envs * defaults.num_steps
        assert batch // 64 == BASELINES["num_envs"] * BASELINES["num_steps"] // BASELINES[
            "value_minibatches"] == 64
        assert defaults.value_minibatches == 4

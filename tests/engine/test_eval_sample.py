"""The ``eval_sample`` engine option: the final evaluation follows the policy's sampled actions
instead of its mode (Navix's and rejax's baselines evaluate so), is recorded with the run, and
a bad value is one line, from `train` and from a suite."""

import numpy as np
import pytest

import jaxrl
from jaxrl.config import ConfigError
from jaxrl.runs.store import RunStore
from jaxrl.studies.bench.suite import SuiteError, load_suite

# one PPO update on the action probe (zero observation, reward +1 or -1 by action): the policy
# is still near uniform, so its mode takes one action in every episode and its samples both
RUN = dict(env="probe:action", total_steps=256, num_envs=16, num_steps=16, progress=False,
           eval_episodes=64, seed=3)


def test_the_sampled_evaluation_takes_both_actions_where_the_mode_takes_one(tmp_path):
    mode = jaxrl.train("ppo", seeds=2, store=False, **RUN)
    sampled = jaxrl.train("ppo", seeds=2, runs_dir=str(tmp_path), eval_sample=True, **RUN)
    assert set(np.abs(mode.final_eval_return)) == {1.0}  # every episode the same action
    assert (np.abs(sampled.final_eval_return) < 0.9).all()  # 64 episodes of both actions
    meta = RunStore(tmp_path).load(sampled.run_id)
    assert meta["group"]["spec"]["eval_sample"] is True


def test_a_bad_eval_sample_is_one_line(tmp_path):
    with pytest.raises(ConfigError, match="eval_sample must be true or false"):
        jaxrl.train("ppo", seeds=1, store=False, eval_sample="yes", **RUN)
    suite = tmp_path / "s.yaml"
    suite.write_text("name: s\nentries:\n  - {algo: ppo, env: CartPole-v1, total_steps: 1000,\n"
                     "     config: {eval_sample: 'yes'}}\n")
    with pytest.raises(SuiteError, match="eval_sample must be true or false"):
        load_suite(str(suite))

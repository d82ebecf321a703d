"""VPG, A2C and TRPO on the shared on-policy machinery (jaxrl/algos/onpolicy.py): separate
value fitting refuses a shared network, and each one's diagnostics reach the API and the run
store. (Key discipline for all algorithms: test_keys.py; the probe ladder: test_probe_ladder.py.)"""

import pytest

import jaxrl
from jaxrl import algos
from jaxrl.config import ConfigError
from jaxrl.runs import query

FAMILY = ("vpg", "a2c", "trpo")


@pytest.mark.parametrize("algo", ["vpg", "trpo"])
def test_separate_value_fitting_rejects_a_shared_network(algo):
    with pytest.raises(ConfigError, match="shared_network"):
        algos.get(algo).config_cls(shared_network=True)


EXPECTED_METRICS = {
    "vpg": ("policy_loss", "entropy", "approx_kl", "grad_norm", "value_loss", "value_grad_norm"),
    "a2c": ("policy_loss", "value_loss", "entropy", "approx_kl", "grad_norm"),
    "trpo": ("kl_after_step", "line_search_steps", "cg_residual", "surrogate_improvement",
             "expected_improvement", "step_accepted", "approx_kl", "value_loss", "entropy"),
}


@pytest.mark.parametrize("algo", FAMILY)
def test_diagnostics_reach_the_api_and_the_run_store(algo):
    result = jaxrl.train(algo, env="CartPole-v1", seeds=2, total_steps=2048, progress=False,
                         num_envs=4, num_steps=16)
    common = ("episode_return_mean", "entropy_relative", "residual_variance", "learning_rate",
              "env_steps", "env_steps_per_second")
    for col in EXPECTED_METRICS[algo] + common:
        assert col in result.metrics, col
    stored = query.load_metrics(result.run_id)
    for col in EXPECTED_METRICS[algo]:
        assert col in stored, col
    assert len(stored) == len(result.metrics)

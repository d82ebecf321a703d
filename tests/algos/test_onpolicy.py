"""VPG, A2C and TRPO on the shared on-policy machinery (jaxrl/algos/onpolicy.py): separate
value fitting refuses a shared network, and each one's diagnostics reach the API and the run
store, and PopArt keeps the value function while its statistics move. (Key discipline for all algorithms: test_keys.py; the probe ladder: test_probe_ladder.py.)"""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import envs
import jaxrl
from jaxrl import algos
from jaxrl.algos import onpolicy
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


# -- PopArt (onpolicy.adapt_value_head) ----------------------------------------------------------
def _popart_parts(algo: str, shared: bool):
    env, params = envs.make("CartPole-v1")
    spec = algos.get(algo)
    config = spec.config_cls(popart=True, num_envs=4, num_steps=8, shared_network=shared,
                             normalize_obs=False)
    return env, params, spec, config


@pytest.mark.parametrize("algo,shared", [("ppo", True), ("vpg", False)])
def test_popart_preserves_the_value_function_when_its_statistics_move(algo, shared):
    env, params, spec, config = _popart_parts(algo, shared)
    static = config.static()
    state = spec.init(jax.random.PRNGKey(0), env, params, config)
    value = spec.policy(static, env, params).value
    obs = jax.random.normal(jax.random.PRNGKey(1), (64, 4))
    batch = onpolicy.Batch(obs=obs, action=jnp.zeros(64, jnp.int32), log_prob=jnp.zeros(64),
                           value=value(state, obs), advantage=jnp.full(64, 500.0),
                           target=jnp.linspace(0.0, 3000.0, 64))

    @jax.jit
    def before_after(state, batch):
        adapted, normalized, metrics = onpolicy.adapt_value_head(state, batch, static)
        head = onpolicy.make_network(static, env, params).apply(adapted.params, obs,
                                                                method="value")
        return value(state, obs), value(adapted, obs), normalized, head, metrics

    old, new, normalized, head, metrics = before_after(state, batch)
    assert float(metrics["popart_sigma"]) > 100.0  # the statistics did move
    np.testing.assert_allclose(new, old, rtol=1e-5, atol=1e-4)
    # The batch is in the head's units under the new statistics: values are its outputs.
    np.testing.assert_allclose(normalized.value, head, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(normalized.target * metrics["popart_sigma"] + metrics["popart_mean"],
                               batch.target, rtol=1e-5, atol=1e-2)
    np.testing.assert_allclose(normalized.advantage * metrics["popart_sigma"], batch.advantage,
                               rtol=1e-5)


def test_popart_off_leaves_the_batch_and_the_state_alone():
    env, params, spec, config = _popart_parts("a2c", False)
    config = dataclasses.replace(config, popart=False)
    state = spec.init(jax.random.PRNGKey(0), env, params, config)
    batch = onpolicy.Batch(*(jnp.ones(8),) * 6)
    same_state, same_batch, metrics = onpolicy.adapt_value_head(state, batch, config.static())
    assert same_state is state and same_batch is batch and metrics == {}


def test_popart_learns_the_obs_value_probe_at_a_reward_scale_of_1000():
    # probe:obs-value pays +-1 by the observation's sign on a one-step episode: V = +-1000 once
    # the reward is scaled, targets of mean 0 and sigma 1000, which the head learns as +-1.
    result = jaxrl.train("ppo", env="probe:obs-value", seeds=2, total_steps=16_384,
                         progress=False, store=False, popart=True,
                         env_kwargs={"reward_scale": 1000.0})
    env, params = envs.make("probe:obs-value")
    answer = env.answer(0.9, params)
    value = jax.vmap(algos.get("ppo").policy(result.config, env, params).value, (0, None))
    v = np.asarray(value(result.state, np.asarray(answer.observations, np.float32)))
    np.testing.assert_allclose(v, np.broadcast_to(1000.0 * answer.values, v.shape),
                               atol=1000.0 * answer.value_tolerance)
    assert np.all(result.metrics.groupby("seed")["popart_sigma"].last() > 500.0)

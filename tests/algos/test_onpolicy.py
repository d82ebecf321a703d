"""VPG, A2C and TRPO on the shared on-policy machinery: the RMSProp
epsilon conventions, shared vs separate networks, and their diagnostics end to end."""

import jax
import jax.numpy as jnp
import numpy as np
import optax
import pytest

import envs
import jaxrl
from jaxrl import algos
from jaxrl.algos import a2c, onpolicy
from jaxrl.config import ConfigError
from jaxrl.ops import clipped_adam
from jaxrl.runs import query

FAMILY = ("vpg", "a2c", "trpo")


@pytest.mark.parametrize("style, expected", [
    # TF1: accumulator starts at 1, epsilon inside the square root.
    ("tensorflow", lambda g, v: g / np.sqrt(v + 1e-2)),
    # PyTorch: accumulator starts at 0, epsilon outside.
    ("pytorch", lambda g, v: g / (np.sqrt(v) + 1e-2)),
])
def test_rmsprop_epsilon_conventions(style, expected):
    config = a2c.A2CConfig(rmsprop_style=style, max_grad_norm=1e9)
    hp = config.replace(rmsprop_eps=1e-2, learning_rate=1.0).hparams()
    tx = a2c.optimizers(hp, config, jnp.float32(1.0))["all"]
    params = {"w": jnp.zeros(3)}
    opt_state = tx.init(params)
    v = 1.0 if style == "tensorflow" else 0.0
    for g in (np.array([0.1, -2.0, 0.0]), np.array([0.5, 0.5, 3.0])):
        updates, opt_state = tx.update({"w": jnp.asarray(g, jnp.float32)}, opt_state, params)
        v = 0.99 * v + 0.01 * g**2
        np.testing.assert_allclose(np.asarray(updates["w"]), -expected(g, v), rtol=1e-5,
                                   atol=1e-7)


def test_a2c_adam_option_and_shared_network():
    result = jaxrl.train("a2c", env="CartPole-v1", seeds=2, total_steps=16 * 5 * 8,
                         progress=False, store=False, optimizer="adam", shared_network=True)
    tree = result.state.params["params"]
    assert set(tree) == {"torso", "policy", "value_net"}
    assert isinstance(result.state.opt_state["all"][1], optax.ScaleByAdamState)
    assert np.isfinite(result.metrics.policy_loss).all()


@pytest.mark.parametrize("algo", ["vpg", "trpo"])
def test_separate_value_fitting_rejects_a_shared_network(algo):
    with pytest.raises(ConfigError, match="shared_network"):
        algos.get(algo).config_cls(shared_network=True)


def test_vpg_value_fit_leaves_the_policy_alone():
    env, env_params = envs.make("CartPole-v1")
    config = algos.get("vpg").default_config("CartPole-v1").replace(num_envs=2, num_steps=16)
    state = algos.get("vpg").init(jax.random.key(0), env, env_params, config)
    network = onpolicy.make_network(config, env, env_params)
    _, traj = onpolicy.rollout(state, jax.random.key(1), config, env, env_params, network)
    batch = onpolicy.make_batch(state, traj, traj.reward, config, network)
    opt = clipped_adam(state.hparams, 1e-2).init(onpolicy.param_group(state.params, "value"))
    params, _, metrics = onpolicy.fit_value(state.params, opt, clipped_adam(state.hparams, 1e-2),
                                            batch, jax.random.key(2), config, network)
    for a, b in zip(jax.tree.leaves(onpolicy.param_group(state.params, "policy")),
                    jax.tree.leaves(onpolicy.param_group(params, "policy"))):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    moved = [not np.array_equal(np.asarray(a), np.asarray(b)) for a, b in zip(
        jax.tree.leaves(onpolicy.param_group(state.params, "value")),
        jax.tree.leaves(onpolicy.param_group(params, "value")))]
    assert all(moved) and np.isfinite(float(metrics["value_loss"]))


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

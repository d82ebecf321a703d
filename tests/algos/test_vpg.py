"""VPG: the value regression after the policy step moves the value network only."""

import jax
import numpy as np

import envs
from jaxrl import algos
from jaxrl.algos import onpolicy
from jaxrl.ops import clipped_adam


def test_vpg_value_fit_leaves_the_policy_alone():
    env, env_params = envs.make("CartPole-v1")
    config = algos.get("vpg").default_config("CartPole-v1").replace(num_envs=2, num_steps=16)
    state = algos.get("vpg").init(jax.random.key(0), env, env_params, config)
    network = onpolicy.make_network(config, env, env_params)
    _, _, traj = onpolicy.rollout(state, jax.random.key(1), config, env, env_params, network)
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

"""TRPO's pieces checked against explicit linear algebra: the Fisher-vector product, and the
trust region holding after every update (conjugate gradient itself: tests/ops/test_cg.py)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.flatten_util import ravel_pytree

import envs
from jaxrl import algos
from jaxrl.algos import onpolicy, trpo


def _tiny_problem(env_name: str):
    env, params = envs.make(env_name)
    config = algos.get("trpo").default_config(env_name).replace(hidden=(5,), num_envs=2,
                                                                 num_steps=4, value_minibatches=1)
    network = onpolicy.make_network(config, env, params)
    obs_dim = env.observation_space(params).shape[0]
    net_params = network.init(jax.random.key(1), jnp.zeros((1, obs_dim)))
    obs = jax.random.normal(jax.random.key(2), (6, obs_dim))
    return network, net_params, obs, config


def _flat_policy(network, net_params, obs):
    theta, unravel = ravel_pytree(onpolicy.param_group(net_params, "policy"))
    dist_at = lambda t: network.apply(
        onpolicy.with_param_group(net_params, "policy", unravel(t)), obs, method=network.dist)
    return theta, dist_at


def _check_fvp(theta, dist_at, explicit_fisher):
    old = jax.tree.map(jax.lax.stop_gradient, dist_at(theta))
    kl = lambda t: jnp.mean(old.kl(dist_at(t)))
    fvp = trpo.fisher_vector_product(kl, theta, damping=0.1)
    v = jax.random.normal(jax.random.key(3), theta.shape)
    np.testing.assert_allclose(np.asarray(fvp(v)), explicit_fisher @ np.asarray(v) + 0.1 * v,
                               rtol=2e-3, atol=2e-5)


def test_fisher_vector_product_matches_explicit_fisher_categorical():
    network, net_params, obs, _ = _tiny_problem("CartPole-v1")
    theta, dist_at = _flat_policy(network, net_params, obs)
    n = dist_at(theta).logits.shape[-1]
    # F = E_s sum_a pi(a|s) grad log pi(a|s) grad log pi(a|s)^T, exactly (sum over actions).
    fisher = np.zeros((theta.size, theta.size))
    probs = np.asarray(jax.nn.softmax(dist_at(theta).logits))
    grad_log_prob = jax.jit(jax.grad(
        lambda t, i, a: dist_at(t).log_prob(jnp.full(obs.shape[0], a))[i]))
    for i in range(obs.shape[0]):
        for a in range(n):
            g = np.asarray(grad_log_prob(theta, i, a))
            fisher += probs[i, a] * np.outer(g, g) / obs.shape[0]
    _check_fvp(theta, dist_at, fisher)


def test_fisher_vector_product_matches_explicit_fisher_gaussian():
    network, net_params, obs, _ = _tiny_problem("Pendulum-v1")
    theta, dist_at = _flat_policy(network, net_params, obs)
    # For N(mu, sigma^2) in (mu, log sigma): F = J^T diag(1/sigma^2, 2) J per state.
    params_of = lambda t: jnp.concatenate([dist_at(t).mean, dist_at(t).log_std], axis=-1)
    jac = np.asarray(jax.jacobian(params_of)(theta))  # [S, 2d, P]
    dist = dist_at(theta)
    d = dist.mean.shape[-1]
    fisher = np.zeros((theta.size, theta.size))
    for i in range(obs.shape[0]):
        w = np.concatenate([np.exp(-2 * np.asarray(dist.log_std[i])), 2 * np.ones(d)])
        fisher += jac[i].T @ np.diag(w) @ jac[i] / obs.shape[0]
    _check_fvp(theta, dist_at, fisher)


def _rollout_batch(state, config, env, env_params):
    network = onpolicy.make_network(config, env, env_params)
    key = jax.random.key(5)
    _, _, traj = onpolicy.rollout(state, key, config, env, env_params, network)
    return network, onpolicy.make_batch(state, traj, traj.reward, config, network)


def _kl_between(network, old_params, new_params, obs):
    old = network.apply(old_params, obs, method=network.dist)
    new = network.apply(new_params, obs, method=network.dist)
    return jnp.mean(old.kl(new))


@pytest.mark.parametrize("env_name", ["CartPole-v1", "Pendulum-v1"])
def test_every_update_respects_the_trust_region(env_name):
    env, env_params = envs.make(env_name)
    env = envs.EpisodeStatistics(env)
    config = trpo.default_config(env_name).replace(num_envs=4, num_steps=64, value_minibatches=4,
                                                   hidden=(16, 16))
    state = jax.jit(lambda k: trpo.ALGORITHM.init(k, env, env_params, config))(jax.random.key(0))
    network = onpolicy.make_network(config, env, env_params)
    # each piece compiled once (op by op, the loop would compile hundreds of small programs)
    step = jax.jit(lambda s: trpo.ALGORITHM.train_step(s, config, env, env_params))
    rollout = jax.jit(lambda s: _rollout_batch(s, config, env, env_params)[1])
    update = jax.jit(lambda s, b, k: trpo.update(s, b, k, config, network))
    kl_between = jax.jit(lambda old, new, obs: _kl_between(network, old, new, obs))
    accepted = 0
    for _ in range(6):
        batch = rollout(state)
        updated = update(state, batch, jax.random.key(9))
        params, metrics = updated.params, updated.metrics
        kl = float(kl_between(state.params, params, batch.obs))
        old_policy = onpolicy.param_group(state.params, "policy")
        new_policy = onpolicy.param_group(params, "policy")
        if float(metrics["step_accepted"]):
            accepted += 1
            assert kl <= config.max_kl * 1.001, kl
            assert float(metrics["surrogate_improvement"]) > 0
        else:
            for a, b in zip(jax.tree.leaves(old_policy), jax.tree.leaves(new_policy)):
                np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
        state, _ = step(state)
    assert accepted >= 3  # the line search is not just rejecting everything


def test_a_step_that_cannot_improve_is_rejected_and_params_are_unchanged():
    env, env_params = envs.make("CartPole-v1")
    config = trpo.default_config("CartPole-v1").replace(num_envs=2, num_steps=32,
                                                        normalize_advantages=False)
    state = trpo.ALGORITHM.init(jax.random.key(0), env, env_params, config)
    network, batch = _rollout_batch(state, config, env, env_params)
    batch = batch.replace(advantage=jnp.zeros_like(batch.advantage))  # no direction improves
    update = jax.jit(lambda s, b, k: trpo.update(s, b, k, config, network))
    updated = update(state, batch, jax.random.key(1))
    params, metrics = updated.params, updated.metrics
    assert float(metrics["step_accepted"]) == 0
    assert float(metrics["line_search_steps"]) == config.backtrack_iters
    for a, b in zip(jax.tree.leaves(onpolicy.param_group(state.params, "policy")),
                    jax.tree.leaves(onpolicy.param_group(params, "policy"))):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_the_entropy_bonus_alone_moves_the_policy_towards_more_entropy():
    """With every advantage 0 the surrogate is ``ent_coef`` times the mean entropy (reading
    002's Atari TRPO uses 0.1): the step is taken, inside the trust region, and raises the
    entropy; with ``ent_coef`` 0 the same batch moves nothing (the test above)."""
    env, env_params = envs.make("CartPole-v1")
    config = trpo.default_config("CartPole-v1").replace(num_envs=2, num_steps=32,
                                                        normalize_advantages=False, ent_coef=0.1)
    state = trpo.ALGORITHM.init(jax.random.key(0), env, env_params, config)
    network, batch = _rollout_batch(state, config, env, env_params)
    batch = batch.replace(advantage=jnp.zeros_like(batch.advantage))
    # a peaked policy (p ~ 0.95 / 0.05), so a step of KL delta does not overshoot the uniform one
    head = state.params["params"]["policy"]["MLP_0"]["Dense_2"]
    peaked = {**head, "bias": jnp.array([1.5, -1.5])}
    params = jax.tree_util.tree_map(lambda x: x, state.params)
    params["params"]["policy"]["MLP_0"]["Dense_2"] = peaked
    state = state.replace(params=params)
    updated = jax.jit(lambda s, b, k: trpo.update(s, b, k, config, network))(
        state, batch, jax.random.key(1))
    assert float(updated.metrics["step_accepted"]) == 1
    entropy = lambda p: float(network.apply(p, batch.obs, method=network.dist).entropy().mean())
    assert entropy(updated.params) > entropy(state.params)
    kl = float(_kl_between(network, state.params, updated.params, batch.obs))
    assert 0 < kl <= config.max_kl * 1.001
    _, _, surrogate, *_ = trpo.policy_functions(state.params, network, batch, config, 0.1)
    theta, _ = ravel_pytree(onpolicy.param_group(state.params, "policy"))
    np.testing.assert_allclose(float(surrogate(theta)), 0.1 * entropy(state.params), rtol=1e-5)

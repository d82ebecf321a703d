"""Minibatch gradient descent over a `Batch` and the value regression of VPG and TRPO."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import optax

from jaxrl.algos.onpolicy.batch import Batch, check_batch, forward
from jaxrl.algos.onpolicy.config import SeparateValueStatic
from jaxrl.algos.onpolicy.state import param_group, with_param_group
from jaxrl.ops import permutation
from jaxrl.ops.metric_sums import sum_scan, zero_metrics
from jaxrl.parts import diagnostics as diag


def shuffle_into_minibatches(key, batch, num_minibatches: int):
    """Permute a ``[B, ...]`` pytree and split it into ``[M, B / M, ...]``. A sequence `Batch`
    is split by envs instead: ``[T, N, ...]`` -> ``[M, T, N / M, ...]`` (its memory
    ``[N, ...]`` -> ``[M, N / M, ...]``), so each minibatch holds whole sequences."""
    if isinstance(batch, Batch) and batch.first is not None:
        return shuffle_envs_into_minibatches(key, batch, num_minibatches)
    size = jax.tree.leaves(batch)[0].shape[0]
    perm = permutation(key, size)
    return jax.tree.map(
        lambda x: x[perm].reshape(num_minibatches, size // num_minibatches, *x.shape[1:]), batch
    )


def shuffle_envs_into_minibatches(key, batch: Batch, num_minibatches: int) -> Batch:
    """A sequence `Batch`'s envs permuted and split into ``num_minibatches`` groups."""
    num_envs = batch.action.shape[1]
    perm = permutation(key, num_envs)
    size = num_envs // num_minibatches

    def split_steps(x):  # [T, N, ...] -> [M, T, N / M, ...]
        x = x[:, perm].reshape(x.shape[0], num_minibatches, size, *x.shape[2:])
        return jnp.moveaxis(x, 1, 0)

    def split_envs(x):  # [N, ...] -> [M, N / M, ...]
        return x[perm].reshape(num_minibatches, size, *x.shape[1:])

    memory = jax.tree.map(split_envs, batch.memory)
    steps = jax.tree.map(split_steps, dataclasses.replace(batch, memory=None))
    return dataclasses.replace(steps, memory=memory)


def minibatch_sgd(loss_fn, params, opt_state, tx, batch, key, epochs: int, num_minibatches: int,
                  verbosity: str):
    """``epochs`` passes of shuffled minibatch gradient steps on ``loss_fn(params, mb) ->
    (loss, aux)``. Returns ``(params, opt_state, aux and gradient stats averaged over steps)``
    (float32, summed in the loops' carry: `jaxrl.ops.metric_sums`). One minibatch means
    full-batch steps (no shuffle)."""
    grad_fn = jax.grad(loss_fn, has_aux=True)

    def step(carry, mb):
        params, opt_state = carry
        with jax.named_scope("gradient"):
            grads, aux = grad_fn(params, mb)
        with jax.named_scope("optimizer"):
            updates, opt_state = tx.update(grads, opt_state, params)
            params = optax.apply_updates(params, updates)
        with jax.named_scope("diagnostics"):
            aux.update(diag.gradient_stats(grads, updates, verbosity))
        return (params, opt_state), aux

    def minibatches_of(epoch_key):  # [M, B / M, ...]
        if num_minibatches == 1:
            return jax.tree.map(lambda x: x[None], batch)
        return shuffle_into_minibatches(epoch_key, batch, num_minibatches)

    keys = jax.random.split(key, epochs)
    zeros, unravel = zero_metrics(lambda: step(
        (params, opt_state), jax.tree.map(lambda x: x[0], minibatches_of(keys[0])))[1])

    def epoch(carry_sums, epoch_key):  # every step's metrics summed in one carried vector
        carry, sums = carry_sums
        return sum_scan(step, carry, minibatches_of(epoch_key), sums), None

    ((params, opt_state), sums), _ = jax.lax.scan(epoch, ((params, opt_state), zeros), keys)
    return params, opt_state, unravel(sums / (epochs * num_minibatches))


def fit_value(params, opt_state, tx, batch: Batch, key, static: SeparateValueStatic, network):
    """Regress the value MLP on the batch's lambda-return targets (VPG, TRPO): ``value_epochs``
    x ``value_minibatches`` Adam steps on ``0.5 (V(s) - target)^2``, the policy untouched.
    Returns ``(params, value opt_state, metrics prefixed value_)``."""

    def loss(value_params, mb: Batch):
        check_batch(mb)
        v = network.apply(with_param_group(params, "value", value_params), mb.obs,
                          method=network.value)
        value_loss = 0.5 * jnp.mean(jnp.square(v - mb.target))
        return value_loss, {"loss": value_loss}

    value_params, opt_state, aux = minibatch_sgd(
        loss, param_group(params, "value"), opt_state, tx, batch, key, static.value_epochs,
        static.value_minibatches, static.verbosity)
    metrics = {f"value_{k}": v for k, v in aux.items()}
    return with_param_group(params, "value", value_params), opt_state, metrics


def policy_shift(network, new_params, batch: Batch) -> dict:
    """How far the update moved the policy on the batch: ``approx_kl`` = E[(r - 1) - log r]
    (an unbiased, non-negative estimate of KL(old || new)), r = pi_new(a|s) / pi_old(a|s)."""
    with jax.named_scope("diagnostics"):
        log_ratio = forward(network, new_params, batch)[0].log_prob(batch.action)
        log_ratio = log_ratio - batch.log_prob
        return {"approx_kl": jnp.mean(jnp.expm1(log_ratio) - log_ratio)}

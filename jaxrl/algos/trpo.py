"""Trust Region Policy Optimization (Schulman et al., 2015), as in Spinning Up.

    for each update:                                      (onpolicy.make_train_step)
        collect T steps from N envs with pi_old
        A = GAE(lambda) bootstrapped through truncation; R = A + V_phi(s)
        g = grad of the surrogate L(theta) = E[pi_theta(a|s) / pi_old(a|s) A] + c_H H[pi_theta]
            at theta_old (c_H = ent_coef: 0 in Spinning Up, 0.1 in reading 002's Atari runs)
        x = CG solve of (F + damping I) x = g, F v = Hessian-vector product of KL(pi_old || pi_theta)
        full step s = sqrt(2 delta / x.Fx) x
        theta <- theta_old + c^j s for the first j with KL <= delta and L improved; else theta_old
        phi <- value regression of V_phi(s) on R                    (onpolicy.fit_value)

The Fisher matrix is never formed: ``F v`` is forward-over-reverse autodiff of the mean KL.
The line search is a ``lax.while_loop`` that stops at the first acceptable candidate (usually
the first), so it stays one program under jit and vmap. As in OpenAI baselines, the
Fisher-vector products may use a subsample of the batch (``fisher_subsample``); the KL
constraint itself is always checked on the whole batch.
"""

from __future__ import annotations

import dataclasses

import chex
import jax
import jax.numpy as jnp
from flax import struct
from jax.flatten_util import ravel_pytree

from jaxrl.algos import onpolicy
from jaxrl.algos.families import family_defaults
from jaxrl.config import NON_NEGATIVE, POSITIVE, UNIT_OPEN, AlgoConfig, defaults, static, traced
from jaxrl.ops import clipped_adam, conjugate_gradient


@dataclasses.dataclass(frozen=True)
@defaults(anneal_lr=False)
class TRPOStatic(onpolicy.SeparateValueStatic):
    """TRPO's static fields (shapes, loop counts, flags); the value learning rate is not
    annealed."""

    cg_iters: int = static(10, "conjugate-gradient iterations")
    backtrack_iters: int = static(10, "line-search candidates c^0 .. c^(n-1)")
    fisher_subsample: int = static(4, "Fisher-vector products on every k-th sample (1 = all)")


@struct.dataclass(frozen=True)
class TRPOHparams(onpolicy.SeparateValueHparams):
    """TRPO's traced hyperparameters (``state.hparams``)."""

    max_kl: float = traced(0.01, "trust region radius delta on the mean KL(old || new)",
                           valid=POSITIVE)
    cg_damping: float = traced(0.1, "damping added to the Fisher-vector product",
                               valid=NON_NEGATIVE)
    backtrack_coef: float = traced(0.8, "line-search shrink factor c", valid=UNIT_OPEN)
    ent_coef: float = traced(0.0, "entropy bonus c_H in the surrogate (and its line search)",
                             valid=NON_NEGATIVE)


@dataclasses.dataclass(frozen=True)
class TRPOConfig(AlgoConfig, TRPOHparams, TRPOStatic):
    """TRPO's config: the fields of `TRPOStatic` and `TRPOHparams` as one."""


def default_config(env_name: str) -> TRPOConfig:
    """TRPO's defaults for ``env_name``'s family (`jaxrl.algos.families`)."""
    return TRPOConfig(**family_defaults("trpo", env_name))


def optimizers(hp: TRPOHparams, static: TRPOStatic, lr_scale: jax.Array) -> onpolicy.ParamGroups:
    """Only the value MLP has an optimizer; the policy moves by the natural-gradient step."""
    return onpolicy.ParamGroups(value=clipped_adam(hp, hp.vf_learning_rate * lr_scale))


def policy_functions(params, network, batch: onpolicy.Batch, static: TRPOStatic,
                     ent_coef: float | jax.Array = 0.0):
    """Flattened-parameter views of the policy on the batch (leaves ``[B, ...]``):
    ``(theta_old [P], unravel, surrogate(theta), kl(theta), fisher_kl(theta), entropy_old)``.
    ``surrogate`` (with ``ent_coef`` times the policy's mean entropy) and ``kl`` are means
    over the batch; ``fisher_kl`` is the KL over every
    ``fisher_subsample``-th sample (for the FVP only: the line search checks the constraint on
    the full batch)."""
    onpolicy.check_batch(batch)
    theta_old, unravel = ravel_pytree(onpolicy.param_group(params, "policy"))
    chex.assert_rank(theta_old, 1)
    dist_at = lambda theta, obs: network.apply(
        onpolicy.with_param_group(params, "policy", unravel(theta)), obs, method=network.dist)
    old = jax.tree.map(jax.lax.stop_gradient, dist_at(theta_old, batch.obs))
    adv = onpolicy.standardize(batch.advantage, static)
    every = static.fisher_subsample
    old_sub = jax.tree.map(lambda x: x[::every], old)

    def surrogate(theta):
        dist = dist_at(theta, batch.obs)
        log_ratio = dist.log_prob(batch.action) - batch.log_prob
        return jnp.mean(jnp.exp(log_ratio) * adv) + ent_coef * jnp.mean(dist.entropy())

    def kl(theta):
        return jnp.mean(old.kl(dist_at(theta, batch.obs)))

    def fisher_kl(theta):
        return jnp.mean(old_sub.kl(dist_at(theta, batch.obs[::every])))

    return theta_old, unravel, surrogate, kl, fisher_kl, old.entropy().mean()


def fisher_vector_product(kl, theta, damping):
    """``v -> (F + damping I) v`` with F the Hessian of ``kl`` at ``theta`` (= the Fisher
    information of the policy there), by forward-over-reverse autodiff."""
    grad_kl = jax.grad(kl)
    return lambda v: jax.jvp(grad_kl, (theta,), (v,))[1] + damping * v


def line_search(surrogate, kl, theta_old, full_step, hp: TRPOHparams, static: TRPOStatic):
    """First ``j < backtrack_iters`` with KL(theta_j) <= delta and L(theta_j) > L(theta_old),
    theta_j = theta_old + c^j full_step. Returns ``(accepted, j, improvement_j, kl_j)``."""
    surrogate_old = surrogate(theta_old)

    def candidate(j):
        theta = theta_old + hp.backtrack_coef ** j * full_step
        improvement, divergence = surrogate(theta) - surrogate_old, kl(theta)
        ok = (divergence <= hp.max_kl) & (improvement > 0.0) & jnp.isfinite(improvement)
        return ok, improvement, divergence

    def searching(carry):
        j, ok, _, _ = carry
        return (~ok) & (j < static.backtrack_iters - 1)

    def try_next(carry):
        j = carry[0] + 1
        return (j, *candidate(j.astype(jnp.float32)))

    first = (jnp.int32(0), *candidate(jnp.float32(0.0)))
    j, ok, improvement, divergence = jax.lax.while_loop(searching, try_next, first)
    return ok, j, improvement, divergence


def natural_gradient_step(surrogate, kl, fisher_kl, theta_old, hp: TRPOHparams,
                          static: TRPOStatic):
    """The trust-region step with backtracking line search from ``theta_old`` ``[P]``. Returns
    ``(theta_new [P], metrics)``; ``theta_new == theta_old`` exactly when no candidate
    satisfies both conditions."""
    g = jax.grad(surrogate)(theta_old)
    fvp = fisher_vector_product(fisher_kl, theta_old, hp.cg_damping)
    x, residual = conjugate_gradient(fvp, g, static.cg_iters)
    x_fx = jnp.dot(x, fvp(x))
    full_step = jnp.sqrt(2.0 * hp.max_kl / jnp.maximum(x_fx, 1e-12)) * x
    accepted, j, improvement, divergence = line_search(surrogate, kl, theta_old, full_step, hp,
                                                       static)
    step = hp.backtrack_coef ** j.astype(jnp.float32) * full_step
    theta_new = jnp.where(accepted, theta_old + step, theta_old)
    metrics = {
        "step_accepted": accepted.astype(jnp.float32),
        "line_search_steps": jnp.where(accepted, j + 1, static.backtrack_iters).astype(jnp.float32),
        "kl_after_step": jnp.where(accepted, divergence, 0.0),
        "surrogate_improvement": jnp.where(accepted, improvement, 0.0),
        "expected_improvement": jnp.dot(g, full_step),
        "cg_residual": residual,
        "policy_grad_norm": jnp.linalg.norm(g),
        "policy_step_norm": jnp.linalg.norm(theta_new - theta_old),
    }
    return theta_new, metrics


def update(state, batch: onpolicy.Batch, key, static: TRPOStatic, network) -> onpolicy.Updated:
    """Natural-gradient policy step, then value regression."""
    hp: TRPOHparams = state.hparams
    theta_old, unravel, surrogate, kl, fisher_kl, entropy = policy_functions(
        state.params, network, batch, static, hp.ent_coef)
    theta, metrics = natural_gradient_step(surrogate, kl, fisher_kl, theta_old, hp, static)
    params = onpolicy.with_param_group(state.params, "policy", unravel(theta))
    metrics["entropy"] = entropy
    metrics.update(onpolicy.policy_shift(network, params, batch))
    scale = onpolicy.lr_scale(state, static)
    tx = optimizers(hp, static, scale).value
    params, value_opt, value_metrics = onpolicy.fit_value(
        params, state.opt_state.value, tx, batch, key, static, network)
    metrics.update(value_metrics)
    metrics["learning_rate"] = hp.vf_learning_rate * scale
    return onpolicy.Updated(params, onpolicy.ParamGroups(value=value_opt), metrics)


ALGORITHM = onpolicy.algorithm("trpo", TRPOConfig, default_config, update, optimizers)

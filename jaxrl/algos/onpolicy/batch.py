"""A rollout made into a `Batch`: truncation-aware GAE advantages, lambda-return targets and
PopArt's adaptation of the value head."""

from __future__ import annotations

import dataclasses
from typing import Any

import chex
import jax
import jax.numpy as jnp
from flax import struct

from jaxrl.algos.acting import PolicyState, PolicyStatic
from jaxrl.algos.obs_normalization import normalize_obs
from jaxrl.algos.onpolicy.collect import loss_flags, recurrent_step
from jaxrl.algos.onpolicy.config import OnPolicyStatic
from jaxrl.algos.onpolicy.state import OnPolicyState, param_group, with_param_group
from jaxrl.ops import (
    gae,
    popart,
)
from jaxrl.parts.recurrent import unroll


@struct.dataclass
class Batch:
    """One rollout. Feed-forward: flattened, leaves ``[B, ...]`` with B = T * N. Recurrent:
    sequences, leaves ``[T, N, ...]`` (written ``[B]`` below), plus ``first`` and ``memory``,
    from which the loss re-runs the network (`forward`)."""

    obs: jax.Array  # [B, obs_dim] normalized with the acting statistics
    action: jax.Array  # [B] or [B, act_dim]
    log_prob: jax.Array  # [B] log pi_old(a|s)
    value: jax.Array  # [B] V_old(s)
    advantage: jax.Array  # [B] GAE(lambda), bootstrapped through truncation
    target: jax.Array  # [B] value target = advantage + V_old(s) (the lambda-return)
    first: jax.Array | None = None  # recurrent: [T, N] an episode's first step (memory reset)
    memory: Any = None  # recurrent: the memory before the first step, leaves [N, ...]


def check_batch(batch: Batch) -> None:
    """The shape contract at a loss's input (checked at trace time): log-probs, values,
    advantages and targets ``[B]`` (``[T, N]`` for sequences), every other per-step leaf
    ``[B, ...]``."""
    per_sample = [batch.log_prob, batch.value, batch.advantage, batch.target]
    sequence = batch.first is not None
    chex.assert_rank(per_sample, 2 if sequence else 1)
    chex.assert_equal_shape(per_sample)
    steps = [batch.obs, batch.action, *per_sample] + ([batch.first] if sequence else [])
    chex.assert_equal_shape_prefix(steps, 2 if sequence else 1)


def forward(network, params, batch: Batch):
    """``(dist, value)`` of the network at the batch's observations: applied to the samples,
    or (recurrent) unrolled over each env's sequence from its stored memory."""
    if batch.first is None:
        return network.apply(params, batch.obs)
    _, dist, value = unroll(network, params, batch.memory, batch.obs, batch.first)
    return dist, value


def first_steps(traj) -> jax.Array:
    """``[T, N]`` whether step t is an episode's first: the step before it ended one. (The
    rollout's first step continues from a memory already reset, so it is never marked.)"""
    done = jnp.logical_or(traj.terminated, traj.truncated)
    return jnp.concatenate([jnp.zeros_like(done[:1]), done[:-1]], axis=0)


def value_heads(state: OnPolicyState, obs, next_obs, traj, static: OnPolicyStatic, network):
    """``(head at obs, head at next_obs)``, each ``[T, N]``. Recurrent: the rollout re-run from
    its stored memory; the head at ``next_obs[t]`` is one more step from the memory after step t
    (before any reset), so a truncated episode is bootstrapped with the memory it ended with."""
    if not static.recurrent:
        return (network.apply(state.params, obs, method=network.value),
                network.apply(state.params, next_obs, method=network.value))
    memories, _, head = unroll(network, state.params, state.memory, obs, first_steps(traj))
    _, _, next_head = recurrent_step(network, state.params, memories, next_obs)
    return head, next_head


def make_batch(state: OnPolicyState, traj, rewards, static: OnPolicyStatic, network) -> Batch:
    """Rollout ``[T, N]`` -> `Batch` (normalized obs, old log-probs/values, GAE advantages);
    flattened, or kept as sequences for a recurrent policy."""
    obs = normalize_obs(state, traj.obs, static)
    next_obs = normalize_obs(state, traj.next_obs, static)
    with jax.named_scope("forward"):
        head, next_head = value_heads(state, obs, next_obs, traj, static, network)
    values = value_of_head(state, head, static)
    next_values = value_of_head(state, next_head, static)
    terminated, truncated = loss_flags(traj, static)
    hp = state.hparams
    adv = gae(rewards, values, next_values, terminated, truncated, hp.gamma, hp.gae_lambda)
    if static.recurrent:
        return Batch(obs, traj.action, traj.log_prob, values, adv, adv + values,
                     first_steps(traj), state.memory)
    flat = lambda x: x.reshape(-1, *x.shape[2:])
    return Batch(flat(obs), flat(traj.action), flat(traj.log_prob), flat(values), flat(adv),
                 flat(adv + values))


# -- PopArt ------------------------------------------------------------------------------------
def value_of_head(state: PolicyState, head: Any, static: PolicyStatic) -> jax.Array:
    """The value for the value head's output ``head [...]``: the output itself, or with PopArt its
    denormalization ``sigma * head + mu`` under the agent's target statistics."""
    return popart.denormalize(state.value_stats, head) if static.popart else head


def value_head_layer(params) -> str:
    """The name of the value network's last linear layer (``Dense_<largest index>``)."""
    layers = [k for k in param_group(params, "value") if k.startswith("Dense_")]
    return max(layers, key=lambda k: int(k.removeprefix("Dense_")))


def adapt_value_head(state: OnPolicyState, batch: Batch, static: OnPolicyStatic
                     ) -> tuple[OnPolicyState, Batch, dict]:
    """PopArt's step before an update (van Hasselt et al. 2016), a no-op without
    ``static.popart``:

        (mu, sigma) <- EMA of the batch's lambda-return targets, step beta   ("ART")
        value head's last layer rescaled so sigma' v' + mu' = sigma v + mu  ("POP")
        the batch's values and targets normalized by the new statistics, and its advantages
        divided by sigma' (so the policy's step does not grow with the reward scale)

    Returns ``(state with new statistics and head, batch in normalized units, metrics)``."""
    if not static.popart:
        return state, batch, {}
    old = state.value_stats
    new = popart.update(old, batch.target, state.hparams.popart_beta)
    value = param_group(state.params, "value")
    layer = value_head_layer(state.params)
    kernel, bias = popart.preserve(value[layer]["kernel"], value[layer]["bias"], old, new)
    params = with_param_group(state.params, "value",
                              {**value, layer: {"kernel": kernel, "bias": bias}})
    sigma = popart.scale(new)
    batch = dataclasses.replace(batch, value=popart.normalize(new, batch.value),
                                target=popart.normalize(new, batch.target),
                                advantage=batch.advantage / sigma)
    metrics = {"popart_mean": new.mean, "popart_sigma": sigma}
    return dataclasses.replace(state, params=params, value_stats=new), batch, metrics


def standardize(advantages: jax.Array, static: OnPolicyStatic) -> jax.Array:
    """Zero-mean, unit-std advantages if ``static.normalize_advantages``."""
    if not static.normalize_advantages:
        return advantages
    return (advantages - advantages.mean()) / (advantages.std() + 1e-8)

"""What one PQN update fits: the rollouts kept for replay (`Replay`), their Peng's Q(lambda)
targets (`q_lambda_targets`), the flat `Batch` of the new rollout and the replayed ones
(`replay_batch`) and the TD loss on it (`td_loss`).

The replay keeps rollouts as collected (raw observations); with ``normalize_obs`` the batch's
observations are normalized by the statistics of the moment it is made (they drift, so a
rollout stored normalized would be read with stale ones), the targets' next observations too.
"""

from __future__ import annotations

from typing import Any, Protocol

import chex
import jax
import jax.numpy as jnp
from flax import struct

from jaxrl.algos import onpolicy, q_learner
from jaxrl.algos.action_masks import allowed_q
from jaxrl.algos.obs_normalization import normalize_transitions
from jaxrl.algos.pqn_config import PQNHparams, PQNStatic
from jaxrl.ops import RunningMeanStd, lambda_returns
from jaxrl.parts.transition import Transition


@struct.dataclass
class Replay:
    """The last ``K = replay_rollouts`` rollouts, oldest first, and ``valid [K]`` (filled)."""

    steps: Transition  # leaves [K, T, N, ...], flags as the loss sees them, raw observations
    valid: jax.Array  # [K] bool


@struct.dataclass
class Batch:
    """One rollout, flattened: leaves ``[B, ...]`` with ``B = T * N``."""

    obs: jax.Array  # [B, obs_dim] as the network reads them (normalized with normalize_obs)
    action: jax.Array  # [B] int32
    target: jax.Array  # [B] the Q(lambda) return y
    weight: jax.Array | None = None  # [B] 0 for replay slots not yet filled (None: no replay)


def empty_replay(static: PQNStatic, obs_dim: int) -> Replay:
    """``replay_rollouts`` empty rollout slots (all invalid)."""
    k, t, n = static.replay_rollouts, static.num_steps, static.num_envs
    zeros = lambda *shape, dtype=jnp.float32: jnp.zeros((k, t, n, *shape), dtype)
    steps = Transition(obs=zeros(obs_dim), action=zeros(dtype=jnp.int32), reward=zeros(),
                       terminated=zeros(dtype=bool), truncated=zeros(dtype=bool),
                       next_obs=zeros(obs_dim))
    return Replay(steps=steps, valid=jnp.zeros((k,), bool))


def as_transitions(traj, static: PQNStatic) -> Transition:
    """A rollout ``[T, N, ...]`` reduced to what the targets need, flags as the loss sees them."""
    terminated, truncated = onpolicy.loss_flags(traj, static)
    return Transition(obs=traj.obs, action=traj.action.astype(jnp.int32), reward=traj.reward,
                      terminated=terminated, truncated=truncated, next_obs=traj.next_obs)


def q_lambda_targets(params, hp: PQNHparams, steps: Transition, network, space=None) -> jax.Array:
    """``[T, N]`` Peng's Q(lambda) returns of a rollout ``steps`` (leaves ``[T, N, ...]``, flags
    as the loss sees them): `lambda_returns` of the scaled rewards with ``next_values =
    max_a Q(s_{t+1}, a)`` at the true next observations (``a`` among the actions ``space``'s
    mask allows there), bootstrapping through truncation and never after termination."""
    with jax.named_scope("forward"):
        q_next = allowed_q(network.apply(params, steps.next_obs), space, steps.next_obs)
    return lambda_returns(hp.reward_scale * steps.reward, jax.lax.stop_gradient(q_next.max(-1)),
                          steps.terminated, steps.truncated, hp.gamma, hp.q_lambda)


class Learner(Protocol):
    """What a batch is made from of PQN's train state (`jaxrl.algos.pqn.PQNState`)."""

    @property
    def params(self) -> Any: ...
    @property
    def hparams(self) -> PQNHparams: ...
    @property
    def obs_stats(self) -> RunningMeanStd | None: ...
    @property
    def replay(self) -> Replay: ...


def replay_batch(state: Learner, fresh: Transition, network, space=None
                 ) -> tuple[Batch, jax.Array, Replay]:
    """The batch an update fits: the new rollout ``fresh`` (leaves ``[T, N, ...]``, raw
    observations) and the replayed ones, every target from the current network, observations
    normalized by ``state.obs_stats`` (None: as collected). ``-> (batch [(K+1) T N], targets of
    the new rollout [T, N], the replay with ``fresh`` pushed in and the oldest dropped)``."""
    targets_of = lambda steps: q_lambda_targets(
        state.params, state.hparams, normalize_transitions(state.obs_stats, steps), network,
        space)
    targets = targets_of(fresh)
    flat = lambda x: x.reshape(-1, *x.shape[2:])
    if state.replay.valid.shape[0] == 0:
        obs = normalize_transitions(state.obs_stats, fresh).obs
        return Batch(flat(obs), flat(fresh.action), flat(targets)), targets, state.replay
    rollouts = jax.tree.map(lambda old, new: jnp.concatenate([old, new[None]]),
                            state.replay.steps, fresh)  # [K+1, T, N, ...]
    valid = jnp.concatenate([state.replay.valid, jnp.ones((1,), bool)])
    all_targets = jax.vmap(targets_of)(rollouts)
    weight = jnp.broadcast_to(valid[:, None, None], all_targets.shape).astype(jnp.float32)
    flat2 = lambda x: x.reshape(-1, *x.shape[3:])
    obs = normalize_transitions(state.obs_stats, rollouts).obs
    batch = Batch(flat2(obs), flat2(rollouts.action), flat2(all_targets), flat2(weight))
    pushed = Replay(steps=jax.tree.map(lambda x: x[1:], rollouts), valid=valid[1:])
    return batch, targets, pushed


def td_loss(params, network, batch: Batch):
    """``0.5 E[(Q(s, a) - y)^2]`` on a minibatch; ``-> (loss, metrics)``."""
    chex.assert_rank([batch.action, batch.target], 1)
    chex.assert_equal_shape_prefix([batch.obs, batch.action, batch.target], 1)
    q_taken = q_learner.take_action(network.apply(params, batch.obs), batch.action)
    td = batch.target - q_taken
    if batch.weight is None:
        loss = 0.5 * jnp.mean(jnp.square(td))
        return loss, {"loss": loss, "td_error_abs_mean": jnp.abs(td).mean(),
                      "q_mean": q_taken.mean()}
    total = jnp.maximum(batch.weight.sum(), 1.0)
    mean = lambda x: jnp.sum(batch.weight * x) / total
    loss = 0.5 * mean(jnp.square(td))
    return loss, {"loss": loss, "td_error_abs_mean": mean(jnp.abs(td)), "q_mean": mean(q_taken)}

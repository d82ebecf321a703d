"""IQN, implicit quantile networks (Dabney, Ostrovski, Silver & Munos, 2018), on the replay
Q-learners' kit (`jaxrl.algos.q_learner`: uniform or prioritized n-step replay, target network,
epsilon schedule, double Q).

    the network maps a state and a fraction tau ~ U(0, 1) to the tau-quantile of each action's
    return, Z_tau(s, a), through a cosine embedding of tau (networks.ImplicitQuantileNetwork);
    Q(s, a) = mean_k Z_{tau_k}(s, a) over K fractions (risk-neutral)
    acting: epsilon-greedy at the mean over K sampled tau_k            (explore)
    for each sampled batch (importance weights w), per sample:
        tau_i ~ U(0, 1) (i = 1..N),  tau'_j ~ U(0, 1) (j = 1..N')
        a*  = argmax_a Q(s', a) over K sampled fractions (online net if double_q, else target)
        T_j = R + discount * Z_{tau'_j}(s', a*) of the target net
        L   = E[w * sum_i mean_j rho_kappa(tau_i, T_j - Z_{tau_i}(s, a))]  (ops.quantile_huber_loss)
        priorities <- the per-sample loss (prioritized replay)

The greedy policy (evaluation, the policy's value, an exported policy) takes Q at the K
midpoints ``tau_k = (2k - 1) / (2K)``: the same mean by a fixed quadrature instead of a draw,
so that a deterministic evaluation is deterministic. ``discount`` is ``gamma^n (1 -
terminated)`` from the n-step window: a terminal transition's targets are all its reward, a
truncated one bootstraps from its final observation.
"""

from __future__ import annotations

import dataclasses
from typing import cast

import jax
import jax.numpy as jnp

from jaxrl.algos import offpolicy, q_learner
from jaxrl.algos.action_masks import allowed_q
from jaxrl.algos.families import family_defaults
from jaxrl.algos.obs_normalization import normalize_obs
from jaxrl.config import AlgoConfig, ConfigError, static
from jaxrl.ops import quantile_huber_loss, quantile_midpoints
from jaxrl.parts import memory
from jaxrl.parts.q_networks import ImplicitQuantileNetwork
from jaxrl.parts.torsos import CONV_TORSOS


@dataclasses.dataclass(frozen=True)
class IQNStatic(q_learner.DistributionalStatic):
    """IQN's static fields: DQN's (less its loss switch), the numbers of fractions drawn per
    sample for the loss and for acting, and the width of tau's cosine embedding."""

    num_quantiles: int = static(64, "N fractions tau_i drawn per sample for the online quantiles")
    num_target_quantiles: int = static(64, "N' fractions tau'_j drawn per sample for the targets")
    num_action_quantiles: int = static(32, "K fractions over which Q is averaged to pick actions")
    embedding_dim: int = static(64, "cosines cos(pi i tau), i < this, embedding tau")

    @property
    def distribution_size(self) -> int:
        """Quantiles per action and sample in the loss (the larger of ``N`` and ``N'``)."""
        return max(self.num_quantiles, self.num_target_quantiles)

    def validate(self) -> None:
        super().validate()
        for name in ("num_quantiles", "num_target_quantiles", "num_action_quantiles",
                     "embedding_dim"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be >= 1, got {getattr(self, name)}")


@dataclasses.dataclass(frozen=True)
class IQNConfig(AlgoConfig, q_learner.QuantileHparams, IQNStatic):
    """IQN's config: the fields of `IQNStatic` and `q_learner.QuantileHparams` as one."""


def default_config(env_name: str) -> IQNConfig:
    """IQN's defaults for ``env_name``'s family (`jaxrl.algos.families`)."""
    return IQNConfig(**family_defaults("iqn", env_name))


def make_network(static: IQNStatic, space) -> ImplicitQuantileNetwork:
    """``(obs [B, obs_dim], taus [B, N]) -> [B, A, N]``."""
    q_learner.require_discrete(space, "IQN")
    return ImplicitQuantileNetwork(space.n, tuple(static.hidden), static.activation,
                                   static.dueling, static.torso, static.embedding_dim)


def example_inputs(obs_dim: int, static: IQNStatic) -> tuple[jax.Array, jax.Array]:
    """The network's init inputs: one zero observation ``[1, obs_dim]`` and one fraction."""
    del static
    return jnp.zeros((1, obs_dim)), jnp.full((1, 1), 0.5)


def fractions(key, batch: int, count: int) -> jax.Array:
    """``[batch, count]`` fractions drawn from U(0, 1), each sample its own."""
    return jax.random.uniform(key, (batch, count))


def mean_values(network, params, obs: jax.Array, taus: jax.Array) -> jax.Array:
    """``[B, A]`` the mean over the fractions ``taus [B, K]`` of each action's quantiles."""
    return cast(jax.Array, network.apply(params, obs, taus)).mean(axis=-1)


def q_values(params, hp: q_learner.QuantileHparams, obs: jax.Array, static: IQNStatic, space) -> jax.Array:
    """``[B, A]`` the greedy policy's Q: the mean of each action's quantiles at the K
    midpoints."""
    del hp
    taus = jnp.broadcast_to(quantile_midpoints(static.num_action_quantiles),
                            (obs.shape[0], static.num_action_quantiles))
    return mean_values(make_network(static, space), params, obs, taus)


def explore(state, obs: jax.Array, key, static: IQNStatic, space) -> jax.Array:
    """``[N]`` epsilon-greedy at the mean over K sampled fractions per raw observation ``obs
    [N, obs_dim]``, read as the network learns from it (`normalize_obs`)."""
    tau_key, action_key = jax.random.split(key)
    taus = fractions(tau_key, obs.shape[0], static.num_action_quantiles)
    q = mean_values(make_network(static, space), state.params,
                    normalize_obs(state, obs, static), taus)
    return q_learner.epsilon_greedy(action_key, q, q_learner.epsilon(state),
                                    q_learner.allowed_actions(space, obs))


def target_quantiles(params, target_params, network, batch, key, static: IQNStatic, space=None
                     ) -> jax.Array:
    """``[B, N']`` ``T_j = R + discount * Z_{tau'_j}(s', a*)`` of the target net, ``a*`` the
    greedy action over K sampled fractions among those ``space``'s mask allows (no gradient
    flows into it)."""
    select_key, target_key = jax.random.split(key)
    size = batch.reward.shape[0]
    selector = params if static.double_q else target_params
    select_taus = fractions(select_key, size, static.num_action_quantiles)
    q_next = mean_values(network, selector, batch.next_obs, select_taus)
    best = jnp.argmax(allowed_q(q_next, space, batch.next_obs), axis=-1)
    target_taus = fractions(target_key, size, static.num_target_quantiles)
    next_z = q_learner.take_action(
        cast(jax.Array, network.apply(target_params, batch.next_obs, target_taus)), best)
    return jax.lax.stop_gradient(batch.reward[:, None] + batch.discount[:, None] * next_z)


def iqn_loss(params, state, batch, weights, key, static: IQNStatic, space):
    """`q_learner.make_learn`'s loss: the importance-weighted quantile Huber loss of the online
    quantiles at N drawn fractions of the taken action against the N' target samples. The
    priority is the per-sample loss ``[B]``; the TD metrics compare the two means."""
    offpolicy.check_transitions(batch, weights)
    network = make_network(static, space)
    target_key, online_key = jax.random.split(key)
    targets = target_quantiles(state.params, state.target_params, network, batch, target_key,
                               static, space)
    taus = fractions(online_key, batch.reward.shape[0], static.num_quantiles)
    quantiles = q_learner.take_action(cast(jax.Array, network.apply(params, batch.obs, taus)),
                                      batch.action)
    per_sample = quantile_huber_loss(quantiles, targets, taus, state.hparams.kappa)
    q_taken, target_mean = quantiles.mean(axis=-1), targets.mean(axis=-1)
    metrics = q_learner.q_metrics(target_mean - q_taken, q_taken, target_mean)
    return jnp.mean(weights * per_sample), (per_sample, metrics)


def feature_width(static: IQNStatic) -> int:
    """The torso's feature width ``d`` (the embedding's and the merged layer's width)."""
    return CONV_TORSOS[static.torso][2] if static.torso in CONV_TORSOS else static.hidden[-1]


def memory_model(config: IQNConfig, state: offpolicy.OffPolicyState, obs_bytes: int,
                 action_bytes: int) -> memory.Footprint:
    """The off-policy memory model (`offpolicy.memory_model`) plus what IQN's fractions add:
    the ``[B, N, N']`` pairwise arrays of the loss (3 float32 copies), and the activations of
    the layers after the torso (cosines, embedding, merged and hidden layer) on every fraction
    a learning step evaluates (``N`` online, ``N'`` target, ``K`` to select, ``K`` more with
    double Q) and an acting round evaluates (``K`` per env)."""
    base = offpolicy.memory_model(config, state, obs_bytes, action_bytes)
    b = config.batch_size
    pairwise = 3 * b * config.num_quantiles * config.num_target_quantiles * 4
    per_fraction = 4 * (config.embedding_dim + 3 * feature_width(config))
    selections = 2 if config.double_q else 1
    rows = b * (config.num_quantiles + config.num_target_quantiles
                + selections * config.num_action_quantiles)
    learn = memory.OFF_POLICY_PASSES * rows * per_fraction * memory.ACTIVATION_STORE
    act = config.num_envs * config.num_action_quantiles * per_fraction
    return memory.Footprint(base.replay_bytes, base.working_bytes + pairwise + learn + act)


ALGORITHM = q_learner.algorithm("iqn", IQNConfig, default_config, make_network, q_values,
                                iqn_loss, memory_model, explore, example_inputs)

"""Behaviour cloning: the policy fitted to an expert's actions by maximum likelihood, the
baseline every imitation result is read against.

    expert = the demonstration set's (s, a) pairs                  (imitation.expert)
    observation statistics <- those of the expert's observations  (init)
    for each update:                                              (train_step)
        draw B expert steps uniformly
        L = -mean log pi(a | s) - c_H H[pi]                       (bc_loss)
        theta <- Adam(clip_by_global_norm(grad L))

BC takes no env steps. Its budget, ``total_steps``, counts expert samples drawn (``B`` per
update), and so does ``env_steps`` in its metrics; evaluation plays the policy in the env, as
for every algorithm. The policy is the on-policy `ActorCritic` (its value head untrained), so
acting, evaluation, stored policies and ``jaxrl demos`` work as for PPO.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import jax
import jax.numpy as jnp
import optax
from flax import struct

from envs.spaces import Discrete
from jaxrl.algos import acting, imitation, onpolicy
from jaxrl.algos.algorithm import standalone
from jaxrl.algos.families import family_defaults
from jaxrl.config import (
    NON_NEGATIVE,
    POSITIVE,
    AlgoConfig,
    Hparams,
    static,
    traced,
)
from jaxrl.ops import (
    RunningMeanStd,
    clipped_adam,
    popart,
    running_stats_init,
    running_stats_update,
)
from jaxrl.parts import diagnostics as diag
from jaxrl.parts import memory
from jaxrl.parts.rollout import obs_dim


@dataclasses.dataclass(frozen=True)
class BCStatic(acting.PolicyStatic):
    """BC's static fields: the demonstrations, the batch, the policy network (the on-policy
    network's other switches keep `acting.PolicyStatic`'s values: off)."""

    demos: str = static("", imitation.DEMOS_DOC)
    batch_size: int = static(256, "expert steps per update")

    @property
    def steps_per_update(self) -> int:
        return self.batch_size


@struct.dataclass(frozen=True)
class BCHparams(Hparams):
    """BC's traced hyperparameters (``state.hparams``)."""

    learning_rate: float = traced(1e-3, valid=POSITIVE)
    ent_coef: float = traced(0.0, "entropy bonus", valid=NON_NEGATIVE)
    max_grad_norm: float = traced(1.0, "global-norm gradient clipping", valid=POSITIVE)
    adam_eps: float = traced(1e-8, valid=POSITIVE)
    total_steps: float = traced(0.0, "expert samples per seed (set by train)", valid=NON_NEGATIVE)


@dataclasses.dataclass(frozen=True)
class BCConfig(AlgoConfig, BCHparams, BCStatic):
    """BC's config: the fields of `BCStatic` and `BCHparams` as one."""


def default_config(env_name: str) -> BCConfig:
    """BC's defaults for ``env_name``'s family (`jaxrl.algos.families`)."""
    return BCConfig(**family_defaults("bc", env_name))


@struct.dataclass
class BCState:
    """The policy (`acting.PolicyState`: acting reads params and statistics) and its
    optimizer."""

    params: Any  # the `ActorCritic`'s flax variables (the value head is not trained)
    opt_state: Any
    obs_stats: RunningMeanStd  # the expert's observation statistics [obs_dim]
    value_stats: popart.PopArtStats  # unused (no value learning); read by the policy's value
    key: jax.Array
    update_step: jax.Array  # [] int32
    env_steps: jax.Array  # [] int32: expert samples drawn so far
    hparams: BCHparams


def init(key: jax.Array, env, env_params, config, hparams: BCHparams | None = None) -> BCState:
    """A fresh policy whose observation statistics are the expert's. No env is stepped:
    evaluation plays its own episodes."""
    hp = config.hparams() if hparams is None else hparams
    static_ = config.static()
    data = imitation.expert(static_.demos, env, env_params)
    network = onpolicy.make_network(static_, env, env_params)
    net_key, state_key = jax.random.split(key)
    params = network.init(net_key, jnp.zeros((1, obs_dim(env.observation_space(env_params)))))
    obs_stats = running_stats_init((data.obs.shape[-1],))
    if static_.normalize_obs:
        obs_stats = running_stats_update(obs_stats, data.obs)
    return BCState(params=params, opt_state=optimizer(hp).init(params), obs_stats=obs_stats,
                   value_stats=popart.init(), key=state_key,
                   update_step=jnp.zeros((), jnp.int32), env_steps=jnp.zeros((), jnp.int32),
                   hparams=hp)


def optimizer(hp: BCHparams) -> optax.GradientTransformation:
    return clipped_adam(hp, hp.learning_rate)


def bc_loss(params, network, obs: jax.Array, action: jax.Array, hp: BCHparams):
    """Negative log-likelihood of the expert's actions (normalized ``obs [B, obs_dim]``, agent
    ``action [B, ...]``) minus the entropy bonus; aux: the NLL, entropy and how well the
    policy's mode matches the expert (accuracy, or mean absolute error for Box actions)."""
    dist = network.apply(params, obs, method=network.dist)
    nll = -jnp.mean(dist.log_prob(action))
    entropy = jnp.mean(dist.entropy())
    mode = dist.mode()
    if jnp.issubdtype(action.dtype, jnp.integer):
        match = {"expert_accuracy": jnp.mean(mode == action)}
    else:
        match = {"expert_action_error": jnp.mean(jnp.abs(mode - action))}
    return nll - hp.ent_coef * entropy, {"bc_nll": nll, "entropy": entropy, **match}


def train_step(state: BCState, static_: BCStatic, env, env_params):
    """One gradient step on ``batch_size`` expert steps."""
    data = imitation.expert(static_.demos, env, env_params)
    network = onpolicy.make_network(static_, env, env_params)
    key, sample_key = jax.random.split(state.key)
    batch = imitation.sample(data, sample_key, static_.batch_size)
    obs = onpolicy.normalize_obs(state, batch.obs, static_)
    hp = state.hparams
    grads, metrics = jax.grad(bc_loss, has_aux=True)(state.params, network, obs, batch.action, hp)
    updates, opt_state = optimizer(hp).update(grads, state.opt_state, state.params)
    metrics.update(diag.gradient_stats(grads, updates, static_.verbosity))
    space = env.action_space(env_params)
    if isinstance(space, Discrete):
        metrics["entropy_relative"] = metrics["entropy"] / jnp.log(max(space.n, 2))
    env_steps = state.env_steps + static_.steps_per_update
    metrics["env_steps"] = env_steps.astype(jnp.float32)
    state = dataclasses.replace(state, params=optax.apply_updates(state.params, updates),
                                opt_state=opt_state, key=key,
                                update_step=state.update_step + 1, env_steps=env_steps)
    return state, metrics


def memory_model(config: BCStatic, state, obs_bytes: int, action_bytes: int) -> memory.Footprint:
    """No replay; one step's working set is a batch of ``B`` expert steps through the policy
    (forward and gradient activations) and the learner's temporaries."""
    learner = memory.tree_bytes((state.params, state.opt_state))
    units = memory.activation_units(state.params, config)
    batch = config.batch_size
    work = (batch * (2 * obs_bytes + action_bytes) + batch * units * 4 * memory.ACTIVATION_STORE
            + memory.LEARNER_TEMPORARIES * learner)
    return memory.Footprint(replay_bytes=0, working_bytes=work)


ALGORITHM = standalone("bc", BCConfig, default_config, init, train_step, onpolicy.make_policy,
                       memory_model, imitation=True, action_masks=True)

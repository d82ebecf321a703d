"""Deep Q-Network (Mnih et al., 2015) with the Rainbow-era switches: double Q (van Hasselt et
al., 2016), dueling heads (Wang et al., 2016), n-step returns and prioritized replay (Schaul et
al., 2016).

    for each env-step round:                                  (offpolicy.make_train_step)
        a = argmax_a Q(s, a) with probability 1 - eps, else uniform     (explore)
        store the n-step transition (s, a, R, discount, s')
        gradient_steps times, on a sampled batch with importance weights w:
            a* = argmax_a' Q(s', a')  if double_q  else  argmax_a' Q_target(s', a')
            y  = R + discount * Q_target(s', a*)                          (dqn_loss)
            L  = E[w huber(y - Q(s, a))]
            theta <- Adam or RMSProp(clip_by_global_norm(grad L))
            every target_update_period updates: theta_target <- tau theta + (1 - tau) theta_target

``discount`` is ``gamma^m (1 - terminated)`` from the n-step window, so a time limit
bootstraps from the final observation and a terminal state does not.
"""

from __future__ import annotations

import dataclasses
from typing import cast

import chex
import jax
import jax.numpy as jnp
import optax
from flax import struct

from envs.spaces import Discrete
from jaxrl import diagnostics as diag
from jaxrl.algos import offpolicy
from jaxrl.algos.families import family_defaults
from jaxrl.config import AlgoConfig, ConfigError, static, traced
from jaxrl.networks import QNetwork
from jaxrl.ops import (
    clipped_optimizer,
    linear_schedule,
    optimizer_problem,
    polyak_update,
)
from jaxrl.rollout import flatten_obs

LOSSES = ("huber", "mse")


@dataclasses.dataclass(frozen=True)
class DQNStatic(offpolicy.OffPolicyStatic):
    """DQN's static fields (shapes, loop counts, flags)."""

    double_q: bool = static(True, "select the next action with the online net")
    dueling: bool = static(False, "dueling value/advantage head")
    target_update_period: int = static(500, "gradient updates between target updates")
    loss: str = static("huber", "huber | mse")
    anneal_lr: bool = static(False, "linearly anneal the learning rate to 0 over total_steps")
    optimizer: str = static("adam", "adam | rmsprop (with optional momentum: reading 002's DQN)")
    rmsprop_style: str = static("pytorch", "RMSProp's epsilon convention: tensorflow | pytorch")
    hidden: tuple[int, ...] = static((64, 64), "MLP widths")

    def validate(self) -> None:
        super().validate()
        if self.loss not in LOSSES:
            raise ConfigError(f"loss must be one of {LOSSES}, got {self.loss!r}")
        problem = optimizer_problem(self.optimizer, self.rmsprop_style)
        if problem:
            raise ConfigError(problem)


@struct.dataclass(frozen=True)
class DQNHparams(offpolicy.OffPolicyHparams):
    """DQN's traced hyperparameters (``state.hparams``)."""

    learning_rate: float = traced(2.5e-4)
    rmsprop_decay: float = traced(0.95, "RMSProp: decay of the squared-gradient average")
    rmsprop_eps: float = traced(0.01, "RMSProp: epsilon (see rmsprop_style)")
    rmsprop_momentum: float = traced(0.0, "RMSProp: momentum on the normalized step")
    tau: float = traced(1.0, "target update weight (1 = copy)")
    eps_start: float = traced(1.0, "epsilon-greedy at the start")
    eps_end: float = traced(0.05, "epsilon-greedy after the decay")
    eps_decay_fraction: float = traced(0.5, "fraction of total_steps over which eps decays")


@dataclasses.dataclass(frozen=True)
class DQNConfig(AlgoConfig, DQNHparams, DQNStatic):
    """DQN's config: the fields of `DQNStatic` and `DQNHparams` as one."""


def default_config(env_name: str) -> DQNConfig:
    """DQN's defaults for ``env_name``'s family (`jaxrl.algos.families`)."""
    return DQNConfig(**family_defaults("dqn", env_name))


def make_network(static: DQNStatic, space: Discrete) -> QNetwork:
    if not isinstance(space, Discrete):
        raise ConfigError(f"DQN needs a discrete action space, got {space!r}")
    return QNetwork(space.n, tuple(static.hidden), static.activation, static.dueling,
                    static.torso)


def learning_rate(state, static: DQNStatic) -> jax.Array:
    """``[]`` the learning rate, linearly annealed to 0 over ``total_steps`` if ``anneal_lr``."""
    hp: DQNHparams = state.hparams
    if not static.anneal_lr:
        return jnp.asarray(hp.learning_rate)
    return hp.learning_rate * linear_schedule(1.0, 0.0, state.env_steps, hp.total_steps)


def optimizer(hp: DQNHparams, static: DQNStatic, lr: float | jax.Array
              ) -> optax.GradientTransformation:
    """The Q-network's optimizer (DQN's only one: its state is ``state.opt_state``)."""
    return clipped_optimizer(static.optimizer, hp, lr, static.rmsprop_style,
                             momentum=hp.rmsprop_momentum)


def init_learner(key, obs_dim: int, space, static: DQNStatic, hp: DQNHparams):
    params = make_network(static, space).init(key, jnp.zeros((1, obs_dim)))
    return params, params, optimizer(hp, static, hp.learning_rate).init(params)


def epsilon(state) -> jax.Array:
    """``[]`` linear decay from ``eps_start`` to ``eps_end`` over ``eps_decay_fraction`` of the
    run."""
    hp: DQNHparams = state.hparams
    return linear_schedule(hp.eps_start, hp.eps_end, state.env_steps,
                           hp.eps_decay_fraction * hp.total_steps)


def explore(state, obs, key, static: DQNStatic, space):
    """Epsilon-greedy actions ``[N]`` int32 at flat observations ``obs [N, obs_dim]``: uniform
    with probability `epsilon`, else greedy (training, and `make_act` when not
    deterministic)."""
    q_values = cast(jax.Array, make_network(static, space).apply(state.params, obs))
    greedy = jnp.argmax(q_values, axis=-1)
    coin_key, action_key = jax.random.split(key)
    random = jax.random.randint(action_key, greedy.shape, 0, space.n)
    explore_now = jax.random.uniform(coin_key, greedy.shape) < epsilon(state)
    return jnp.where(explore_now, random, greedy).astype(jnp.int32)


def td_targets(params, target_params, network, batch, static: DQNStatic) -> jax.Array:
    """``[B]`` ``y = R + discount * Q_target(s', a*)`` (no gradient flows into it)."""
    q_next_target = network.apply(target_params, batch.next_obs)
    selector = network.apply(params, batch.next_obs) if static.double_q else q_next_target
    best = jnp.argmax(selector, axis=-1)
    q_next = jnp.take_along_axis(q_next_target, best[:, None], axis=-1)[:, 0]
    return jax.lax.stop_gradient(batch.reward + batch.discount * q_next)


def dqn_loss(params, network, batch, targets, weights, static: DQNStatic):
    """Importance-weighted Huber (or squared) TD loss on a batch (leaves ``[B, ...]``, actions
    ``[B]``) with targets and weights ``[B]``. ``-> (loss, (td [B], q_taken [B]))``."""
    offpolicy.check_transitions(batch, weights)
    chex.assert_rank(batch.action, 1)
    chex.assert_equal_shape([targets, weights])
    q = network.apply(params, batch.obs)
    chex.assert_rank(q, 2)
    q_taken = jnp.take_along_axis(q, batch.action[:, None].astype(jnp.int32), axis=-1)[:, 0]
    td = targets - q_taken
    per_sample = optax.huber_loss(td) if static.loss == "huber" else 0.5 * jnp.square(td)
    return jnp.mean(weights * per_sample), (td, q_taken)


def learn(state, batch, weights, key, static: DQNStatic, space) -> offpolicy.Learned:
    """One gradient step on the TD loss and the periodic target update."""
    del key  # DQN's update is deterministic given the batch
    hp: DQNHparams = state.hparams
    network = make_network(static, space)
    targets = td_targets(state.params, state.target_params, network, batch, static)
    (loss, (td, q_taken)), grads = jax.value_and_grad(dqn_loss, has_aux=True)(
        state.params, network, batch, targets, weights, static)
    lr = learning_rate(state, static)
    updates, opt_state = optimizer(hp, static, lr).update(grads, state.opt_state, state.params)
    params = optax.apply_updates(state.params, updates)
    due = (state.update_step + 1) % static.target_update_period == 0
    target_params = jax.tree.map(lambda new, old: jnp.where(due, new, old),
                                 polyak_update(state.target_params, params, hp.tau),
                                 state.target_params)
    metrics = {"loss": loss, "epsilon": epsilon(state), "learning_rate": lr, "td_error_abs_mean": jnp.abs(td).mean(),
               "td_error_abs_max": jnp.abs(td).max(), **diag.describe(q_taken, "q"),
               **diag.describe(targets, "target"),
               **diag.gradient_stats(grads, updates, static.verbosity)}
    return offpolicy.Learned(params, target_params, opt_state, td, metrics)


def _q_values(static: DQNStatic, env, env_params):
    obs_space = env.observation_space(env_params)
    network = make_network(static, env.action_space(env_params))
    return lambda state, obs: network.apply(state.params, flatten_obs(obs, obs_space))


def make_value(static: DQNStatic, env, env_params):
    """``V(s) = max_a Q(s, a)`` ``[K]`` (the greedy policy's value)."""
    q_values = _q_values(static, env, env_params)
    return lambda state, obs: jnp.max(q_values(state, obs), axis=-1)


def make_agent_action(static: DQNStatic, env, env_params):
    """``greedy(state, obs [K, *obs_shape]) -> [K]`` the action of the largest Q."""
    q_values = _q_values(static, env, env_params)
    return lambda state, obs: jnp.argmax(q_values(state, obs), axis=-1)


init = offpolicy.make_init(init_learner)
train_step = offpolicy.make_train_step(explore, learn)
# greedy, or epsilon-greedy at the current epsilon when deterministic=False
make_act = offpolicy.make_act_from(make_agent_action, explore)

"""The replay Q-learners' kit (DQN, C51, QR-DQN, IQN; PQN's acting): what they share beside their
network and loss.

* the config's replay / target / exploration / optimizer fields (`QLearnerStatic`,
  `QLearnerHparams`), and the distributional learners' static head (`DistributionalStatic`),
  from `jaxrl.algos.q_learner.config`;
* epsilon-greedy exploration at the Q-values (`make_explore`);
* the next action's selection (`next_outputs`: double Q or not);
* action masks (`envs.spaces.Discrete.mask_size`): acting, exploring and bootstrapping among
  the allowed actions only (`allowed_q`);
* with ``normalize_obs``, running observation statistics (`jaxrl.algos.obs_normalization`)
  read by acting and exploring, and by learning: the buffer keeps raw observations, a sampled
  batch is normalized by the current statistics (they drift: stored normalized, old items
  would be read with stale ones);
* one optimizer step with the periodic target update (`make_learn`);
* greedy acting and the greedy policy's value (`make_policy_of`);
* `algorithm`: a Q-learner's `Algorithm` from its network, its
  ``q_values(params, hparams, obs, static, action_space) -> [B, A]`` and its loss.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import optax

from envs.spaces import Discrete
from jaxrl.algos import acting, offpolicy
from jaxrl.algos.action_masks import allowed_actions, allowed_q, masked
from jaxrl.algos.algorithm import Algorithm
from jaxrl.algos.obs_normalization import check_unmasked, normalize_obs, normalize_transitions
from jaxrl.algos.q_learner.config import (
    DistributionalStatic,
    QLearnerHparams,
    QLearnerStatic,
)
from jaxrl.algos.q_learner.config import (
    QuantileHparams as QuantileHparams,  # re-exported: the kit's config, in one place
)
from jaxrl.config import ConfigError
from jaxrl.ops import (
    clipped_optimizer,
    linear_schedule,
    polyak_update,
    uniform_choice,
)
from jaxrl.parts import diagnostics as diag
from jaxrl.parts import memory
from jaxrl.parts.q_networks import DistributionalQNetwork
from jaxrl.parts.rollout import flatten_obs


def require_discrete(space, name: str) -> None:
    """`ConfigError` naming algorithm ``name`` unless ``space`` is `Discrete`."""
    if not isinstance(space, Discrete):
        raise ConfigError(f"{name} needs a discrete action space, got {space!r}")


def distributional_network(static: DistributionalStatic, space, name: str
                           ) -> DistributionalQNetwork:
    """``[B, A, K]`` outputs: ``K = static.distribution_size`` per action (``name``: the
    algorithm, for the error on a continuous action space)."""
    require_discrete(space, name)
    return DistributionalQNetwork(space.n, static.distribution_size, tuple(static.hidden),
                                  static.activation, static.dueling, static.torso)


QValues = Callable[..., jax.Array]
"""``q_values(params, hparams, obs [B, obs_dim], static, action_space) -> [B, A]``: a Q-learner's
action values (its network's output, or the mean of its return distribution)."""


def learning_rate(state, static: QLearnerStatic) -> jax.Array:
    """``[]`` the learning rate, linearly annealed to 0 over ``total_steps`` if ``anneal_lr``."""
    hp: QLearnerHparams = state.hparams
    if not static.anneal_lr:
        return jnp.asarray(hp.learning_rate)
    return hp.learning_rate * linear_schedule(1.0, 0.0, state.env_steps, hp.total_steps)


def optimizer(hp: QLearnerHparams, static: QLearnerStatic, lr: float | jax.Array
              ) -> optax.GradientTransformation:
    """The Q-network's optimizer (the learner's only one: its state is ``state.opt_state``)."""
    return clipped_optimizer(static.optimizer, hp, lr, static.rmsprop_style,
                             momentum=hp.rmsprop_momentum)


def observation_example(obs_dim: int, static: QLearnerStatic) -> tuple[jax.Array, ...]:
    """A Q-network's example inputs for its init: one zero observation ``[1, obs_dim]``."""
    del static
    return (jnp.zeros((1, obs_dim)),)


def make_init_learner(network_of: Callable, example_inputs: Callable = observation_example):
    """``init_learner(key, obs_dim, space, static, hp) -> (params, target params, opt_state)``
    for a Q-learner whose network is ``network_of(static, space)``, initialized at
    ``example_inputs(obs_dim, static)``; the target starts as a copy."""

    def init_learner(key, obs_dim: int, space, static: QLearnerStatic, hp: QLearnerHparams):
        check_unmasked(static, space)
        network = network_of(static, space)
        params = network.init(key, *example_inputs(obs_dim, static))
        return params, params, optimizer(hp, static, hp.learning_rate).init(params)

    return init_learner


def epsilon(state) -> jax.Array:
    """``[]`` linear decay from ``eps_start`` to ``eps_end`` over ``eps_decay_fraction`` of the
    run (``state.hparams`` has the three and ``total_steps``; ``state.env_steps`` counts)."""
    hp: QLearnerHparams = state.hparams
    return linear_schedule(hp.eps_start, hp.eps_end, state.env_steps,
                           hp.eps_decay_fraction * hp.total_steps)


def epsilon_greedy(key, q: jax.Array, eps: jax.Array, allowed: jax.Array | None = None
                   ) -> jax.Array:
    """``[N]`` int32: with probability ``eps`` a uniform action, else ``argmax_a q [N, A]``;
    both among the actions ``allowed [N, A]`` allows (None: all)."""
    greedy = jnp.argmax(masked(q, allowed), axis=-1)
    coin_key, action_key = jax.random.split(key)
    random = uniform_choice(action_key, q.shape[-1], greedy.shape, allowed)
    explore_now = jax.random.uniform(coin_key, greedy.shape) < eps
    return jnp.where(explore_now, random, greedy).astype(jnp.int32)


def make_explore(values: QValues):
    """``explore(state, obs [N, obs_dim], key, static, space) -> [N]``: epsilon-greedy at the
    current `epsilon` (training, and the policy's step when not deterministic), among the
    allowed actions, the Q-values at the observations as the agent reads them (`normalize_obs`)."""

    def explore(state, obs, key, static, space):
        q = values(state.params, state.hparams, normalize_obs(state, obs, static), static, space)
        return epsilon_greedy(key, q, epsilon(state), allowed_actions(space, obs))

    return explore


def take_action(x: jax.Array, action: jax.Array) -> jax.Array:
    """``x [B, A, ...]`` at ``action [B]`` -> ``[B, ...]``."""
    index = action.astype(jnp.int32).reshape(-1, 1, *([1] * (x.ndim - 2)))
    return jnp.take_along_axis(x, index, axis=1)[:, 0]


def next_outputs(params, target_params, network, next_obs, static: QLearnerStatic,
                 to_values: Callable = lambda out: out, space=None) -> jax.Array:
    """The target network's output at ``next_obs`` for the next action ``a*``: ``[B, ...]`` of
    its ``[B, A, ...]``. ``a* = argmax_a Q(s', a)`` over the actions ``space``'s mask allows at
    ``next_obs`` (every action for None, or a space without a mask), of the online net if ``double_q``, else of the target net; ``to_values`` maps
    an output ``[B, A, ...]`` to Q-values ``[B, A]`` (identity for DQN, the distribution's
    mean for C51 and QR-DQN)."""
    target_out = network.apply(target_params, next_obs)
    selector = network.apply(params, next_obs) if static.double_q else target_out
    best = jnp.argmax(allowed_q(to_values(selector), space, next_obs), axis=-1)
    return take_action(target_out, best)


def q_metrics(td: jax.Array, q_taken: jax.Array, targets: jax.Array) -> dict:
    """TD-error, Q and target statistics of a batch (each ``[B]``): the Q-learners' metrics."""
    return {"td_error_abs_mean": jnp.abs(td).mean(), "td_error_abs_max": jnp.abs(td).max(),
            **diag.describe(q_taken, "q"), **diag.describe(targets, "target")}


def make_learn(loss_fn: Callable):
    """``learn(state, batch, weights, key, static, space) -> offpolicy.Learned`` of a Q-learner
    whose ``loss_fn(params, state, batch, weights, key, static, space) -> (loss, (priority [B],
    metrics))`` is its importance-weighted loss (targets from ``state``'s networks, gradient
    stopped; ``key`` for a loss that samples, IQN's fractions). One optimizer step, then every ``target_update_period`` updates
    ``theta_target <- tau theta + (1 - tau) theta_target``; ``priority`` (|TD| for DQN) sets the
    sampled items' priorities under prioritized replay."""

    def learn(state, batch, weights, key, static: QLearnerStatic, space) -> offpolicy.Learned:
        hp: QLearnerHparams = state.hparams
        batch = normalize_transitions(state.obs_stats, batch)  # raw in the buffer
        with jax.named_scope("gradient"):
            (loss, (priority, metrics)), grads = jax.value_and_grad(loss_fn, has_aux=True)(
                state.params, state, batch, weights, key, static, space)
        lr = learning_rate(state, static)
        with jax.named_scope("optimizer"):
            updates, opt_state = optimizer(hp, static, lr).update(grads, state.opt_state,
                                                                   state.params)
            params = optax.apply_updates(state.params, updates)
        due = (state.update_step + 1) % static.target_update_period == 0
        target_params = jax.tree.map(lambda new, old: jnp.where(due, new, old),
                                     polyak_update(state.target_params, params, hp.tau),
                                     state.target_params)
        with jax.named_scope("diagnostics"):
            stats = diag.gradient_stats(grads, updates, static.verbosity)
        metrics = {"loss": loss, "epsilon": epsilon(state), "learning_rate": lr, **metrics,
                   **stats}
        return offpolicy.Learned(params, target_params, opt_state, priority, metrics)

    return learn


def make_policy_of(values: QValues, explore: Callable):
    """``make_policy(static, env, env_params) -> acting.Policy`` of a Q-learner: the greedy
    action ``argmax_a Q(s, a)`` ``[K]`` (``explore``'s epsilon-greedy one at the current epsilon
    when not deterministic) and the greedy policy's value ``V(s) = max_a Q(s, a)`` ``[K]``, at
    raw env observations ``[K, *obs_shape]`` (normalized as training reads them, with
    ``normalize_obs``), ``a`` ranging over the allowed actions."""

    def make_policy(static, env, env_params) -> acting.Policy:
        obs_space, space = env.observation_space(env_params), env.action_space(env_params)

        def q(state, obs):
            flat = flatten_obs(obs, obs_space)
            x = normalize_obs(state, flat, static)
            return allowed_q(values(state.params, state.hparams, x, static, space), space, flat)

        mode = lambda state, obs: jnp.argmax(q(state, obs), axis=-1)
        value = lambda state, obs: jnp.max(q(state, obs), axis=-1)
        return offpolicy.exploring_policy(mode, value, explore, static, env, env_params)

    return make_policy


def distributional_memory_model(config: Any, state: offpolicy.OffPolicyState, obs_bytes: int,
                                action_bytes: int) -> memory.Footprint:
    """The off-policy memory model (`offpolicy.memory_model`) plus what a distributional loss
    adds for its ``K = config.distribution_size`` outputs per action: the ``[B, K, K]`` pairwise
    array (C51's projection weights, QR-DQN's target-minus-quantile differences), its
    gradient and one temporary of it, over the sampled batch of ``B = batch_size``."""
    base = offpolicy.memory_model(config, state, obs_bytes, action_bytes)
    k = config.distribution_size
    pairwise = 3 * config.batch_size * k * k * 4
    return memory.Footprint(base.replay_bytes, base.working_bytes + pairwise)


def algorithm(name: str, config_cls: type, default_config: Callable, network_of: Callable,
              values: QValues, loss_fn: Callable,
              memory_model: Callable = offpolicy.memory_model,
              explore: Callable | None = None,
              example_inputs: Callable = observation_example) -> Algorithm:
    """A replay Q-learner's `Algorithm` on the off-policy train step: its network
    ``network_of(static, space)`` (initialized at ``example_inputs``, see `make_init_learner`),
    its Q-values (`QValues`) and its loss (see `make_learn`); epsilon-greedy in training
    (``explore``, by default `make_explore` at ``values``), greedy at ``values`` when evaluated
    (`make_policy_of`)."""
    explore = explore or make_explore(values)
    init_learner = make_init_learner(network_of, example_inputs)
    return offpolicy.algorithm(name, config_cls, default_config, init_learner,
                               explore, make_learn(loss_fn), make_policy_of(values, explore),
                               ("discrete",), memory_model, kit="q_learner", action_masks=True)

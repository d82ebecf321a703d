"""PQN, parallelised Q-learning (Gallici et al., 2024, "Simplifying Deep Temporal Difference
Learning"): Q-learning over many vectorized envs with no replay buffer and no target network,
a LayerNorm before every activation of the Q-network, and Peng's Q(lambda) targets over each
rollout.

    for each train step:
        collect T steps from N envs, epsilon-greedy on Q (eps decays linearly)  (rollout.collect)
        y_t = r_t + gamma (1 - terminated_t) ((1 - lam) max_a Q(s_{t+1}, a) + lam y_{t+1})
              with y_{t+1} := max_a Q(s_{t+1}, a) where step t was cut by a time limit or is
              the rollout's last (s_{t+1}: the true next observation, the final one at a
              truncation)                                                    (ops.lambda_returns)
        update_epochs x num_minibatches shuffled steps of RAdam on 0.5 (Q(s, a) - y)^2,
        clipped by global norm                                             (onpolicy.minibatch_sgd)

The targets are computed once per rollout, with the network that collected it (as the paper's
reference implementation, purejaxql, does). With ``replay_rollouts = K > 0`` the last K
rollouts are kept in the state (a FIFO of whole rollouts, so the lambda-returns still run along
time) and each update fits the new rollout and the K kept ones together: their targets are
recomputed with the current network, the slots not yet filled weigh nothing, and each pass has
``(K + 1) * num_minibatches`` minibatches of the usual size. Rewards are multiplied by
``reward_scale`` before learning (purejaxql's CartPole setting: 0.1); the Q-values that acting
and the probes read are divided by it again, so they are in the env's reward units.

Shared: the rollout (`jaxrl.rollout.collect`), minibatch SGD and LR annealing (`onpolicy`),
the lambda-return op (`jaxrl.ops.lambda_returns`: Peng's Q(lambda) with ``next_values = max_a
Q``), acting and action masks (`q_learner`), the on-policy memory model (a rollout, no replay).
"""

from __future__ import annotations

import dataclasses
from typing import Any, cast

import chex
import jax
import jax.numpy as jnp
from flax import struct

from envs.spaces import Discrete
from envs.wrappers import completed_episode_summary
from jaxrl import diagnostics as diag
from jaxrl import memory
from jaxrl.algos import onpolicy, q_learner
from jaxrl.algos.action_masks import allowed_q
from jaxrl.algos.algorithm import standalone
from jaxrl.algos.families import family_defaults
from jaxrl.config import (
    NON_NEGATIVE,
    POSITIVE,
    UNIT,
    AlgoConfig,
    ConfigError,
    Hparams,
    static,
    traced,
)
from jaxrl.networks import QNetwork
from jaxrl.ops import clipped_optimizer, lambda_returns
from jaxrl.rollout import EnvCarry, collect, reset_envs
from jaxrl.rollout import obs_dim as flat_dim
from jaxrl.torsos import check_network_fields
from jaxrl.transition import Transition

OPTIMIZERS = ("radam", "adam")


@dataclasses.dataclass(frozen=True)
class PQNStatic(onpolicy.RolloutStatic):
    """PQN's static fields (shapes, loop counts, flags)."""

    num_envs: int = static(128, "parallel envs per seed")
    num_steps: int = static(32, "rollout length T per env per update")
    update_epochs: int = static(2, "passes over each rollout")
    num_minibatches: int = static(32, "minibatches per pass")
    hidden: tuple[int, ...] = static((128, 128), "MLP widths")
    torso: str = static("auto", "auto | mlp | minatar_cnn | nature_cnn | nature_cnn_small"
                        " (auto: by observation shape, resolved by the driver; a conv torso"
                        " replaces hidden)")
    activation: str = static("relu")
    layer_norm: bool = static(True, "LayerNorm before every activation of the Q-network")
    optimizer: str = static("radam", "radam | adam")
    anneal_lr: bool = static(True, "linearly anneal the learning rate to 0 over total_steps")
    replay_rollouts: int = static(0, "past rollouts kept and refit with each new one, targets"
                                  " recomputed (0: none, the paper's default)", valid=NON_NEGATIVE)
    bootstrap_truncation: bool = static(True, "False treats time limits as termination (wrong)")
    verbosity: str = static("basic", "diagnostics level: basic | debug | full")

    @property
    def minibatches_per_pass(self) -> int:
        """Minibatches per pass over the new rollout and the replayed ones (their size stays
        ``steps_per_update / num_minibatches``)."""
        return (self.replay_rollouts + 1) * self.num_minibatches

    def validate(self) -> None:
        check_network_fields(self.activation, self.torso, self.verbosity, diag.LEVELS)
        if self.optimizer not in OPTIMIZERS:
            raise ConfigError(f"optimizer must be one of {OPTIMIZERS}, got {self.optimizer!r}")
        if self.steps_per_update % self.num_minibatches:
            raise ConfigError(f"num_envs * num_steps ({self.steps_per_update}) must be divisible "
                              f"by num_minibatches ({self.num_minibatches})")


@struct.dataclass(frozen=True)
class PQNHparams(Hparams):
    """PQN's traced hyperparameters (``state.hparams``)."""

    learning_rate: float = traced(2.5e-4, valid=POSITIVE)
    gamma: float = traced(0.99, valid=UNIT)
    q_lambda: float = traced(0.65, "lambda of the Q(lambda) targets (0: one-step Q-learning)",
                             valid=UNIT)
    max_grad_norm: float = traced(10.0, "global-norm gradient clipping", valid=POSITIVE)
    adam_eps: float = traced(1e-8, "(R)Adam epsilon", valid=POSITIVE)
    eps_start: float = traced(1.0, "epsilon-greedy at the start", valid=UNIT)
    eps_end: float = traced(0.05, "epsilon-greedy after the decay", valid=UNIT)
    eps_decay_fraction: float = traced(0.1, "fraction of total_steps over which eps decays",
                                       valid=UNIT)
    reward_scale: float = traced(1.0, "rewards are multiplied by this before learning",
                                 valid=POSITIVE)
    total_steps: float = traced(0.0, "env steps per seed (set by train; anneal horizon)",
                                valid=NON_NEGATIVE)


@dataclasses.dataclass(frozen=True)
class PQNConfig(AlgoConfig, PQNHparams, PQNStatic):
    """PQN's config: the fields of `PQNStatic` and `PQNHparams` as one."""


def default_config(env_name: str) -> PQNConfig:
    """PQN's defaults for ``env_name``'s family (`jaxrl.algos.families`)."""
    return PQNConfig(**family_defaults("pqn", env_name))


@struct.dataclass
class Replay:
    """The last ``K = replay_rollouts`` rollouts, oldest first, and ``valid [K]`` (filled)."""

    steps: Transition  # leaves [K, T, N, ...], flags as the loss sees them
    valid: jax.Array  # [K] bool


@struct.dataclass
class PQNState:
    params: Any  # the Q-network's flax variables
    opt_state: Any
    replay: Replay  # K = 0: empty leaves [0, T, N, ...]
    carry: EnvCarry
    key: jax.Array
    update_step: jax.Array  # [] int32
    env_steps: jax.Array  # [] int32 per seed
    hparams: PQNHparams  # float32 scalars


@struct.dataclass
class Batch:
    """One rollout, flattened: leaves ``[B, ...]`` with ``B = T * N``."""

    obs: jax.Array  # [B, obs_dim]
    action: jax.Array  # [B] int32
    target: jax.Array  # [B] the Q(lambda) return y
    weight: jax.Array | None = None  # [B] 0 for replay slots not yet filled (None: no replay)


def make_network(static: PQNStatic, space: Discrete) -> QNetwork:
    if not isinstance(space, Discrete):
        raise ConfigError(f"PQN needs a discrete action space, got {space!r}")
    return QNetwork(space.n, tuple(static.hidden), static.activation, False, static.torso,
                    static.layer_norm)


def q_values(params, hp: PQNHparams, obs: jax.Array, static: PQNStatic, space) -> jax.Array:
    """``[B, A]`` Q-values in the env's reward units (the network's, divided by
    ``reward_scale``) at flat observations ``obs [B, obs_dim]``."""
    return cast(jax.Array, make_network(static, space).apply(params, obs)) / hp.reward_scale


def optimizer(hp: PQNHparams, static: PQNStatic, lr):
    return clipped_optimizer(static.optimizer, hp, lr, "pytorch")


def init(key: jax.Array, env, env_params, config, hparams: PQNHparams | None = None
         ) -> PQNState:
    """A fresh Q-network, optimizer and envs for one seed. ``config``: a whole config (its
    traced values go into ``state.hparams``), or a static view given with ``hparams``."""
    hp = cast(PQNHparams, config.hparams() if hparams is None else hparams)
    static = config.static()
    net_key, env_key, state_key = jax.random.split(key, 3)
    network = make_network(static, env.action_space(env_params))
    dim = flat_dim(env.observation_space(env_params))
    params = network.init(net_key, jnp.zeros((1, dim)))
    return PQNState(params=params, opt_state=optimizer(hp, static, hp.learning_rate).init(params),
                    replay=empty_replay(static, dim),
                    carry=reset_envs(env_key, env, env_params, static.num_envs), key=state_key,
                    update_step=jnp.zeros((), jnp.int32), env_steps=jnp.zeros((), jnp.int32),
                    hparams=hp)


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


def replay_batch(state: PQNState, fresh: Transition, network, space=None
                 ) -> tuple[Batch, jax.Array, Replay]:
    """The batch an update fits: the new rollout ``fresh`` (leaves ``[T, N, ...]``) and the
    replayed ones, every target from the current network. ``-> (batch [(K+1) T N], targets of
    the new rollout [T, N], the replay with ``fresh`` pushed in and the oldest dropped)``."""
    targets = q_lambda_targets(state.params, state.hparams, fresh, network, space)
    flat = lambda x: x.reshape(-1, *x.shape[2:])
    if state.replay.valid.shape[0] == 0:
        return Batch(flat(fresh.obs), flat(fresh.action), flat(targets)), targets, state.replay
    rollouts = jax.tree.map(lambda old, new: jnp.concatenate([old, new[None]]),
                            state.replay.steps, fresh)  # [K+1, T, N, ...]
    valid = jnp.concatenate([state.replay.valid, jnp.ones((1,), bool)])
    all_targets = jax.vmap(lambda s: q_lambda_targets(state.params, state.hparams, s,
                                                      network, space))(rollouts)
    weight = jnp.broadcast_to(valid[:, None, None], all_targets.shape).astype(jnp.float32)
    flat2 = lambda x: x.reshape(-1, *x.shape[3:])
    batch = Batch(flat2(rollouts.obs), flat2(rollouts.action), flat2(all_targets),
                  flat2(weight))
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


def train_step(state: PQNState, static: PQNStatic, env, env_params):
    """Collect a rollout, compute its Q(lambda) targets, and fit Q to them (the module
    docstring); ``-> (state, metrics)``. Loss, TD, Q and target metrics are in the scaled
    reward units the loss sees."""
    space = env.action_space(env_params)
    network = make_network(static, space)
    key, rollout_key, update_key = jax.random.split(state.key, 3)
    act = lambda obs, k: (explore(state, obs, k, static, space), jnp.zeros(obs.shape[:1]))
    carry, traj = collect(rollout_key, env, env_params, state.carry, act, static.num_steps)
    batch, targets, replay = replay_batch(state, as_transitions(traj, static), network, space)
    lr = state.hparams.learning_rate * onpolicy.lr_scale(state, static)
    params, opt_state, aux = onpolicy.minibatch_sgd(
        lambda p, mb: td_loss(p, network, mb), state.params, state.opt_state,
        optimizer(state.hparams, static, lr), batch, update_key, static.update_epochs,
        static.minibatches_per_pass, static.verbosity)
    env_steps = state.env_steps + static.steps_per_update
    metrics = {**aux, **diag.describe(targets, "target"),
               "epsilon": q_learner.epsilon(state), "learning_rate": lr,
               **completed_episode_summary(traj.info), "env_steps": env_steps.astype(jnp.float32)}
    new_state = dataclasses.replace(state, params=params, opt_state=opt_state, replay=replay,
                                    carry=carry, key=key, update_step=state.update_step + 1,
                                    env_steps=env_steps)
    return new_state, metrics


def memory_model(config: PQNStatic, state: PQNState, obs_bytes: int, action_bytes: int
                 ) -> memory.Footprint:
    """PQN's memory model (`jaxrl.memory`): the kept rollouts are its replay; an update works on
    ``replay_rollouts + 1`` rollouts, each one on-policy working set (`onpolicy.working_set`)."""
    one = onpolicy.working_set(config, state.params, state.opt_state, obs_bytes, action_bytes)
    return memory.Footprint(replay_bytes=memory.tree_bytes(state.replay),
                            working_bytes=(config.replay_rollouts + 1) * one)


explore = q_learner.make_explore(q_values)
ALGORITHM = standalone("pqn", PQNConfig, default_config, init, train_step,
                       q_learner.make_policy_of(q_values, explore), memory_model, ("discrete",),
                       action_masks=True)

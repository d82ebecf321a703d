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

With ``normalize_obs`` observations are standardized by running statistics
(`jaxrl.algos.obs_normalization`): each rollout's observations are folded in once it is
collected, and acting (training's, evaluation's, the stored and exported policy's) and the update
read the statistics of that moment; replayed rollouts are kept raw and normalized anew.

The config is `jaxrl.algos.pqn_config`'s; the replay, targets, batch and loss
`jaxrl.algos.pqn_batch`'s. Shared: the rollout (`jaxrl.parts.rollout.collect`), minibatch SGD and LR
annealing (`onpolicy`), the lambda-return op (`jaxrl.ops.lambda_returns`: Peng's Q(lambda) with
``next_values = max_a Q``), acting and action masks (`q_learner`), the on-policy memory model
(a rollout, no replay).
"""

from __future__ import annotations

import dataclasses
from typing import Any, cast

import jax
import jax.numpy as jnp
from flax import struct

from envs.spaces import Discrete
from envs.wrappers import completed_episode_summary
from jaxrl.algos import onpolicy, q_learner
from jaxrl.algos.algorithm import standalone
from jaxrl.algos.obs_normalization import check_unmasked, init_obs_stats, update_obs_stats
from jaxrl.algos.pqn_batch import (
    Batch,
    Replay,
    as_transitions,
    empty_replay,
    q_lambda_targets,
    replay_batch,
    td_loss,
)
from jaxrl.algos.pqn_config import OPTIMIZERS, PQNConfig, PQNHparams, PQNStatic, default_config
from jaxrl.config import ConfigError
from jaxrl.ops import RunningMeanStd, clipped_optimizer
from jaxrl.parts import diagnostics as diag
from jaxrl.parts import memory
from jaxrl.parts.q_networks import QNetwork
from jaxrl.parts.rollout import EnvCarry, collect, reset_envs
from jaxrl.parts.rollout import obs_dim as flat_dim
from jaxrl.parts.transition import Transition
from jaxrl.parts.user_networks import UserQNetwork, is_own

__all__ = ["ALGORITHM", "OPTIMIZERS", "Batch", "PQNConfig", "PQNHparams", "PQNState", "PQNStatic",
           "Replay", "Transition", "as_transitions", "default_config", "empty_replay", "explore",
           "init", "make_network", "memory_model", "optimizer", "q_lambda_targets", "q_values",
           "replay_batch", "td_loss", "train_step"]


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
    obs_stats: RunningMeanStd | None = None  # [obs_dim] with normalize_obs, else None


def make_network(static: PQNStatic, space: Discrete) -> QNetwork | UserQNetwork:
    if not isinstance(space, Discrete):
        raise ConfigError(f"PQN needs a discrete action space, got {space!r}")
    if is_own(static.network):
        return UserQNetwork(space.n, static.network)
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
    check_unmasked(static, env.action_space(env_params))
    network = make_network(static, env.action_space(env_params))
    dim = flat_dim(env.observation_space(env_params))
    params = network.init(net_key, jnp.zeros((1, dim)))
    return PQNState(params=params, opt_state=optimizer(hp, static, hp.learning_rate).init(params),
                    replay=empty_replay(static, dim),
                    carry=reset_envs(env_key, env, env_params, static.num_envs), key=state_key,
                    update_step=jnp.zeros((), jnp.int32), env_steps=jnp.zeros((), jnp.int32),
                    hparams=hp, obs_stats=init_obs_stats(static, dim))


def train_step(state: PQNState, static: PQNStatic, env, env_params):
    """Collect a rollout, fold its observations into the statistics (with ``normalize_obs``),
    compute its Q(lambda) targets, and fit Q to them (the module docstring);
    ``-> (state, metrics)``. Loss, TD, Q and target metrics are in the scaled
    reward units the loss sees."""
    space = env.action_space(env_params)
    network = make_network(static, space)
    key, rollout_key, update_key = jax.random.split(state.key, 3)
    act = lambda obs, k: (explore(state, obs, k, static, space), jnp.zeros(obs.shape[:1]))
    carry, traj = collect(rollout_key, env, env_params, state.carry, act, static.num_steps)
    state = dataclasses.replace(state, obs_stats=update_obs_stats(state.obs_stats, traj.obs))
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
    """PQN's memory model (`jaxrl.parts.memory`): the kept rollouts are its replay; an update works on
    ``replay_rollouts + 1`` rollouts, each one on-policy working set (`onpolicy.working_set`)."""
    one = onpolicy.working_set(config, state.params, state.opt_state, obs_bytes, action_bytes)
    return memory.Footprint(replay_bytes=memory.tree_bytes(state.replay),
                            working_bytes=(config.replay_rollouts + 1) * one)


explore = q_learner.make_explore(q_values)
ALGORITHM = standalone("pqn", PQNConfig, default_config, init, train_step,
                       q_learner.make_policy_of(q_values, explore), memory_model, ("discrete",),
                       action_masks=True)

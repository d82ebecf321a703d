"""The off-policy train state and what builds it: the replay buffer's module and example row,
the learner's output (`Learned`) and `make_init`."""

from __future__ import annotations

import dataclasses
from typing import Any

import chex
import jax
import jax.numpy as jnp
from flax import struct

from envs.spaces import Discrete
from jaxrl.algos.obs_normalization import init_obs_stats
from jaxrl.algos.offpolicy.config import (
    OffPolicyHparams,
    OffPolicyStatic,
    action_dim,
    correlated_noise,
)
from jaxrl.config import ConfigError
from jaxrl.ops import RunningMeanStd, noise
from jaxrl.parts.buffers import frames, nstep, prioritized, uniform
from jaxrl.parts.rollout import EnvCarry, obs_dim, reset_envs
from jaxrl.parts.transition import Transition


@struct.dataclass
class OffPolicyState:
    params: Any  # the learner's networks (`ActorCriticGroups`, or DQN's Q-network variables)
    target_params: Any  # alike
    opt_state: Any  # alike: one optimizer state per trained group
    buffer: uniform.ReplayState | prioritized.PrioritizedState
    window: nstep.NStepWindow
    frames: frames.FrameStore | None  # with frame_replay: the frames the buffer's items point to
    carry: EnvCarry
    key: jax.Array
    rounds: jax.Array  # [] int32 env-step rounds so far
    update_step: jax.Array  # [] int32 gradient updates so far
    env_steps: jax.Array  # [] int32 per seed
    hparams: OffPolicyHparams  # the algorithm's subclass of it, float32 scalars
    # [N, action_dim] float32 Ornstein-Uhlenbeck exploration noise (`jaxrl.ops.noise`) where
    # the config's ``action_noise`` is "ou" (DDPG, TD3, SAC); None otherwise
    noise: jax.Array | None = None
    # [obs_dim] running statistics of the observations collected where the config's
    # ``normalize_obs`` is on (`jaxrl.algos.obs_normalization`; the Q-learners); None otherwise
    obs_stats: RunningMeanStd | None = None


@struct.dataclass
class Learned:
    """What one learning step returns."""

    params: Any
    target_params: Any
    opt_state: Any
    td_error: jax.Array  # [B] for priorities
    metrics: dict


def check_transitions(batch, weights: jax.Array) -> None:
    """The shape contract at a loss's input (checked at trace time): every leaf of the sampled
    batch ``[B, ...]``, next observations shaped like observations, rewards, discounts and
    importance weights ``[B]``."""
    per_sample = [batch.reward, batch.discount, weights]
    chex.assert_rank(per_sample, 1)
    chex.assert_equal_shape(per_sample)
    chex.assert_equal_shape([batch.obs, batch.next_obs])
    chex.assert_equal_shape_prefix([*jax.tree.leaves(batch), weights], 1)


def buffer_module(static: OffPolicyStatic):
    """The replay module (`jaxrl.parts.buffers.uniform` or `.prioritized`); both follow one buffer
    protocol (``init``, ``add``, ``sample`` with importance weights, ``staleness``,
    ``fill_fraction``), so only the priority updates branch on ``static.prioritized``."""
    return prioritized if static.prioritized else uniform


def frame_shape(env, env_params, static: Any) -> tuple[int, int, int] | None:
    """``(H, W, S)`` of the observations when ``static.frame_replay`` is on (None when off);
    the off-policy algorithms' and ACER's."""
    if not static.frame_replay:
        return None
    shape = tuple(env.observation_space(env_params).shape)
    if len(shape) != 3:
        raise ConfigError(f"frame_replay needs stacked image observations [H, W, S], got shape "
                          f"{shape}")
    return shape


def example_row(env, env_params, static: OffPolicyStatic) -> Transition:
    space = env.action_space(env_params)
    n, d = static.num_envs, obs_dim(env.observation_space(env_params))
    if isinstance(space, Discrete):
        action = jnp.zeros((n,), jnp.int32)
    else:
        action = jnp.zeros((n, *space.shape), jnp.float32)
    obs = jnp.zeros((n, d), jnp.float32)
    flag = jnp.zeros((n,), bool)
    return Transition(obs, action, jnp.zeros((n,), jnp.float32), flag, flag, obs)


def unflatten(item: nstep.NStepTransition, shape: tuple[int, ...]) -> nstep.NStepTransition:
    """``obs`` and ``next_obs`` ``[K, obs_dim] -> [K, *shape]``."""
    view = lambda x: x.reshape(x.shape[0], *shape)
    return dataclasses.replace(item, obs=view(item.obs), next_obs=view(item.next_obs))


def make_init(init_learner):
    """``init(key, env, env_params, config, hparams=None) -> OffPolicyState`` for an algorithm
    whose ``init_learner(key, obs_dim, action_space, static, hp) -> (params, target_params,
    opt_state)``."""

    def init(key: jax.Array, env, env_params, config, hparams: OffPolicyHparams | None = None
             ) -> OffPolicyState:
        """Fresh learner, replay buffer and envs for one seed. ``config``: a whole config (its
        traced values go into ``state.hparams``), or a static view given with ``hparams``."""
        hp = config.hparams() if hparams is None else hparams
        static = config.static()
        learner_key, env_key, state_key = jax.random.split(key, 3)
        row = example_row(env, env_params, static)
        dim = obs_dim(env.observation_space(env_params))
        params, target_params, opt_state = init_learner(
            learner_key, dim, env.action_space(env_params), static, hp)
        items = nstep.emit(jax.tree.map(lambda x: x[None], row), 1.0)
        shape = frame_shape(env, env_params, static)
        store = None
        if shape is not None:
            store = frames.init(shape, static.num_envs, frames.ring_rounds(
                static.buffer_size, static.num_envs, static.n_step, shape[-1]))
            items = frames.encode(store, unflatten(items, shape), static.n_step)
        one_item = jax.tree.map(lambda x: x[0], items)
        ou = None
        if correlated_noise(static):
            state_key, noise_key = jax.random.split(state_key)
            dim = action_dim(env.action_space(env_params))
            ou = noise.ou_init(noise_key, (static.num_envs, dim))
        return OffPolicyState(
            params=params, target_params=target_params, opt_state=opt_state,
            buffer=buffer_module(static).init(one_item, static.buffer_size),
            window=nstep.window_init(row, static.n_step), frames=store,
            carry=reset_envs(env_key, env, env_params, static.num_envs),
            key=state_key, rounds=jnp.zeros((), jnp.int32), update_step=jnp.zeros((), jnp.int32),
            env_steps=jnp.zeros((), jnp.int32), hparams=hp, noise=ou,
            obs_stats=init_obs_stats(static, dim),
        )

    return init

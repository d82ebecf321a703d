"""The on-policy train state and what builds it: the network, parameter groups, the annealing
factors and `make_init`."""

from __future__ import annotations

import dataclasses
from typing import Any, Protocol

import jax
import jax.numpy as jnp
from flax import struct

from jaxrl.algos import acting
from jaxrl.algos.acting import PolicyStatic
from jaxrl.algos.onpolicy.config import OnPolicyHparams, RolloutStatic
from jaxrl.config import ConfigError
from jaxrl.ops import (
    RunningMeanStd,
    linear_schedule,
    popart,
    running_stats_init,
)
from jaxrl.parts.actor_critic import ActorCritic
from jaxrl.parts.recurrent import RecurrentActorCritic
from jaxrl.parts.rollout import EnvCarry, obs_dim, reset_envs
from jaxrl.parts.torsos import resolve_torso
from jaxrl.parts.user_networks import UserActorCritic, is_own


@struct.dataclass
class RewardScaler:
    """Running statistics of the discounted return, for reward scaling."""

    stats: RunningMeanStd  # over scalars
    discounted: jax.Array  # [N] running discounted return per env


@struct.dataclass(frozen=True)
class ParamGroups:
    """One entry per parameter group: ``all`` (every parameter), or ``policy`` and ``value``
    (the two MLPs of an unshared `ActorCritic`); None for a group the algorithm does not train.
    The entries are the groups' optimizers (``GradientTransformation``) or their states."""

    all: Any = None
    policy: Any = None
    value: Any = None

    def items(self) -> list[tuple[str, Any]]:
        """``(group, entry)`` for the groups in use."""
        return [(f.name, getattr(self, f.name)) for f in dataclasses.fields(self)
                if getattr(self, f.name) is not None]


@struct.dataclass
class OnPolicyState:
    params: Any  # the `ActorCritic`'s flax variables
    opt_state: ParamGroups  # one optimizer state per trained parameter group
    obs_stats: RunningMeanStd  # [obs_dim]
    reward_scaler: RewardScaler
    value_stats: popart.PopArtStats  # PopArt's target statistics (unused unless static.popart)
    carry: EnvCarry
    memory: Any  # a recurrent policy's memory per env (leaves [N, ...]); () if feed-forward
    key: jax.Array
    update_step: jax.Array  # [] int32
    env_steps: jax.Array  # [] int32 per seed
    hparams: OnPolicyHparams  # the algorithm's subclass of it, float32 scalars


@struct.dataclass(frozen=True)
class Updated:
    """What an algorithm's update returns."""

    params: Any
    opt_state: ParamGroups
    metrics: dict  # scalar metrics; must include the policy ``entropy``


def make_network(static: PolicyStatic, env, env_params
                 ) -> ActorCritic | RecurrentActorCritic | UserActorCritic:
    space = env.action_space(env_params)
    mask = action_mask_size(static, space)
    if is_own(static.network):
        return UserActorCritic(space, static.network, static.init_log_std, mask)
    torso = resolve_torso(static.torso, env.observation_space(env_params).shape)
    args = (space, tuple(static.hidden), static.activation, static.init_log_std,
            static.shared_network, torso)
    heads = tuple(static.head_hidden)
    if static.recurrent:
        return RecurrentActorCritic(*args, static.rnn, static.rnn_size, heads)
    own = acting.policy_obs_size(static.asymmetric_critic, env)
    return ActorCritic(*args, policy_obs=own, action_mask=mask, head_hidden=heads)


def action_mask_size(static: PolicyStatic, space) -> int:
    """How many trailing observation entries mask the policy's actions: the action ``space``'s
    ``mask_size`` (`envs.spaces.Discrete`; 0: none). The mask must reach the policy as the env
    gives it: `ConfigError` with observation normalization or a recurrent policy."""
    size = int(getattr(space, "mask_size", 0))
    if size and (static.normalize_obs or static.recurrent):
        raise ConfigError("this env's observation ends in an action mask, which the policy "
                          "reads as given: set normalize_obs=False (and rnn=none)")
    return size


def initial_memory(static: PolicyStatic, network, num_envs: int):
    """The policy's memory of ``num_envs`` envs at an episode start (``()`` if feed-forward)."""
    return network.initial_memory((num_envs,)) if static.recurrent else ()


# ----------------------------------------------------------------------------- parameters


_GROUP_KEYS = {"policy": "policy", "value": "value_net"}


def param_group(params, group: str):
    """The parameters one optimizer owns: ``"all"`` | ``"policy"`` | ``"value"`` (a field of
    `ParamGroups`)."""
    return params if group == "all" else params["params"][_GROUP_KEYS[group]]


def with_param_group(params, group: str, sub):
    """``params`` with one group replaced (a new pytree; the input is untouched)."""
    if group == "all":
        return sub
    return {**params, "params": {**params["params"], _GROUP_KEYS[group]: sub}}


def policy_log_std(params) -> jax.Array:
    """``[act_dim]`` the state-independent log-std of a Gaussian policy's parameters (jaxrl's
    network keeps it in its policy, a user's network beside the user's module)."""
    top = params["params"]
    return top["log_std"] if "log_std" in top else param_group(params, "policy")["log_std"]


class Progress(Protocol):
    """What the linear annealings read of a train state (an on-policy one, PQN's): the env
    steps so far and the traced ``hparams`` with their ``total_steps``."""

    @property
    def env_steps(self) -> jax.Array: ...
    @property
    def hparams(self) -> Any: ...


def progress_scale(state: Progress) -> jax.Array:
    """``[]`` the share of the run still ahead: 1 at the start, 0 at ``total_steps`` (1 throughout
    when no horizon is set). The factor every linear annealing multiplies by."""
    horizon = state.hparams.total_steps
    return jnp.where(horizon > 0, linear_schedule(1.0, 0.0, state.env_steps, horizon), 1.0)


def lr_scale(state: Progress, static: RolloutStatic) -> jax.Array:
    """``[]`` the learning rate's factor: `progress_scale` with ``anneal_lr``, else 1."""
    return progress_scale(state) if static.anneal_lr else jnp.float32(1.0)


def make_init(optimizers):
    """``init(key, env, env_params, config, hparams=None) -> OnPolicyState`` for an algorithm
    whose optimizers are ``optimizers(hp, static, lr_scale) -> ParamGroups``."""

    def init(key: jax.Array, env, env_params, config, hparams: OnPolicyHparams | None = None
             ) -> OnPolicyState:
        """Fresh agent and envs for one seed. ``config``: a whole config (its traced values go
        into ``state.hparams``), or a static view given with ``hparams``."""
        hp = config.hparams() if hparams is None else hparams
        static = config.static()
        net_key, env_key, state_key = jax.random.split(key, 3)
        dim = obs_dim(env.observation_space(env_params))
        network = make_network(static, env, env_params)
        obs = jnp.zeros((1, dim))
        params = (network.init(net_key, initial_memory(static, network, 1), obs,
                               jnp.ones((1,), bool))
                  if static.recurrent else network.init(net_key, obs))
        opt_state = ParamGroups(**{group: tx.init(param_group(params, group)) for group, tx
                                   in optimizers(hp, static, jnp.float32(1.0)).items()})
        return OnPolicyState(
            params=params,
            opt_state=opt_state,
            obs_stats=running_stats_init((dim,)),
            reward_scaler=RewardScaler(running_stats_init(()), jnp.zeros((static.num_envs,))),
            value_stats=popart.init(),
            carry=reset_envs(env_key, env, env_params, static.num_envs),
            memory=initial_memory(static, network, static.num_envs),
            key=state_key,
            update_step=jnp.zeros((), jnp.int32),
            env_steps=jnp.zeros((), jnp.int32),
            hparams=hp,
        )

    return init

"""Acting, apart from learning: an algorithm's one `Policy`.

Every algorithm makes one `Policy` (``Algorithm.make_policy(static, env, env_params)``); all of
its rules read raw env observations ``obs [..., *obs_shape]``:

* ``mode(state, obs)``: the deterministic action in the agent's space (Box actions in
  ``[-1, 1]``): evaluation, probes, the expert actions of demonstrations;
* ``value(state, obs [K, *obs_shape]) -> [K]``: the value the agent estimates (probes,
  notebooks);
* ``initial(n)``: the memory of ``n`` envs at an episode start (``()`` without memory);
* ``step(state, memory, obs, key, deterministic) -> (memory, env action)``: the action in the
  env's space, the mode or (``deterministic=False``) the exploring action training takes (a
  policy sample, epsilon-greedy, Gaussian noise). The caller zeroes the memory of an env whose
  episode ended (`jaxrl.parts.recurrent.reset_memory`).

`feed_forward` makes the memoryless policy of a ``mode`` and a ``sample(state, obs, key)``;
``Policy.act`` is its step without memory.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any, Protocol

import jax
import numpy as np

from envs.core import wrapped_attr
from envs.spaces import Space
from jaxrl.algos.network_static import NetworkStatic
from jaxrl.config import ANY, ConfigError, static
from jaxrl.ops import RunningMeanStd, popart
from jaxrl.parts.actions import to_env_action

_NO_HEAD_LAYERS: tuple[int, ...] = ()  # typed: a subclass's head_hidden field is a tuple of widths


@dataclasses.dataclass(frozen=True)
class PolicyStatic(NetworkStatic):
    """The base of the configs whose agent is an `ActorCritic` (`onpolicy.OnPolicyStatic`, and
    BC, which trains the same policy another way): the static fields acting with it reads
    (`onpolicy.make_network`, `onpolicy.make_policy`). The switches with a value and no field
    here are off for a subclass that does not declare them (BC: no shared torso, no head
    layers, no recurrent core, no PopArt, no asymmetric critic)."""

    init_log_std: float = static(0.0, "initial log-std of Gaussian policies", valid=ANY)
    normalize_obs: bool = static(True, "standardize observations (on-policy: by the running "
                                 "mean/var of the rollouts; BC: by the expert's statistics)")
    shared_network = False
    head_hidden = _NO_HEAD_LAYERS
    rnn = "none"
    rnn_size = 0
    popart = False
    asymmetric_critic = False
    network = "default"  # the user's whole network (`jaxrl.parts.user_networks`), else jaxrl's

    @property
    def recurrent(self) -> bool:
        return self.rnn != "none"


class PolicyState(Protocol):
    """What acting reads of a train state: the network's variables and the statistics of its
    inputs and value outputs."""

    @property
    def params(self) -> Any: ...
    @property
    def obs_stats(self) -> RunningMeanStd: ...
    @property
    def value_stats(self) -> popart.PopArtStats: ...


Mode = Callable[..., jax.Array]  # (state, obs) -> agent action
Sample = Callable[..., jax.Array]  # (state, obs, key) -> agent action
Value = Callable[..., jax.Array]  # (state, obs [K, *obs_shape]) -> [K]


@dataclasses.dataclass(frozen=True)
class Policy:
    """An algorithm's acting policy (see the module docstring)."""

    initial: Callable[[int], Any]  # n -> memory of n envs at an episode start
    step: Callable[..., tuple[Any, jax.Array]]  # (state, memory, obs, key, det) -> (memory, a)
    mode: Mode  # (state, obs) -> deterministic agent action
    value: Value  # (state, obs [K, *obs_shape]) -> [K]
    recurrent: bool = False  # carries memory from step to step

    def act(self, state, obs: jax.Array, key: jax.Array, deterministic: bool = True
            ) -> jax.Array:
        """The env action ``[..., *action_shape]`` of a memoryless policy (``deterministic``: a
        Python bool; ``key`` is unused when it is True)."""
        return self.step(state, (), obs, key, deterministic)[1]


def no_memory(n: int) -> tuple:
    """The memory of a feed-forward policy: none."""
    del n
    return ()


def feed_forward(mode: Mode, sample: Sample, value: Value, action_space: Space) -> Policy:
    """The memoryless `Policy` acting by ``mode(state, obs)``, or by ``sample(state, obs, key)``
    when ``deterministic`` is False, mapped to the env's action space
    (`jaxrl.parts.actions.to_env_action`)."""

    def step(state, memory, obs: jax.Array, key: jax.Array, deterministic: bool = True):
        action = mode(state, obs) if deterministic else sample(state, obs, key)
        return memory, to_env_action(action_space, action)

    return Policy(no_memory, step, mode, value)


def jitted(policy: Policy) -> Policy:
    """``policy`` with its step jitted (``deterministic`` static), for acting from the host."""
    return dataclasses.replace(policy, step=jax.jit(policy.step, static_argnums=4))


def act_with(policy: Policy, state, obs, key, seed: int, deterministic: bool, memory,
             obs_shape: tuple | None = None):
    """One seed's action at raw env observations ``obs [..., *obs_shape]`` (an array or any
    array-like: a list, a NumPy array; `observations`), the rule behind ``TrainResult.act``
    and ``StoredPolicy.act``: ``policy`` (a jitted `Policy`) at ``state`` (that seed's).
    Stochastic actions (``deterministic=False``) need a ``key``. A recurrent policy returns
    ``(action, memory)``: pass the memory back with the next observation of the same episodes
    (None starts them, for ``[N, *obs_shape]`` observations)."""
    obs = observations(obs, obs_shape)
    if key is None:
        if not deterministic:
            raise ValueError("act(deterministic=False) needs a PRNG key")
        key = _unused_key(seed)  # the deterministic policy reads none
    if not policy.recurrent:
        return policy.step(state, (), obs, key, deterministic)[1]
    if memory is None:
        memory = policy.initial(obs.shape[0])
    memory, action = policy.step(state, memory, obs, key, deterministic)
    return action, memory


@functools.lru_cache(maxsize=64)
def _unused_key(seed: int) -> jax.Array:
    """A PRNG key made once per seed for calls that read none (a key costs a dispatch)."""
    return jax.random.key(seed)


def observations(obs, shape: tuple | None = None):
    """``obs`` as an array the jitted policy takes (a JAX array as it is, an array-like such as
    a list as a NumPy array); a one-line ``ValueError`` for one that is not an array of numbers
    or, when the env's observation ``shape`` is given, whose trailing dimensions are not
    ``shape``."""
    try:
        array = obs if isinstance(obs, jax.Array) else np.asarray(obs)
    except (TypeError, ValueError):  # ragged lists
        raise ValueError(f"obs must be an array of numbers, got {type(obs).__name__}") from None
    if array.dtype.kind not in "biuf":
        raise ValueError(f"obs must be an array of numbers, got {type(obs).__name__} of "
                         f"{array.dtype}")
    if shape is not None and tuple(array.shape[array.ndim - len(shape):]) != tuple(shape):
        raise ValueError(f"obs must be [..., {', '.join(map(str, shape))}] (the env's "
                         f"observation shape), got shape {list(array.shape)}")
    return array


def policy_obs_size(asymmetric_critic: bool, env) -> int:
    """How many leading observation entries the policy sees: all (0) unless the config asks
    for an asymmetric critic, then the env's ``policy_obs_size`` (`ConfigError` for an env
    without a privileged part). The critic (or value net) sees every entry."""
    if not asymmetric_critic:
        return 0
    size = wrapped_attr(env, "policy_obs_size", None)
    if not size:
        raise ConfigError("asymmetric_critic=True needs an env whose observation has a "
                          "privileged part for the critic (e.g. playground:TASK with "
                          "env_kwargs critic_key=privileged_state); this one has none")
    return int(size)

"""Your own network: the whole actor-critic or Q-network from a Flax module of yours.

A torso (`jaxrl.parts.torsos`) replaces the layers under jaxrl's heads; a network replaces the heads
too. ``network="package.module:factory"`` (or a name given to `register_network`) in the config
of an algorithm whose network is an actor-critic trained as one tree (PPO, A2C) or a Q-network
(DQN, PQN):

* actor-critic: ``factory(action_space)`` returns a module ``obs [..., obs_dim] -> (out,
  value)``: ``out`` the logits ``[..., n]`` of a `Discrete(n)` space or the mean ``[..., d]`` of
  a `Box` one (actions in ``[-1, 1]``, as every jaxrl policy's), ``value`` ``[...]`` or
  ``[..., 1]``. jaxrl makes the distribution (`UserActorCritic`: a Box policy's
  state-independent log-std is its own parameter ``log_std``) and applies the env's action mask;
* Q-network: ``factory(num_actions)`` returns a module ``obs [..., obs_dim] -> Q [..., n]``.

The module's parameters are the network's (``params["params"]["body"]``): the seeds vmap over
them, checkpoints and the stored policy hold them, and `export_policy` exports the module. An
import path is what a resumed run, a reloaded policy or another process finds again; a
registered name only the process that registered it. VPG and TRPO, which fit the policy and
the value apart, recurrent policies, PopArt and an asymmetric critic need jaxrl's own network
and refuse ``network`` in one line.
"""

from __future__ import annotations

from collections.abc import Callable

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from envs.spaces import Discrete, Space
from jaxrl.config import ConfigError
from jaxrl.ops import Categorical, DiagGaussian, masked
from jaxrl.parts import user_factories

DEFAULT = "default"  # jaxrl's own network, from the config's hidden / torso / heads fields
#: networks registered in this process, by name (`register_network`)
NETWORKS: dict[str, Callable[..., nn.Module]] = {}


def register_network(name: str, factory: Callable[..., nn.Module]) -> None:
    """Make ``name`` a network (``network=name``); see the module docstring for what
    ``factory`` is called with and returns."""
    user_factories.register(name, factory, NETWORKS, "network", (DEFAULT,))


def is_own(network: str) -> bool:
    """Whether ``network`` names a user's network (not jaxrl's ``default``)."""
    return network != DEFAULT


def check_network(network: str) -> None:
    """One-line `ConfigError` unless ``network`` is ``default``, a registered name or an import
    path that resolves to a factory."""
    if not isinstance(network, str):
        raise ConfigError(f"network must be a name, got {type(network).__name__}")
    if network == DEFAULT or network in NETWORKS:
        return
    if ":" not in network:
        raise ConfigError(f"unknown network {network!r}; use 'default', a name given to "
                          f"jaxrl.parts.user_networks.register_network, or an import path "
                          f"package.module:factory")
    user_factories.find(network, NETWORKS, "network")


def _last_axis(x: jax.Array, size: int, what: str, network: str) -> jax.Array:
    if x.shape[-1:] != (size,):
        raise ConfigError(f"network {network!r}: its {what} has shape {tuple(x.shape)}; the last "
                          f"axis must be {size}")
    return x


class UserActorCritic(nn.Module):
    """``obs [..., obs_dim] -> (dist, value [...])`` from the user's module (module docstring);
    the same methods as `jaxrl.parts.actor_critic.ActorCritic`."""

    action_space: Space
    network: str
    init_log_std: float = 0.0
    action_mask: int = 0  # trailing entries of obs that mask the policy's classes (0: none)

    def setup(self):
        self.body = user_factories.made(self.network, NETWORKS, "network", self.action_space)
        if not isinstance(self.action_space, Discrete):
            dim = int(np.prod(self.action_space.shape))
            self.log_std = self.param("log_std", nn.initializers.constant(self.init_log_std),
                                      (dim,))

    def __call__(self, obs: jax.Array):
        out, value = self.body(obs)
        value = value[..., 0] if value.shape == (*obs.shape[:-1], 1) else value
        if value.shape != obs.shape[:-1]:
            raise ConfigError(f"network {self.network!r}: its value has shape "
                              f"{tuple(value.shape)}; it must be {tuple(obs.shape[:-1])} (or "
                              f"with a last axis of 1)")
        return self._dist(out, obs), value

    def _dist(self, out: jax.Array, obs: jax.Array):
        if isinstance(self.action_space, Discrete):
            dist = Categorical(logits=_last_axis(out, self.action_space.n, "policy output",
                                                 self.network))
            return masked(dist, obs[..., -self.action_mask:]) if self.action_mask else dist
        mean = _last_axis(out, self.log_std.shape[0], "policy output", self.network)
        return DiagGaussian(mean=mean, log_std=jnp.broadcast_to(self.log_std, mean.shape))

    def value(self, obs: jax.Array) -> jax.Array:
        return self(obs)[1]

    def dist(self, obs: jax.Array):
        return self(obs)[0]


class UserQNetwork(nn.Module):
    """``obs [..., obs_dim] -> Q [..., num_actions]`` from the user's module."""

    num_actions: int
    network: str

    def setup(self):
        self.body = user_factories.made(self.network, NETWORKS, "network", self.num_actions)

    def __call__(self, obs: jax.Array) -> jax.Array:
        return _last_axis(self.body(obs), self.num_actions, "Q-values", self.network)

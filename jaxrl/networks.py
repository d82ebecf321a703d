"""Networks whose input and output heads are chosen from the env's spaces (reading 004).

* intake: observations of a `Box` space are flattened to ``[..., obs_dim]``;
* policy head: `Discrete(n)` -> `Categorical` logits; `Box` -> `DiagGaussian` with a
  state-independent log-std (on-policy methods);
* value head: a scalar.

Actions of a `Box` space live in ``[-1, 1]`` inside the agent; `to_env_action` rescales to the
env's bounds (after clipping), so every algorithm sees the same normalized action range.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from envs.spaces import Box, Discrete, Space
from jaxrl.ops import Categorical, DiagGaussian, TanhGaussian
from jaxrl.ops.init import orthogonal

ACTIVATIONS: dict[str, Callable] = {"tanh": jnp.tanh, "relu": nn.relu, "elu": nn.elu, "silu": nn.silu}


def _dense(features: int, gain: float) -> nn.Dense:
    return nn.Dense(features, kernel_init=orthogonal(gain),
                    bias_init=nn.initializers.zeros)


def _hidden_layers(x: jax.Array, hidden: Sequence[int], activation: str) -> jax.Array:
    """Dense + activation per width (called inside a compact module, which names the layers)."""
    act = ACTIVATIONS[activation]
    for width in hidden:
        x = act(_dense(width, np.sqrt(2.0))(x))
    return x


class MLP(nn.Module):
    """``[..., in] -> [..., out]``: hidden layers with ``activation``, orthogonal init."""

    hidden: Sequence[int]
    out: int
    activation: str = "tanh"
    out_gain: float = 1.0

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        return _dense(self.out, self.out_gain)(_hidden_layers(x, self.hidden, self.activation))


class Torso(nn.Module):
    """``[..., in] -> [..., hidden[-1]]``: the hidden layers of an MLP, without an output layer."""

    hidden: Sequence[int]
    activation: str = "tanh"

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        return _hidden_layers(x, self.hidden, self.activation)


class PolicyHead(nn.Module):
    """An MLP producing a distribution over the action space's (normalized) actions."""

    action_space: Space
    hidden: Sequence[int]
    activation: str = "tanh"
    init_log_std: float = 0.0

    @nn.compact
    def __call__(self, obs: jax.Array):
        if isinstance(self.action_space, Discrete):
            logits = MLP(self.hidden, self.action_space.n, self.activation, 0.01)(obs)
            return Categorical(logits=logits)
        dim = int(np.prod(self.action_space.shape))
        mean = MLP(self.hidden, dim, self.activation, 0.01)(obs)
        log_std = self.param("log_std", nn.initializers.constant(self.init_log_std), (dim,))
        return DiagGaussian(mean=mean, log_std=jnp.broadcast_to(log_std, mean.shape))


class ActorCritic(nn.Module):
    """Policy and value MLPs. ``obs [..., obs_dim] -> (dist, value [...])``.

    ``shared=False`` (default): two separate MLPs, so the policy and value losses can be
    optimized apart (VPG, TRPO). ``shared=True``: one torso of ``hidden`` layers with a linear
    policy head and a linear value head on top (A2C/PPO's Atari-style network). Either way the
    policy's parameters live under ``params["params"]["policy"]`` and the value head's under
    ``params["params"]["value_net"]`` (the shared torso under ``["torso"]``).
    """

    action_space: Space
    hidden: Sequence[int] = (64, 64)
    activation: str = "tanh"
    init_log_std: float = 0.0
    shared: bool = False

    def setup(self):
        head_hidden = () if self.shared else self.hidden
        if self.shared:
            self.torso = Torso(self.hidden, self.activation)
        self.policy = PolicyHead(self.action_space, head_hidden, self.activation, self.init_log_std)
        self.value_net = MLP(head_hidden, 1, self.activation, 1.0)

    def _features(self, obs: jax.Array) -> jax.Array:
        return self.torso(obs) if self.shared else obs

    def __call__(self, obs: jax.Array):
        x = self._features(obs)
        return self.policy(x), self.value_net(x)[..., 0]

    def value(self, obs: jax.Array) -> jax.Array:
        return self.value_net(self._features(obs))[..., 0]

    def dist(self, obs: jax.Array):
        return self.policy(self._features(obs))


def to_env_action(action_space: Space, action: jax.Array) -> jax.Array:
    """Map an agent action to the env: discrete as is; box from ``[-1, 1]`` (clipped) to bounds."""
    if isinstance(action_space, Discrete):
        return action.astype(action_space.dtype)
    if not isinstance(action_space, Box):
        raise TypeError(f"unsupported action space {action_space!r}")
    a = jnp.clip(action, -1.0, 1.0)
    if not action_space.bounded:
        return a
    low, high = jnp.asarray(action_space.low), jnp.asarray(action_space.high)
    return low + (a + 1.0) * 0.5 * (high - low)


def flat_obs_dim(obs_space: Space) -> int:
    if isinstance(obs_space, Discrete):
        raise TypeError("discrete observation spaces must be one-hot encoded by the env adapter")
    return int(np.prod(obs_space.shape))


# -- off-policy networks ----------------------------------------------------------------------
class QNetwork(nn.Module):
    """``obs [..., obs_dim] -> Q [..., n]`` for ``n`` discrete actions.

    ``dueling=True`` (Wang et al. 2016): a shared torso, then ``Q = V + A - mean_a A``."""

    num_actions: int
    hidden: Sequence[int] = (64, 64)
    activation: str = "relu"
    dueling: bool = False

    @nn.compact
    def __call__(self, obs: jax.Array) -> jax.Array:
        if not self.dueling:
            return MLP(self.hidden, self.num_actions, self.activation)(obs)
        x = Torso(self.hidden, self.activation)(obs)
        value = _dense(1, 1.0)(x)
        advantage = _dense(self.num_actions, 1.0)(x)
        return value + advantage - advantage.mean(axis=-1, keepdims=True)


class DeterministicActor(nn.Module):
    """``obs -> action [..., d]`` in ``(-1, 1)`` (tanh), for DDPG and TD3."""

    action_dim: int
    hidden: Sequence[int] = (256, 256)
    activation: str = "relu"

    @nn.compact
    def __call__(self, obs: jax.Array) -> jax.Array:
        return jnp.tanh(MLP(self.hidden, self.action_dim, self.activation)(obs))


class SquashedGaussianActor(nn.Module):
    """``obs -> TanhGaussian`` with a state-dependent log-std clipped to ``[-5, 2]`` (SAC)."""

    action_dim: int
    hidden: Sequence[int] = (256, 256)
    activation: str = "relu"

    @nn.compact
    def __call__(self, obs: jax.Array) -> TanhGaussian:
        out = MLP(self.hidden, 2 * self.action_dim, self.activation)(obs)
        mean, log_std = jnp.split(out, 2, axis=-1)
        return TanhGaussian(mean, jnp.clip(log_std, -5.0, 2.0))


class Critic(nn.Module):
    """``(obs [..., obs_dim], action [..., d]) -> Q [...]``."""

    hidden: Sequence[int] = (256, 256)
    activation: str = "relu"

    @nn.compact
    def __call__(self, obs: jax.Array, action: jax.Array) -> jax.Array:
        x = jnp.concatenate([obs, action], axis=-1)
        return MLP(self.hidden, 1, self.activation)(x)[..., 0]

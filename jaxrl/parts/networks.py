"""Networks whose input and output heads are chosen from the env's spaces (reading 004).

* intake: observations of a `Box` space are flattened to ``[..., obs_dim]``; a *torso*
  (`jaxrl.parts.torsos`: the MLP's hidden layers, a conv net, or the user's own module) reads them;
* policy head: `Discrete(n)` -> `Categorical` logits; `Box` -> `DiagGaussian` with a
  state-independent log-std (on-policy methods);
* value head: a scalar; Q heads: one value per action, or a distribution per action.

Actions of a `Box` space live in ``[-1, 1]`` inside the agent; `to_env_action` rescales to the
env's bounds (after clipping), so every algorithm sees the same normalized action range.
"""

from __future__ import annotations

from collections.abc import Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from envs.spaces import Box, Discrete, Space
from jaxrl.ops import Categorical, DiagGaussian, TanhGaussian, masked
from jaxrl.parts.torsos import ACTIVATIONS, Torso, dense, trunk


class MLP(nn.Module):
    """``[..., in] -> [..., out]``: a torso (hidden layers with ``activation``, or a conv torso)
    and a linear output layer, orthogonal init."""

    hidden: Sequence[int]
    out: int
    activation: str = "tanh"
    out_gain: float = 1.0
    torso: str = "mlp"
    layer_norm: bool = False

    @nn.compact
    def __call__(self, x: jax.Array) -> jax.Array:
        x = trunk(x, self.torso, self.hidden, self.activation, self.layer_norm)
        return dense(self.out, self.out_gain)(x)


class PolicyHead(nn.Module):
    """An MLP producing a distribution over the action space's (normalized) actions."""

    action_space: Space
    hidden: Sequence[int]
    activation: str = "tanh"
    init_log_std: float = 0.0
    torso: str = "mlp"

    @nn.compact
    def __call__(self, obs: jax.Array):
        if isinstance(self.action_space, Discrete):
            logits = MLP(self.hidden, self.action_space.n, self.activation, 0.01, self.torso)(obs)
            return Categorical(logits=logits)
        dim = int(np.prod(self.action_space.shape))
        mean = MLP(self.hidden, dim, self.activation, 0.01, self.torso)(obs)
        log_std = self.param("log_std", nn.initializers.constant(self.init_log_std), (dim,))
        return DiagGaussian(mean=mean, log_std=jnp.broadcast_to(log_std, mean.shape))


class ActorCritic(nn.Module):
    """Policy and value networks. ``obs [..., obs_dim] -> (dist, value [...])``.

    ``shared=False`` (default): two separate networks (each its own torso), so the policy and
    value losses can be optimized apart (VPG, TRPO). ``shared=True``: one torso with a policy
    head and a value head on top, linear (A2C/PPO's Atari-style network) or each an MLP of
    ``head_hidden`` layers. The torso is
    the MLP's ``hidden`` layers, or a conv torso (``torso``). Either way the policy's parameters
    live under ``params["params"]["policy"]`` and the value head's under
    ``params["params"]["value_net"]`` (the shared torso under ``["torso"]``).

    ``policy_obs > 0`` (an asymmetric critic, unshared nets): the policy sees the first
    ``policy_obs`` entries of ``obs``, the value net all (`envs.playground`'s ``critic_key``).
    ``action_mask > 0``: the last ``action_mask`` entries of ``obs`` say which actions are
    allowed (1) now; the others get no probability (`envs.jumanji`'s masks).
    """

    action_space: Space
    hidden: Sequence[int] = (64, 64)
    activation: str = "tanh"
    init_log_std: float = 0.0
    shared: bool = False
    torso_kind: str = "mlp"  # see `TORSOS`
    policy_obs: int = 0  # entries of obs the policy sees (0: all)
    action_mask: int = 0  # trailing entries of obs that mask the policy's classes (0: none)
    head_hidden: Sequence[int] = ()  # shared: each head's hidden layers on the torso

    def setup(self):
        head_hidden, head_torso = ((tuple(self.head_hidden), "mlp") if self.shared
                                   else (self.hidden, self.torso_kind))
        if self.shared:
            self.torso = Torso(self.hidden, self.activation, self.torso_kind)
        self.policy = PolicyHead(self.action_space, head_hidden, self.activation,
                                 self.init_log_std, head_torso)
        self.value_net = MLP(head_hidden, 1, self.activation, 1.0, head_torso)

    def _features(self, obs: jax.Array) -> jax.Array:
        return self.torso(obs) if self.shared else obs

    def _policy(self, x: jax.Array, obs: jax.Array):
        dist = self.policy(policy_part(x, self.policy_obs))
        return masked(dist, obs[..., -self.action_mask:]) if self.action_mask else dist

    def __call__(self, obs: jax.Array):
        x = self._features(obs)
        return self._policy(x, obs), self.value_net(x)[..., 0]

    def value(self, obs: jax.Array) -> jax.Array:
        return self.value_net(self._features(obs))[..., 0]

    def dist(self, obs: jax.Array):
        return self._policy(self._features(obs), obs)


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


def from_env_action(action_space: Space, action: jax.Array) -> jax.Array:
    """The agent action of an env action (`to_env_action`'s inverse on the env's bounds):
    discrete as int32; box bounds mapped to ``[-1, 1]`` (unbounded boxes as is)."""
    if isinstance(action_space, Discrete):
        return jnp.asarray(action).astype(jnp.int32)
    if not isinstance(action_space, Box):
        raise TypeError(f"unsupported action space {action_space!r}")
    a = jnp.asarray(action, jnp.float32)
    if not action_space.bounded:
        return a
    low, high = jnp.asarray(action_space.low), jnp.asarray(action_space.high)
    return jnp.clip(2.0 * (a - low) / (high - low) - 1.0, -1.0, 1.0)


# -- off-policy networks ----------------------------------------------------------------------
class QNetwork(nn.Module):
    """``obs [..., obs_dim] -> Q [..., n]`` for ``n`` discrete actions.

    ``dueling=True`` (Wang et al. 2016): a shared torso, then ``Q = V + A - mean_a A``.
    ``layer_norm=True``: a LayerNorm before every activation of the torso (PQN's network)."""

    num_actions: int
    hidden: Sequence[int] = (64, 64)
    activation: str = "relu"
    dueling: bool = False
    torso: str = "mlp"
    layer_norm: bool = False

    @nn.compact
    def __call__(self, obs: jax.Array) -> jax.Array:
        if not self.dueling:
            return MLP(self.hidden, self.num_actions, self.activation, 1.0, self.torso,
                       self.layer_norm)(obs)
        x = Torso(self.hidden, self.activation, self.torso, self.layer_norm)(obs)
        return _dueling(dense(1, 1.0)(x), dense(self.num_actions, 1.0)(x), axis=-1)


def _dueling(value: jax.Array, advantage: jax.Array, axis: int) -> jax.Array:
    """``V + A - mean A`` over the action ``axis`` (``value`` of size 1 there)."""
    return value + advantage - advantage.mean(axis=axis, keepdims=True)


class DistributionalQNetwork(nn.Module):
    """``obs [..., obs_dim] -> [..., n, k]``: ``k`` outputs per discrete action, the logits of a
    categorical return distribution (C51) or the quantiles of one (QR-DQN).

    ``dueling=True``: a shared torso, then a value stream ``[..., 1, k]`` and an advantage
    stream ``[..., n, k]`` combined per output as ``V + A - mean_a A`` (Rainbow's head)."""

    num_actions: int
    num_outputs: int
    hidden: Sequence[int] = (64, 64)
    activation: str = "relu"
    dueling: bool = False
    torso: str = "mlp"

    @nn.compact
    def __call__(self, obs: jax.Array) -> jax.Array:
        n, k = self.num_actions, self.num_outputs
        split = lambda x, actions: x.reshape(*x.shape[:-1], actions, k)
        if not self.dueling:
            return split(MLP(self.hidden, n * k, self.activation, 1.0, self.torso)(obs), n)
        x = Torso(self.hidden, self.activation, self.torso)(obs)
        return _dueling(split(dense(k, 1.0)(x), 1), split(dense(n * k, 1.0)(x), n), axis=-2)


class ImplicitQuantileNetwork(nn.Module):
    """``(obs [B, obs_dim], taus [B, N]) -> [B, n, N]``: for each of ``n`` discrete actions the
    return's quantile at each fraction ``tau`` (IQN, Dabney, Ostrovski, Silver & Munos 2018)::

        psi    = torso(obs)                                      [B, d]
        phi(t) = ReLU(W [cos(pi i t)]_{i < embedding_dim} + b)   [B, N, d]
        Z      = f(psi * phi)                                     [B, N, n] -> [B, n, N]

    ``f`` is one hidden layer of width ``d`` (the torso's activation) and the linear output
    (``dueling``: ``V + A - mean_a A`` per fraction); ``d`` is the torso's feature width (the
    last of ``hidden``, or a conv torso's dense width)."""

    num_actions: int
    hidden: Sequence[int] = (64, 64)
    activation: str = "relu"
    dueling: bool = False
    torso: str = "mlp"
    embedding_dim: int = 64

    @nn.compact
    def __call__(self, obs: jax.Array, taus: jax.Array) -> jax.Array:
        psi = Torso(self.hidden, self.activation, self.torso)(obs)
        width = psi.shape[-1]
        frequencies = jnp.arange(self.embedding_dim, dtype=psi.dtype)
        cosines = jnp.cos(jnp.pi * frequencies * taus[..., None].astype(psi.dtype))
        phi = nn.relu(dense(width, np.sqrt(2.0))(cosines))
        x = ACTIVATIONS[self.activation](dense(width, np.sqrt(2.0))(psi[..., None, :] * phi))
        n = self.num_actions
        out = (_dueling(dense(1, 1.0)(x), dense(n, 1.0)(x), axis=-1) if self.dueling
               else dense(n, 1.0)(x))
        return jnp.swapaxes(out, -1, -2)


class PolicyAndQ(nn.Module):
    """``obs [..., obs_dim] -> (logits [..., n], Q [..., n])`` for ``n`` discrete actions
    (ACER): one torso with a linear policy head and a linear Q head (``shared``), or two
    separate networks."""

    num_actions: int
    hidden: Sequence[int] = (64, 64)
    activation: str = "relu"
    torso: str = "mlp"
    shared: bool = True

    @nn.compact
    def __call__(self, obs: jax.Array) -> tuple[jax.Array, jax.Array]:
        if not self.shared:
            return (MLP(self.hidden, self.num_actions, self.activation, 0.01, self.torso)(obs),
                    MLP(self.hidden, self.num_actions, self.activation, 1.0, self.torso)(obs))
        x = Torso(self.hidden, self.activation, self.torso)(obs)
        return dense(self.num_actions, 0.01)(x), dense(self.num_actions, 1.0)(x)


def policy_part(obs: jax.Array, size: int) -> jax.Array:
    """The first ``size`` entries of ``obs [..., obs_dim]``, the policy's own part beside an
    asymmetric critic's privileged rest; all of ``obs`` when ``size`` is 0."""
    return obs[..., :size] if size else obs


class DeterministicActor(nn.Module):
    """``obs -> action [..., d]`` in ``(-1, 1)`` (tanh), for DDPG and TD3; it sees the first
    ``policy_obs`` entries of ``obs`` (0: all; an asymmetric critic sees the rest too)."""

    action_dim: int
    hidden: Sequence[int] = (256, 256)
    activation: str = "relu"
    torso: str = "mlp"
    policy_obs: int = 0

    @nn.compact
    def __call__(self, obs: jax.Array) -> jax.Array:
        mlp = MLP(self.hidden, self.action_dim, self.activation, 1.0, self.torso)
        return jnp.tanh(mlp(policy_part(obs, self.policy_obs)))


class SquashedGaussianActor(nn.Module):
    """``obs -> TanhGaussian`` with a state-dependent log-std clipped to ``[-5, 2]`` (SAC); it
    sees the first ``policy_obs`` entries of ``obs`` (0: all)."""

    action_dim: int
    hidden: Sequence[int] = (256, 256)
    activation: str = "relu"
    torso: str = "mlp"
    policy_obs: int = 0

    @nn.compact
    def __call__(self, obs: jax.Array) -> TanhGaussian:
        out = MLP(self.hidden, 2 * self.action_dim, self.activation, 1.0,
                  self.torso)(policy_part(obs, self.policy_obs))
        mean, log_std = jnp.split(out, 2, axis=-1)
        return TanhGaussian(mean, jnp.clip(log_std, -5.0, 2.0))


class Critic(nn.Module):
    """``(obs [..., obs_dim], action [..., d]) -> Q [...]``. With a conv torso the action joins
    the torso's features, and the ``hidden`` layers mix them."""

    hidden: Sequence[int] = (256, 256)
    activation: str = "relu"
    torso: str = "mlp"

    @nn.compact
    def __call__(self, obs: jax.Array, action: jax.Array) -> jax.Array:
        if self.torso not in ("mlp", "auto"):  # a conv torso or the user's: its features
            obs = trunk(obs, self.torso, (), self.activation)
        x = jnp.concatenate([obs, action], axis=-1)
        return MLP(self.hidden, 1, self.activation)(x)[..., 0]

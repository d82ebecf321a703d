"""Actor-critics: a policy and a value (or Q) network, as the on-policy methods train them
(`ActorCritic`: ``obs -> (dist, value)``) and as DDPG, TD3 and SAC do (`DeterministicActor`,
`SquashedGaussianActor`, `Critic`). Each policy may see only its own part of the observation
beside an asymmetric critic's privileged rest (`policy_part`).

Actions live in ``[-1, 1]`` inside the agent (`jaxrl.parts.actions` maps them to the env's
bounds).
"""

from __future__ import annotations

from collections.abc import Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp

from envs.spaces import Space
from jaxrl.ops import TanhGaussian, masked
from jaxrl.parts.heads import MLP, PolicyHead
from jaxrl.parts.torsos import Torso, trunk


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
    torso_kind: str = "mlp"  # see `jaxrl.parts.torsos.TORSOS`
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

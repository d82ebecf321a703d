"""Q-networks: ``obs -> Q`` per discrete action (`QNetwork`, dueling or not), a return
distribution per action (`DistributionalQNetwork`: C51's logits, QR-DQN's quantiles), the
quantiles at sampled fractions (`ImplicitQuantileNetwork`, IQN), and ACER's policy beside its Q
head (`PolicyAndQ`).
"""

from __future__ import annotations

from collections.abc import Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from jaxrl.parts.heads import MLP
from jaxrl.parts.torsos import ACTIVATIONS, Torso, dense


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

"""The layers every network of jaxrl ends in: `MLP` (a torso and a linear output layer) and
`PolicyHead`, the distribution over the action space's actions, chosen from the space (reading
004): `Discrete(n)` -> `Categorical` logits; `Box` -> `DiagGaussian` with a state-independent
log-std (on-policy methods).

Observations of a `Box` space are flattened to ``[..., obs_dim]``; a *torso*
(`jaxrl.parts.torsos`: the MLP's hidden layers, a conv net, or the user's own module) reads
them. The networks built of these: the actor-critics (`jaxrl.parts.actor_critic`), the
Q-networks (`jaxrl.parts.q_networks`), the recurrent core's (`jaxrl.parts.recurrent`).
"""

from __future__ import annotations

from collections.abc import Sequence

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from envs.spaces import Discrete, Space
from jaxrl.ops import Categorical, DiagGaussian
from jaxrl.parts.torsos import dense, trunk


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

"""Action masks for the Q-learners (`jaxrl.algos.q_learner`, PQN): an env whose action space
has a ``mask_size`` (`envs.spaces.Discrete`, Jumanji's tasks) ends each flat observation with
which actions are allowed now; greedy actions, exploration and the next action of a bootstrap
target range over those only (the policy-gradient family masks its policy's logits instead:
`jaxrl.parts.actor_critic.ActorCritic`)."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from envs.spaces import Discrete


def masked(q: jax.Array, allowed: jax.Array | None) -> jax.Array:
    """``q [..., A]`` with the actions ``allowed [..., A]`` does not allow at ``-inf`` (so no
    argmax or max picks them); ``q`` itself without a mask (``None``)."""
    return q if allowed is None else jnp.where(allowed, q, -jnp.inf)


def allowed_actions(space, obs: jax.Array) -> jax.Array | None:
    """``[B, A]`` the actions a `Discrete` space's mask allows at flat ``obs [B, obs_dim]``
    (`envs.spaces.Discrete.allowed`); None when it has none."""
    return space.allowed(obs) if isinstance(space, Discrete) else None


def allowed_q(q: jax.Array, space, obs: jax.Array) -> jax.Array:
    """``q [B, A]`` at flat ``obs [B, obs_dim]``, the actions ``space``'s mask forbids at -inf."""
    return masked(q, allowed_actions(space, obs))

"""Temporally correlated exploration noise: an Ornstein-Uhlenbeck process, one per env and
action dimension, for the off-policy family's exploration (``action_noise="ou"`` in DDPG, TD3
and SAC).

The process is the OU diffusion ``dX = -theta X dt + sqrt(2 theta) dW``, whose stationary law
is ``N(0, 1)``, sampled exactly every ``dt``::

    x_{t+1} = rho x_t + sqrt(1 - rho^2) z_t,   z_t ~ N(0, 1),   rho = exp(-theta dt)

so every ``x_t`` is ``N(0, 1)`` and ``corr(x_t, x_{t+k}) = rho^k``: white noise at
``rho = 0``, a slow drift (a correlation time of ``1 / (theta dt)`` steps) as ``rho -> 1``.
A process starts, and restarts at every episode end, from a fresh stationary draw, so each
step's marginal is the same at any point of an episode and no episode inherits the last one's
push. The caller scales it: DDPG adds ``exploration_noise * x`` to its action (a stationary std
of ``exploration_noise``, as the white-noise option has); SAC uses ``x`` as the standard
normal draw of its reparameterized sample ``tanh(mean + std * x)``.

Convention, beside OpenAI baselines' and Stable-Baselines3's ``OrnsteinUhlenbeckActionNoise``
(``x += theta (mu - x) dt + sigma sqrt(dt) z``, started and reset at ``mu = 0``): the same
correlation (``1 - theta dt``, the first-order form of ``rho``) with their defaults ``theta =
0.15``, ``dt = 0.01``, but their stationary std is ``sigma sqrt(dt / (1 - (1 - theta dt)^2))``
(``1.83 sigma`` at those defaults) and their process starts from 0, growing to it over about
``1 / (theta dt)`` steps.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

__all__ = ["ou_correlation", "ou_init", "ou_reset", "ou_step"]


def ou_correlation(theta: ArrayLike, dt: ArrayLike) -> jax.Array:
    """``[]`` the step-to-step correlation ``rho = exp(-theta dt)``."""
    return jnp.exp(-jnp.asarray(theta, jnp.float32) * jnp.asarray(dt, jnp.float32))


def ou_init(key: jax.Array, shape: tuple[int, ...]) -> jax.Array:
    """``shape`` float32: a stationary draw, ``N(0, 1)`` (e.g. ``[N envs, action_dim]``)."""
    return jax.random.normal(key, shape, jnp.float32)


def ou_step(x: jax.Array, key: jax.Array, rho: ArrayLike) -> jax.Array:
    """``x`` one step on: ``rho x + sqrt(1 - rho^2) z``; keeps ``N(0, 1)`` stationary."""
    rho = jnp.asarray(rho, x.dtype)
    return rho * x + jnp.sqrt(1.0 - rho * rho) * jax.random.normal(key, x.shape, x.dtype)


def ou_reset(x: jax.Array, key: jax.Array, done: jax.Array) -> jax.Array:
    """``x`` ``[N, ...]`` with the rows where ``done`` ``[N]`` (the episode just ended)
    replaced by fresh stationary draws."""
    fresh = jax.random.normal(key, x.shape, x.dtype)
    return jnp.where(done.reshape(done.shape + (1,) * (x.ndim - 1)), fresh, x)

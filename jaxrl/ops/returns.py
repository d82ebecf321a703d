"""Truncation-aware return and advantage estimators.

All rollout arrays are time-major: ``[T, B]`` where ``B`` stands for any (possibly empty)
trailing batch shape; every function here works along axis 0 only and broadcasts over the rest.

Episode-boundary conventions (shared by every function in this module):

- ``terminated[t]``: step ``t`` ended in an absorbing state; nothing is bootstrapped after it.
- ``truncated[t]``: step ``t`` was cut by a time limit; the target bootstraps from the value of
  the true final observation, ``next_values[t]``.
- Both may be set on the same step; ``terminated`` wins (no bootstrap).
- ``next_values[t] = V(s_{t+1})`` where ``s_{t+1}`` is the *true* next observation of step ``t``
  (the env's final observation on done steps). The last step of the rollout, ``T - 1``,
  bootstraps from ``next_values[T - 1]`` exactly as a truncated step does: the rollout end is a
  truncation of the recursion, never of the episode.

Flags may be bool or float arrays. ``gamma`` and ``lam`` may be Python floats or traced JAX
scalars (so a batch of configs can be vmapped); ``n`` in :func:`n_step_targets` is a static
Python int. Everything is pure and safe under ``jit`` and ``vmap``.
"""

from __future__ import annotations

from typing import NamedTuple

import chex
import jax
import jax.numpy as jnp
from jax.typing import ArrayLike

__all__ = [
    "discounted_returns",
    "gae",
    "lambda_returns",
    "n_step_targets",
    "retrace",
    "reverse_discounted_cumsum",
]


def _float_dtype(x: jax.Array) -> jnp.dtype:
    """The floating dtype to compute in: ``x``'s own if floating, else JAX's default float."""
    if jnp.issubdtype(x.dtype, jnp.floating):
        return x.dtype
    return jnp.zeros((), dtype=float).dtype


def _check_rollout(*arrays: jax.Array) -> None:
    """Every rollout array is ``[T, B]`` with the same shape and ``T >= 1``."""
    chex.assert_equal_shape(arrays)
    chex.assert_axis_dimension_gteq(arrays[0], 0, 1)


def _as_float(flag: ArrayLike, dtype: jnp.dtype) -> jax.Array:
    """A bool / float flag array as ``dtype`` 0.0 / 1.0 values."""
    return jnp.asarray(flag).astype(dtype)


def _boundary_masks(
    terminated: ArrayLike, truncated: ArrayLike, dtype: jnp.dtype
) -> tuple[jax.Array, jax.Array]:
    """Returns ``(not_terminated, continues)``, each ``[T, B]`` as ``dtype``.

    ``not_terminated[t] = 1 - terminated[t]`` (may bootstrap after step ``t``);
    ``continues[t] = 1`` iff step ``t + 1`` belongs to the same episode *and* is in the rollout,
    i.e. ``not (terminated[t] or truncated[t])`` and ``t < T - 1``.
    """
    term = _as_float(terminated, dtype)
    trunc = _as_float(truncated, dtype)
    done = jnp.maximum(term, trunc)
    continues = (1.0 - done).at[-1].set(0.0)
    return 1.0 - term, continues


class _Rollout(NamedTuple):
    """A rollout's shared inputs, checked and cast to one float dtype."""

    rewards: jax.Array    # [T, B]
    not_term: jax.Array   # [T, B] 1 - terminated[t]
    continues: jax.Array  # [T, B] 1 iff step t + 1 continues the episode inside the rollout
    gamma: jax.Array      # [] discount
    dtype: jnp.dtype


def _rollout(
    rewards: ArrayLike,
    terminated: ArrayLike,
    truncated: ArrayLike,
    gamma: ArrayLike,
    *per_step: ArrayLike,
) -> tuple[_Rollout, tuple[jax.Array, ...]]:
    """Checks every ``[T, B]`` array's shape and ``gamma``'s rank, and casts them to one dtype.

    Returns the rollout and the other ``per_step`` arrays (values, traces, ...) in order, each
    ``[T, B]`` in the rollout's dtype.
    """
    rewards = jnp.asarray(rewards)
    _check_rollout(rewards, jnp.asarray(terminated), jnp.asarray(truncated),
                   *(jnp.asarray(x) for x in per_step))
    chex.assert_rank(gamma, 0)
    dtype = _float_dtype(rewards)
    not_term, continues = _boundary_masks(terminated, truncated, dtype)
    rollout = _Rollout(rewards.astype(dtype), not_term, continues,
                       jnp.asarray(gamma, dtype=dtype), dtype)
    return rollout, tuple(jnp.asarray(x, dtype=dtype) for x in per_step)


def reverse_discounted_cumsum(x: ArrayLike, discounts: ArrayLike) -> jax.Array:
    """Backward recursion ``y[t] = x[t] + discounts[t] * y[t + 1]`` with ``y[T] = 0``.

    The one home of the backward scan used by every estimator in this module.

    Args:
        x: ``[T, B]`` per-step terms.
        discounts: ``[T, B]`` (or broadcastable to ``x``) per-step multipliers of the next ``y``;
            put zeros where the recursion must not look past step ``t``.

    Returns:
        ``y``: ``[T, B]``, same dtype as ``x``.
    """
    x = jnp.asarray(x)
    chex.assert_axis_dimension_gteq(x, 0, 1)
    discounts = jnp.broadcast_to(jnp.asarray(discounts, dtype=x.dtype), x.shape)

    def step(y_tp1: jax.Array, inputs: tuple[jax.Array, jax.Array]):
        x_t, discount_t = inputs
        y_t = x_t + discount_t * y_tp1
        return y_t, y_t

    _, y = jax.lax.scan(step, jnp.zeros_like(x[0]), (x, discounts), reverse=True)
    chex.assert_equal_shape([y, x])
    chex.assert_type(y, x.dtype)
    return y


def gae(
    rewards: ArrayLike,
    values: ArrayLike,
    next_values: ArrayLike,
    terminated: ArrayLike,
    truncated: ArrayLike,
    gamma: ArrayLike,
    lam: ArrayLike,
) -> jax.Array:
    """Generalized advantage estimation, aware of termination and truncation.

    ``delta[t] = r[t] + gamma * (1 - terminated[t]) * next_values[t] - values[t]``
    ``A[t] = delta[t] + gamma * lam * (1 - done[t]) * A[t + 1]``, ``done = terminated | truncated``,
    ``A[T] = 0`` (so the last step's advantage is its one-step TD error bootstrapped from
    ``next_values[T - 1]``).

    Args:
        rewards: ``[T, B]`` reward of step ``t``.
        values: ``[T, B]`` ``V(s_t)``.
        next_values: ``[T, B]`` ``V(s_{t+1})`` of the true next observation of step ``t``.
        terminated: ``[T, B]`` bool/float, step ``t`` ended in an absorbing state.
        truncated: ``[T, B]`` bool/float, step ``t`` was cut by a time limit.
        gamma: scalar discount (Python float or traced).
        lam: scalar GAE lambda (Python float or traced).

    Returns:
        Advantages ``[T, B]``. When ``next_values[t] == values[t + 1]`` within episodes,
        ``gae(...) + values == lambda_returns(...)``.
    """
    ro, (values, next_values) = _rollout(rewards, terminated, truncated, gamma, values,
                                         next_values)
    chex.assert_rank(lam, 0)
    lam = jnp.asarray(lam, dtype=ro.dtype)
    deltas = ro.rewards + ro.gamma * ro.not_term * next_values - values
    advantages = reverse_discounted_cumsum(deltas, ro.gamma * lam * ro.continues)
    chex.assert_equal_shape([advantages, ro.rewards])
    return advantages


def lambda_returns(
    rewards: ArrayLike,
    next_values: ArrayLike,
    terminated: ArrayLike,
    truncated: ArrayLike,
    gamma: ArrayLike,
    lam: ArrayLike,
) -> jax.Array:
    """TD(lambda) returns, aware of termination and truncation.

    ``G[t] = r[t] + gamma * (1 - terminated[t])
    * ((1 - lam) * next_values[t] + lam * (next_values[t] if done[t] or t == T-1 else G[t+1]))``

    Computed as ``G[t] = x[t] + gamma * lam * c[t] * G[t + 1]`` with
    ``x[t] = r[t] + gamma * (1 - terminated[t]) * (1 - lam * c[t]) * next_values[t]`` and
    ``c[t] = 1`` iff step ``t + 1`` continues the episode inside the rollout.

    Args:
        rewards: ``[T, B]``.
        next_values: ``[T, B]`` ``V(s_{t+1})`` of the true next observation of step ``t``.
        terminated: ``[T, B]`` bool/float.
        truncated: ``[T, B]`` bool/float.
        gamma: scalar discount.
        lam: scalar lambda; ``lam = 1`` gives Monte-Carlo returns bootstrapped only at
            truncations and at the rollout end, ``lam = 0`` gives one-step TD targets.

    Returns:
        ``[T, B]`` lambda-returns (regression targets for ``V(s_t)``).
    """
    ro, (next_values,) = _rollout(rewards, terminated, truncated, gamma, next_values)
    chex.assert_rank(lam, 0)
    lam = jnp.asarray(lam, dtype=ro.dtype)
    x = ro.rewards + ro.gamma * ro.not_term * (1.0 - lam * ro.continues) * next_values
    returns = reverse_discounted_cumsum(x, ro.gamma * lam * ro.continues)
    chex.assert_equal_shape([returns, ro.rewards])
    return returns


def discounted_returns(
    rewards: ArrayLike,
    terminated: ArrayLike,
    truncated: ArrayLike,
    gamma: ArrayLike,
    bootstrap_values: ArrayLike | None = None,
) -> jax.Array:
    """Discounted reward-to-go that restarts at episode boundaries.

    ``G[t] = r[t] + gamma * G[t + 1]`` inside an episode; at terminated steps ``G[t] = r[t]``;
    at truncated steps and at the rollout's last step ``G[t] = r[t] + gamma *
    bootstrap_values[t]`` (or ``r[t]`` when ``bootstrap_values`` is None). Equal to
    :func:`lambda_returns` with ``lam = 1``.

    Args:
        rewards: ``[T, B]``.
        terminated: ``[T, B]`` bool/float.
        truncated: ``[T, B]`` bool/float.
        gamma: scalar discount.
        bootstrap_values: optional ``[T, B]`` ``V`` of the true next observation of step ``t``;
            only read at truncated steps and at ``t = T - 1``. None means 0.

    Returns:
        ``[T, B]`` discounted returns.
    """
    rewards = jnp.asarray(rewards)
    if bootstrap_values is None:
        bootstrap_values = jnp.zeros_like(rewards, dtype=_float_dtype(rewards))
    # lambda_returns checks the shapes: every array [T, B], gamma a scalar
    return lambda_returns(rewards, bootstrap_values, terminated, truncated, gamma, 1.0)


def retrace(
    rewards: ArrayLike,
    q_taken: ArrayLike,
    next_values: ArrayLike,
    terminated: ArrayLike,
    truncated: ArrayLike,
    traces: ArrayLike,
    gamma: ArrayLike,
) -> jax.Array:
    """Retrace targets ``Q_ret`` (Munos et al., 2016; ACER's ``Q^ret``, Wang et al., 2017) for
    the actions a behaviour policy took, aware of termination and truncation.

    ``Q_ret[t] = r[t] + gamma * (1 - terminated[t]) * (next_values[t]
    + c[t + 1] * (Q_ret[t + 1] - q_taken[t + 1]))`` while step ``t + 1`` continues the episode
    inside the rollout; at a done step and at ``t = T - 1`` the bracket is ``next_values[t]``
    alone (a truncation bootstraps from the value of the true final observation).

    Computed as ``Q_ret - q_taken = reverse_discounted_cumsum(delta, gamma * continues[t] *
    c[t + 1])`` with the TD error ``delta[t] = r[t] + gamma * (1 - terminated[t]) *
    next_values[t] - q_taken[t]``. ``traces = 0`` gives one-step targets ``r + gamma V(s')``;
    ``traces = 1`` with ``q_taken[t + 1] = next_values[t]`` gives `lambda_returns` at
    ``lam = 1``.

    Args:
        rewards: ``[T, B]``.
        q_taken: ``[T, B]`` ``Q(s_t, a_t)`` of the action taken.
        next_values: ``[T, B]`` ``V(s_{t+1}) = E_pi Q(s_{t+1}, .)`` of the true next
            observation of step ``t``.
        terminated: ``[T, B]`` bool/float.
        truncated: ``[T, B]`` bool/float.
        traces: ``[T, B]`` ``c[t] = lam * min(c_bar, pi(a_t | s_t) / mu(a_t | s_t))``, the
            truncated importance weight of step ``t`` (``c[0]`` is never read).
        gamma: scalar discount.

    Returns:
        ``[T, B]`` ``Q_ret`` (regression targets for ``Q(s_t, a_t)``; no gradient is stopped
        here).
    """
    ro, (q_taken, next_values, traces) = _rollout(rewards, terminated, truncated, gamma,
                                                  q_taken, next_values, traces)
    next_traces = jnp.concatenate([traces[1:], jnp.zeros_like(traces[:1])])  # c[t + 1]
    deltas = ro.rewards + ro.gamma * ro.not_term * next_values - q_taken
    targets = q_taken + reverse_discounted_cumsum(deltas,
                                                  ro.gamma * ro.continues * next_traces)
    chex.assert_equal_shape([targets, ro.rewards])
    return targets


def _pad_time(x: jax.Array, num_steps: int) -> jax.Array:
    """``x`` with ``num_steps`` zero rows appended along axis 0."""
    return jnp.concatenate([x, jnp.zeros((num_steps, *x.shape[1:]), x.dtype)], axis=0)


def n_step_targets(
    rewards: ArrayLike,
    next_values: ArrayLike,
    terminated: ArrayLike,
    truncated: ArrayLike,
    gamma: ArrayLike,
    n: int,
) -> tuple[jax.Array, jax.Array]:
    """n-step bootstrapped targets that stop at episode boundaries and at the rollout end.

    For each ``t`` let ``m = min(n, (first done step s >= t) - t + 1, T - t)``. Then

    ``targets[t] = sum_{k<m} gamma^k r[t+k] + discounts[t] * next_values[t+m-1]``,
    ``discounts[t] = gamma^m * (1 - terminated[t+m-1])``.

    So a truncated step bootstraps from the value of its true final observation and a terminated
    step does not bootstrap. ``discounts`` is what a replay-based learner multiplies its own
    bootstrap value with.

    Args:
        rewards: ``[T, B]``.
        next_values: ``[T, B]`` ``V(s_{t+1})`` of the true next observation of step ``t``.
        terminated: ``[T, B]`` bool/float.
        truncated: ``[T, B]`` bool/float.
        gamma: scalar discount (Python float or traced).
        n: static Python int >= 1, the maximum number of reward steps.

    Returns:
        ``(targets, discounts)``, both ``[T, B]``.
    """
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a static Python int >= 1, got {n!r}")
    ro, (next_values,) = _rollout(rewards, terminated, truncated, gamma, next_values)
    rewards, not_term, continues, gamma, dtype = ro
    num_steps = min(n, rewards.shape[0])
    num_t = rewards.shape[0]
    padded = [_pad_time(x, num_steps) for x in (rewards, next_values, not_term, continues)]

    def add_step(k: jax.Array, carry: tuple[jax.Array, ...]) -> tuple[jax.Array, ...]:
        # alive[t] = 1 where step t + k is inside the window of t; gamma_k = gamma ** k.
        targets, discounts, alive, gamma_k = carry
        r_k, next_value_k, not_term_k, continues_k = (
            jax.lax.dynamic_slice_in_dim(x, k, num_t, axis=0) for x in padded
        )
        alive_next = jnp.where(k + 1 < num_steps, alive * continues_k, 0.0)
        bootstrap_discount = (alive - alive_next) * gamma_k * gamma * not_term_k
        targets = targets + alive * gamma_k * r_k + bootstrap_discount * next_value_k
        discounts = discounts + bootstrap_discount
        return targets, discounts, alive_next, gamma_k * gamma

    init = (
        jnp.zeros_like(rewards),
        jnp.zeros_like(rewards),
        jnp.ones_like(rewards),
        jnp.ones((), dtype),
    )
    targets, discounts, _, _ = jax.lax.fori_loop(0, num_steps, add_step, init)
    chex.assert_equal_shape([targets, discounts, rewards])
    return targets, discounts

"""n-step transitions for replay, correct across episode ends, from a sliding window.

The window (agent state) holds the last ``n`` one-step rows of ``N`` envs; a row is the one step
schema, `jaxrl.parts.transition.Transition` (what `jaxrl.parts.rollout.env_step` returns). What the window
emits is a different record, `NStepTransition`: the aggregate of up to ``n`` consecutive rows,
with a discounted reward sum and the ``discount`` of ``V(next_obs)`` in place of ``truncated``. After pushing row
``t`` it emits, for every env, the n-step transition that **starts** at row ``s = t - n + 1``:

- ``m = min(n, k + 1)`` where ``k >= 0`` is the offset of the first step ``s + k`` with
  ``terminated or truncated`` (``m = n`` if there is none in the window);
- ``reward = sum_{k<m} gamma^k r[s+k]``;
- ``terminated = terminated[s+m-1]``, ``discount = gamma^m * (1 - terminated[s+m-1])``;
- ``next_obs = next_obs[s+m-1]``, the *true* next observation (the final observation of the
  episode on a done step, never the reset observation).

So a terminated episode does not bootstrap, and a truncated one bootstraps from its final
observation with ``discount = gamma^m``. The learner's target is
``reward + discount * V(next_obs)``, matching `jaxrl.ops.n_step_targets`. With ``n = 1`` the
emitted item is exactly the one-step transition with ``discount = gamma * (1 - terminated)``.

    window = nstep.window_init(example_row, n)          # example_row: a Transition of N envs
    window, item, valid = nstep.push(window, row, gamma)
    buffer = jax.lax.cond(valid, lambda b: uniform.add(b, item, step), lambda b: b, buffer)

``valid`` is False for the first ``n - 1`` pushes (the window is not full yet). The last
``n - 1`` rows of a run are never emitted as starts; rollouts are not episode boundaries, so
the window simply continues across training iterations.

``n`` is a static Python int; ``gamma`` may be traced. Pure, jittable, vmappable.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
from flax import struct
from jax.typing import ArrayLike

from jaxrl.parts.transition import Transition

__all__ = ["NStepTransition", "NStepWindow", "emit", "push", "window_init"]


@struct.dataclass
class NStepTransition:
    """What the window emits for ``N`` envs (store it with a replay buffer's ``add``): the
    aggregate of the `Transition` rows ``s .. s + m - 1`` (see the module docstring).

    obs: ``[N, *obs_shape]`` at the start step. action: ``[N, *action_shape]`` at the start.
    reward: ``[N]`` discounted sum of the first ``m`` rewards.
    discount: ``[N]`` ``gamma^m * (1 - terminated)``, the multiplier of ``V(next_obs)``.
    terminated: ``[N]`` bool, the segment ended in an absorbing state.
    next_obs: ``[N, *obs_shape]`` true observation after the segment's last step.
    steps: ``[N]`` int32 ``m``, the rows aggregated (``1 <= m <= n``); ``next_obs`` follows
        row ``s + m - 1``.
    ended: ``[N]`` bool, row ``s + m - 1`` ended its episode (terminated or truncated): where
        hindsight relabelling (`jaxrl.parts.buffers.her`) stops looking ahead.
    """

    obs: jax.Array
    action: jax.Array
    reward: jax.Array
    discount: jax.Array
    terminated: jax.Array
    next_obs: jax.Array
    steps: jax.Array
    ended: jax.Array


@struct.dataclass
class NStepWindow:
    """The last ``n`` rows, oldest first: a `Transition` with leaves ``[n, N, ...]``;
    ``count`` ``[]`` int32 rows pushed so far, saturating at ``n``."""

    rows: Transition
    count: jax.Array


def window_init(example_row: Transition, n: int) -> NStepWindow:
    """An empty window for rows shaped like ``example_row`` (leaves ``[N, ...]``).

    Args:
        example_row: a `Transition` of ``N`` envs; only shapes and dtypes are read.
        n: static Python int >= 1, the number of reward steps.
    """
    if not isinstance(n, int) or n < 1:
        raise ValueError(f"n must be a static Python int >= 1, got {n!r}")

    def empty(leaf: ArrayLike) -> jax.Array:
        leaf = jnp.asarray(leaf)
        return jnp.zeros((n, *leaf.shape), leaf.dtype)

    rows = jax.tree.map(empty, example_row)
    return NStepWindow(rows=rows, count=jnp.zeros((), jnp.int32))


def _shift_in(rows: Transition, row: Transition) -> Transition:
    """Drop the oldest row and append ``row`` as the newest."""
    return jax.tree.map(
        lambda window, x: jnp.concatenate([window[1:], jnp.asarray(x, window.dtype)[None]]),
        rows,
        row,
    )


def _discount_powers(gamma: jax.Array, n: int) -> jax.Array:
    """``[n + 1]`` ``gamma^0 .. gamma^n`` by repeated multiplication (``gamma^1`` is exact)."""
    powers = [jnp.ones_like(gamma)]
    for _ in range(n):
        powers.append(powers[-1] * gamma)
    return jnp.stack(powers)


def _take_step(x: jax.Array, last: jax.Array) -> jax.Array:
    """``x[last[b], b, ...]`` for ``x`` ``[n, N, ...]`` and ``last`` ``[N]``."""
    idx = last.reshape((1, -1) + (1,) * (x.ndim - 2))
    return jnp.take_along_axis(x, idx, axis=0)[0]


def emit(rows: Transition, gamma: ArrayLike) -> NStepTransition:
    """The n-step transition starting at the oldest row of a full window ``[n, N, ...]``."""
    n = rows.reward.shape[0]
    dtype = rows.reward.dtype if jnp.issubdtype(rows.reward.dtype, jnp.floating) else jnp.float32
    gamma = jnp.asarray(gamma, dtype)
    powers = _discount_powers(gamma, n)  # [n + 1]
    done = rows.terminated | rows.truncated  # [n, N]
    # in_segment[k] = no done strictly before step k (step 0 always belongs to the segment).
    not_done_before = jnp.cumprod(1 - done.astype(jnp.int32), axis=0)
    in_segment = jnp.concatenate([jnp.ones_like(not_done_before[:1]), not_done_before[:-1]])
    num_steps = jnp.sum(in_segment, axis=0)  # [N] m
    last = num_steps - 1
    weights = in_segment.astype(dtype) * powers[:n, None]
    reward = jnp.sum(weights * rows.reward.astype(dtype), axis=0)
    terminated = _take_step(rows.terminated, last)
    discount = powers[num_steps] * (1 - terminated.astype(dtype))
    return NStepTransition(
        obs=rows.obs[0],
        action=rows.action[0],
        reward=reward,
        discount=discount,
        terminated=terminated,
        next_obs=_take_step(rows.next_obs, last),
        steps=num_steps.astype(jnp.int32),
        ended=_take_step(done, last),
    )


def push(
    window: NStepWindow, row: Transition, gamma: ArrayLike
) -> tuple[NStepWindow, NStepTransition, jax.Array]:
    """Push row ``t`` and emit the n-step transition starting at row ``t - n + 1``.

    Args:
        window: the window state.
        row: `Transition` of the step just taken, leaves ``[N, ...]``.
        gamma: scalar discount (Python float or traced).

    Returns:
        ``(window, item, valid)``: the new window, an `NStepTransition` with leaves
        ``[N, ...]``, and ``[]`` bool ``valid``: False until ``n`` rows have been pushed, and
        while it is False ``item`` is garbage and must not be stored.
    """
    n = window.rows.reward.shape[0]
    chex.assert_trees_all_equal_structs(row, window.rows)
    jax.tree.map(lambda rows, x: chex.assert_shape(x, rows.shape[1:]), window.rows, row)
    rows = _shift_in(window.rows, row)
    count = jnp.minimum(window.count + 1, n).astype(jnp.int32)
    return NStepWindow(rows=rows, count=count), emit(rows, gamma), count >= n

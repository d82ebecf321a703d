"""Proportional prioritized replay (Schaul et al., 2016) over a flat-array sum tree.

The state contains a `jaxrl.parts.buffers.uniform.ReplayState` (``state.replay``: storage,
wrap-around, ``added_at``, all exactly uniform replay's); on top, every slot ``i`` has a
priority ``p_i`` and is sampled with probability ``P(i) = p_i / sum_j p_j``.

    state = prioritized.init(example_item, capacity)
    state = prioritized.add(state, items, step)                 # new items get max_priority
    items, indices, weights = prioritized.sample(state, key, batch_size, beta)
    state = prioritized.update_priorities(state, indices, td_errors, alpha)

``init``, ``add``, ``sample``, ``capacity``, ``fill_fraction`` and ``staleness`` follow the
buffer protocol of `jaxrl.parts.buffers.uniform` (same signatures, same returns), so a learner uses
either module through one code path; only the priority updates are extra.

Sum tree layout: the number of leaves ``L`` is ``capacity`` rounded up to a power of two; the
tree is a float32 array ``[2 L]`` with the root at index 1, node ``k``'s children at ``2k`` and
``2k + 1``, and slot ``i``'s priority at leaf ``L + i`` (index 0 and the leaves of padding slots
``capacity .. L - 1`` stay 0). Invariant: every internal node equals the float32 sum of its two
children, so a full bottom-up rebuild from the leaves reproduces the tree bit for bit.

``alpha`` and ``beta`` are traced scalars (so a sweep over them is one more ``vmap`` axis);
``capacity`` and ``batch_size`` are static. Everything is pure, jittable and vmappable.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import chex
import jax
import jax.numpy as jnp
from flax import struct
from jax.typing import ArrayLike

from jaxrl.parts.buffers import uniform

__all__ = [
    "PrioritizedState",
    "add",
    "capacity",
    "fill_fraction",
    "init",
    "priorities",
    "priority_of",
    "sample",
    "set_priorities",
    "staleness",
    "update_priorities",
]


@struct.dataclass
class PrioritizedState:
    """A circular buffer with a sum tree of priorities.

    replay: the `jaxrl.parts.buffers.uniform.ReplayState` holding the items (data, position, size,
        added_at).
    tree: ``[2 L]`` float32 sum tree (``L`` = capacity rounded up to a power of two); the root
        ``tree[1]`` is the total priority, ``tree[L + i]`` the priority of slot ``i``.
    max_priority: ``[]`` float32, the largest priority ever set (starts at 1.0); new items get it.
    """

    replay: uniform.ReplayState
    tree: jax.Array
    max_priority: jax.Array


def capacity(state: PrioritizedState) -> int:
    """The static number of slots (see `uniform.capacity`)."""
    return uniform.capacity(state.replay)


def fill_fraction(state: PrioritizedState) -> jax.Array:
    """``[]`` float32 ``size / capacity`` (see `uniform.fill_fraction`)."""
    return uniform.fill_fraction(state.replay)


def staleness(state: PrioritizedState, indices: jax.Array, step: ArrayLike) -> jax.Array:
    """``[K]`` int32 age of sampled items (see `uniform.staleness`)."""
    return uniform.staleness(state.replay, indices, step)


def _num_leaves(tree: jax.Array) -> int:
    return tree.shape[-1] // 2


def _depth(tree: jax.Array) -> int:
    """Levels between the root and the leaves (``log2 L``)."""
    return _num_leaves(tree).bit_length() - 1


def init(example_item: Any, capacity: int) -> PrioritizedState:
    """An empty prioritized buffer for one unbatched ``example_item`` (see `uniform.init`).

    Returns:
        `PrioritizedState` with zeroed storage and tree, ``max_priority = 1.0``.
    """
    replay = uniform.init(example_item, capacity)
    num_leaves = 1 << (capacity - 1).bit_length()
    return PrioritizedState(
        replay=replay,
        tree=jnp.zeros((2 * num_leaves,), jnp.float32),
        max_priority=jnp.ones((), jnp.float32),
    )


def priorities(state: PrioritizedState) -> jax.Array:
    """``[capacity]`` float32 priority of every slot (0 for slots never written)."""
    num_leaves = _num_leaves(state.tree)
    return state.tree[num_leaves : num_leaves + capacity(state)]


def _last_occurrence_values(indices: jax.Array, values: jax.Array) -> jax.Array:
    """``[K]``: for each ``j``, ``values[k]`` of the last ``k`` with ``indices[k] == indices[j]``.

    So duplicate indices all carry one value and a scatter-set over them is deterministic.
    """
    positions = jnp.arange(indices.shape[0])
    same = indices[:, None] == indices[None, :]
    last = jnp.max(jnp.where(same, positions[None, :], -1), axis=1)
    return values[last]


def _set_leaves(tree: jax.Array, slots: jax.Array, values: jax.Array) -> jax.Array:
    """Set the priorities of ``slots`` ``[K]`` to ``values`` ``[K]`` and recompute every ancestor
    from its children, bottom up. Duplicate slots must carry equal values."""
    nodes = slots.astype(jnp.int32) + _num_leaves(tree)
    tree = tree.at[nodes].set(values.astype(tree.dtype))

    def recompute_parents(_, carry: tuple[jax.Array, jax.Array]):
        tree, nodes = carry
        nodes = nodes // 2
        # Every copy of a duplicated node computes the same sum from the same children.
        tree = tree.at[nodes].set(tree[2 * nodes] + tree[2 * nodes + 1])
        return tree, nodes

    tree, _ = jax.lax.fori_loop(0, _depth(tree), recompute_parents, (tree, nodes))
    return tree


def add(state: PrioritizedState, items: Any, step: ArrayLike, valid: ArrayLike = True
        ) -> PrioritizedState:
    """Write ``B`` items in order as `uniform.add` does; each written slot gets priority
    ``max_priority`` (replacing the priority of the item it overwrites).

    Args:
        state: the buffer.
        items: pytree, leaves ``[B, *leaf_shape]`` (``B`` static, <= capacity).
        step: ``[]`` int32 counter recorded in ``added_at``.
        valid: ``[]`` bool; when False the write is not counted (see `uniform.add`). The
            written slots still get ``max_priority``: they lie outside ``0 .. size - 1`` until
            the next `add` overwrites them, unless the buffer is full.

    Returns:
        The new state.
    """
    batch = uniform.check_items(state.replay, items)
    slots = uniform.write_slots(state.replay, batch)
    replay = uniform.add(state.replay, items, step, valid)
    tree = _set_leaves(state.tree, slots, jnp.full((batch,), state.max_priority))
    return dataclasses.replace(state, replay=replay, tree=tree)


def _descend(tree: jax.Array, targets: jax.Array) -> jax.Array:
    """Find, for each prefix-sum target ``[K]``, the leaf whose priority interval contains it.

    Goes right iff ``target >= left mass``, except that it never enters a subtree of zero mass
    (a target that floating point pushed past the end of the mass stays in the last non-empty
    subtree). Returns ``[K]`` int32 slot indices.
    """

    def level(_, carry: tuple[jax.Array, jax.Array]):
        nodes, targets = carry
        left = tree[2 * nodes]
        right = tree[2 * nodes + 1]
        go_right = jnp.where(right > 0, (targets >= left) | (left <= 0), False)
        targets = jnp.where(go_right, targets - left, targets)
        return 2 * nodes + go_right.astype(jnp.int32), targets

    nodes = jnp.ones(targets.shape, jnp.int32)
    nodes, _ = jax.lax.fori_loop(0, _depth(tree), level, (nodes, targets))
    return nodes - _num_leaves(tree)


def sample(
    state: PrioritizedState, key: jax.Array, batch_size: int, beta: ArrayLike
) -> tuple[Any, jax.Array, jax.Array]:
    """Stratified proportional sampling with importance weights.

    The total priority mass is split into ``batch_size`` equal segments and one target is drawn
    uniformly in each, ``u_j = (j + U[0, 1)) * total / batch_size``; each target is located by a
    sum-tree descent (vectorized over the batch). Marginally, ``P(i) = p_i / sum_k p_k``.

    Importance weights (normalized by the max **over the sampled batch**, the usual convention):

    ``w_j = (N * P(i_j)) ^ (-beta) / max_k (N * P(i_k)) ^ (-beta)``, ``N = size``,

    so ``0 < w_j <= 1`` and the lowest-priority sample in the batch gets weight 1.

    Guards: the descent never enters a zero-mass subtree, and indices are clamped to the valid
    slots ``0 .. size - 1``. Sampling an empty buffer is meaningless (weights are not finite).
    With equal priorities every weight is 1, as `uniform.sample` returns.

    Args:
        state: the buffer.
        key: typed PRNG key (consumed).
        batch_size: static Python int.
        beta: scalar importance-sampling exponent (Python float or traced), typically annealed
            from ~0.4 to 1.

    Returns:
        ``(items, indices, weights)``: leaves ``[batch_size, *leaf_shape]``, ``[batch_size]``
        int32 slots, ``[batch_size]`` float32 weights.
    """
    chex.assert_rank(state.tree, 1)
    total = state.tree[1]
    segment = total / batch_size
    offsets = jax.random.uniform(key, (batch_size,), jnp.float32)
    targets = (jnp.arange(batch_size, dtype=jnp.float32) + offsets) * segment
    indices = _descend(state.tree, targets)
    indices = jnp.clip(indices, 0, jnp.maximum(state.replay.size - 1, 0)).astype(jnp.int32)
    probs = state.tree[_num_leaves(state.tree) + indices] / total
    beta = jnp.asarray(beta, jnp.float32)
    weights = (state.replay.size.astype(jnp.float32) * probs) ** (-beta)
    weights = weights / jnp.max(weights)
    items = uniform.gather(state.replay, indices)
    chex.assert_tree_shape_prefix(items, (batch_size,))
    chex.assert_shape([indices, weights], (batch_size,))
    return items, indices, weights


def update_priorities(
    state: PrioritizedState,
    indices: jax.Array,
    td_errors: jax.Array,
    alpha: ArrayLike,
    eps: ArrayLike = 1e-6,
) -> PrioritizedState:
    """Set ``p_i = (|td_i| + eps) ^ alpha`` for the sampled slots and fix the tree.

    Duplicate entries in ``indices`` are allowed (sampling is with replacement): the **last**
    occurrence's TD error wins, and every ancestor on a touched path is recomputed from its
    children, so the result does not depend on scatter order and repeating the same update is
    a no-op. ``max_priority`` becomes ``max(max_priority, max of the new priorities)``.

    Args:
        state: the buffer.
        indices: ``[K]`` int32 slots (as returned by `sample`).
        td_errors: ``[K]`` TD errors (any real dtype; only ``|td|`` is used).
        alpha: scalar priority exponent (traced or Python float); 0 gives uniform replay.
        eps: small positive constant so no valid slot gets zero priority.

    Returns:
        The new state.
    """
    return set_priorities(state, indices, priority_of(td_errors, alpha, eps))


def priority_of(td_errors: jax.Array, alpha: ArrayLike, eps: ArrayLike = 1e-6) -> jax.Array:
    """``(|td| + eps) ^ alpha``, the proportional priority of a TD error ``[K] -> [K]``."""
    td = jnp.abs(jnp.asarray(td_errors)).astype(jnp.float32)
    return (td + jnp.asarray(eps, jnp.float32)) ** jnp.asarray(alpha, jnp.float32)


def set_priorities(state: PrioritizedState, indices: jax.Array,
                   new_priorities: jax.Array) -> PrioritizedState:
    """Set the priorities ``[K]`` of slots ``indices`` ``[K]`` directly (duplicates: the last
    occurrence wins) and fix the tree; ``max_priority`` grows to cover them. Writing back a
    slot's current priority is a no-op, which is how a learner skips a reprioritization."""
    chex.assert_rank(indices, 1)
    chex.assert_equal_shape([indices, new_priorities])
    new = _last_occurrence_values(indices, jnp.asarray(new_priorities, jnp.float32))
    return dataclasses.replace(
        state,
        tree=_set_leaves(state.tree, indices, new),
        max_priority=jnp.maximum(state.max_priority, jnp.max(new)),
    )

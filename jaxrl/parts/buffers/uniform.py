"""A circular replay buffer with uniform sampling, living in device memory.

The buffer stores an arbitrary pytree "item" (the algorithm decides what a transition is: the
off-policy algorithms store `jaxrl.parts.buffers.nstep.NStepTransition`). Every leaf of the storage is
``[capacity, *leaf_shape]``.

    state = uniform.init(example_item, capacity=100_000)
    state = uniform.add(state, items, step)            # items: leaves [B, ...], B envs at once
    batch, indices, weights = uniform.sample(state, key, 256)   # weights: ones [256]

The buffer protocol, shared with `jaxrl.parts.buffers.prioritized` so a learner has one code path:
``init(example_item, capacity)``, ``add(state, items, step, valid=True)``,
``sample(state, key, batch_size, beta) -> (items, indices, importance weights)``, and the
diagnostics ``capacity``, ``fill_fraction``, ``staleness``. Uniform replay is prioritized
replay with equal priorities, so its importance weights are all 1 whatever ``beta``.

``capacity`` and batch sizes are static Python ints (they fix shapes); ``step`` and keys may be
traced. Every function is pure, safe under ``jit``, and vmappable over a leading seed axis.
Shapes at the boundary (items in, batches out) are checked with ``chex`` when tracing, which
costs nothing at run time.
"""

from __future__ import annotations

from typing import Any

import chex
import jax
import jax.numpy as jnp
from flax import struct
from jax.typing import ArrayLike

__all__ = [
    "ReplayState",
    "add",
    "capacity",
    "check_items",
    "fill_fraction",
    "gather",
    "init",
    "num_items",
    "sample",
    "staleness",
    "write_slots",
]


@struct.dataclass
class ReplayState:
    """A circular buffer of ``capacity`` items.

    data: pytree with the item's structure, leaves ``[capacity, *leaf_shape]``.
    position: ``[]`` int32, the slot the next item is written to.
    size: ``[]`` int32, number of valid items (``min(items added, capacity)``); valid items occupy
        slots ``0 .. size - 1``.
    added_at: ``[capacity]`` int32, the ``step`` passed to `add` when each slot was written
        (for the sample-staleness diagnostic).
    """

    data: Any
    position: jax.Array
    size: jax.Array
    added_at: jax.Array


def capacity(state: ReplayState) -> int:
    """The static number of slots of a (unbatched or seed-batched) buffer state."""
    return state.added_at.shape[-1]


def _check_capacity(capacity: int) -> None:
    if not isinstance(capacity, int) or capacity < 1:
        raise ValueError(f"capacity must be a static Python int >= 1, got {capacity!r}")


def init(example_item: Any, capacity: int) -> ReplayState:
    """An empty buffer whose storage matches one unbatched ``example_item``.

    Args:
        example_item: pytree of arrays (one item, no batch axis); only shapes/dtypes are read.
        capacity: static Python int, number of slots.

    Returns:
        `ReplayState` with zeroed storage (leaves ``[capacity, *leaf_shape]``), position 0, size 0.
    """
    _check_capacity(capacity)

    def storage(leaf: ArrayLike) -> jax.Array:
        leaf = jnp.asarray(leaf)
        return jnp.zeros((capacity, *leaf.shape), leaf.dtype)

    return ReplayState(
        data=jax.tree.map(storage, example_item),
        position=jnp.zeros((), jnp.int32),
        size=jnp.zeros((), jnp.int32),
        added_at=jnp.zeros((capacity,), jnp.int32),
    )


def num_items(items: Any) -> int:
    """The static leading size ``B`` shared by all leaves of a batch of items."""
    sizes = {jnp.shape(leaf)[0] for leaf in jax.tree.leaves(items)}
    if len(sizes) != 1:
        raise ValueError(f"all leaves of items must share one leading size, got {sorted(sizes)}")
    return sizes.pop()


def write_slots(state: ReplayState, batch: int) -> jax.Array:
    """``[batch]`` int32 slots the next ``batch`` items go to: ``position, position + 1, ...``
    modulo capacity. ``batch`` must be <= capacity so the slots are distinct."""
    cap = capacity(state)
    if batch > cap:
        raise ValueError(f"cannot add {batch} items at once to a buffer of capacity {cap}")
    return (state.position + jnp.arange(batch, dtype=jnp.int32)) % cap


def check_items(state: ReplayState, items: Any) -> int:
    """``B`` of a batch of items, after checking (when tracing) that ``items`` has the item
    structure and every leaf is ``[B, *leaf_shape]`` of the matching storage leaf."""
    batch = num_items(items)
    chex.assert_trees_all_equal_structs(items, state.data)
    jax.tree.map(lambda store, x: chex.assert_shape(x, (batch, *store.shape[1:])),
                 state.data, items)
    return batch


def add(state: ReplayState, items: Any, step: ArrayLike, valid: ArrayLike = True
        ) -> ReplayState:
    """Write ``B`` items into consecutive slots (in order, wrapping around).

    Args:
        state: the buffer.
        items: pytree with the item structure, leaves ``[B, *leaf_shape]``; ``B`` (static, e.g.
            the number of envs stepping at once) must be <= capacity. Item ``b`` goes to slot
            ``(position + b) % capacity``, overwriting the oldest items once the buffer is full.
        step: ``[]`` int32 counter (e.g. env steps or updates so far) recorded in ``added_at``.
        valid: ``[]`` bool (may be traced). When False the items are written but not counted:
            ``position`` and ``size`` stay, so the next `add` overwrites them and they are never
            sampled (a scratch write, e.g. while the n-step window fills).

    Returns:
        The new state: ``position`` advanced by ``B`` (mod capacity), ``size`` grown by ``B``
        (capped at capacity); both unchanged when not ``valid``.
    """
    batch = check_items(state, items)
    slots = write_slots(state, batch)
    data = jax.tree.map(lambda store, x: store.at[slots].set(x), state.data, items)
    position = (state.position + batch) % capacity(state)
    size = jnp.minimum(state.size + batch, capacity(state)).astype(jnp.int32)
    return ReplayState(
        data=data,
        position=jnp.where(valid, position, state.position),
        size=jnp.where(valid, size, state.size),
        added_at=state.added_at.at[slots].set(jnp.asarray(step, jnp.int32)),
    )


def gather(state: ReplayState, indices: jax.Array) -> Any:
    """The items at ``indices`` ``[K]``: leaves ``[K, *leaf_shape]``."""
    return jax.tree.map(lambda store: store[indices], state.data)


def sample(state: ReplayState, key: jax.Array, batch_size: int, beta: ArrayLike = 1.0
           ) -> tuple[Any, jax.Array, jax.Array]:
    """Sample ``batch_size`` items uniformly, with replacement, from the ``size`` valid slots.

    Sampling an empty buffer returns slot 0 (zeros); callers start learning once
    ``size >= batch_size`` (or some warm-up size).

    Args:
        state: the buffer.
        key: typed PRNG key (consumed).
        batch_size: static Python int.
        beta: the importance-weight exponent of the protocol (see `jaxrl.parts.buffers.prioritized`);
            unused, since every uniform weight ``(N * 1/N) ^ -beta`` is 1.

    Returns:
        ``(items, indices, weights)``: leaves ``[batch_size, *leaf_shape]``, ``[batch_size]``
        int32 slot indices (pass them to `staleness`) and ``[batch_size]`` float32 importance
        weights, all ones.
    """
    del beta
    high = jnp.maximum(state.size, 1)
    indices = jax.random.randint(key, (batch_size,), 0, high, dtype=jnp.int32)
    items = gather(state, indices)
    weights = jnp.ones((batch_size,), jnp.float32)
    chex.assert_tree_shape_prefix(items, (batch_size,))
    chex.assert_shape([indices, weights], (batch_size,))
    return items, indices, weights


def staleness(state: ReplayState, indices: jax.Array, step: ArrayLike) -> jax.Array:
    """``[K]`` int32 ``step - added_at[indices]``: how old each sampled item is, in the units of
    the ``step`` counter passed to `add`."""
    return jnp.asarray(step, jnp.int32) - state.added_at[indices]


def fill_fraction(state: ReplayState) -> jax.Array:
    """``[]`` float32 ``size / capacity`` (replay-buffer fill diagnostic)."""
    return state.size.astype(jnp.float32) / capacity(state)

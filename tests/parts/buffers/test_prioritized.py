"""Proportional prioritized replay: sampling frequencies against the priorities, stratified
draws, importance weights, the sum tree against a NumPy one, new items at max priority, no
invalid slot ever sampled, no key reused."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from scipy import stats

from jaxrl.parts.buffers import prioritized, uniform
from tests.parts.buffers.items import (
    EXAMPLE_ITEM,
    assert_trees_equal,
    make_items,
    p_add,
    p_init,
    p_sample,
    p_update,
    u_add,
    u_sample,
)


def numpy_sum_tree(leaves: np.ndarray, num_leaves: int) -> np.ndarray:
    """Reference: full bottom-up float32 rebuild of a flat sum tree (root at 1)."""
    tree = np.zeros(2 * num_leaves, np.float32)
    tree[num_leaves : num_leaves + len(leaves)] = leaves
    for node in range(num_leaves - 1, 0, -1):
        tree[node] = tree[2 * node] + tree[2 * node + 1]
    return tree


def filled_prioritized(capacity: int, count: int) -> prioritized.PrioritizedState:
    state = p_init(EXAMPLE_ITEM, capacity)
    return p_add(state, make_items(0, count), 0)


def test_prioritized_sampling_frequencies_match_priorities():
    state = filled_prioritized(capacity=7, count=6)  # 8 leaves: slots 6 and 7 never valid
    td = jnp.array([0.5, 1.0, 2.0, 0.1, 3.0, 0.7])
    state = p_update(state, jnp.arange(6), td, alpha=0.7)
    p = np.asarray(prioritized.priorities(state), np.float64)
    np.testing.assert_allclose(p[:6], (np.abs(td) + 1e-6) ** 0.7, rtol=1e-6)
    assert p[6] == 0.0
    expected = p[:6] / p.sum()

    sample = jax.jit(jax.vmap(prioritized.sample, in_axes=(None, 0, None, None)), static_argnums=2)
    _, indices, _ = sample(state, jax.random.split(jax.random.key(3), 400), 60, 0.5)
    indices = np.asarray(indices).ravel()
    assert indices.min() >= 0 and indices.max() <= 5
    counts = np.bincount(indices, minlength=6)
    freq = counts / counts.sum()
    np.testing.assert_allclose(freq, expected, atol=0.01)
    assert stats.chisquare(counts, expected * counts.sum()).pvalue > 1e-3


def test_prioritized_stratified_one_draw_per_segment():
    state = filled_prioritized(capacity=4, count=4)  # equal priorities: segment j = slot j
    _, indices, weights = p_sample(state, jax.random.key(4), 4, 1.0)
    np.testing.assert_array_equal(indices, [0, 1, 2, 3])
    np.testing.assert_allclose(weights, 1.0)


def test_prioritized_importance_weights_formula():
    state = filled_prioritized(capacity=10, count=9)
    td = jax.random.normal(jax.random.key(5), (9,)) * 2.0
    state = p_update(state, jnp.arange(9), td, alpha=0.6)
    beta = 0.4
    items, indices, weights = p_sample(state, jax.random.key(6), 32, beta)
    p = np.asarray(prioritized.priorities(state), np.float64)
    probs = p[np.asarray(indices)] / p.sum()
    w = (9 * probs) ** (-beta)
    np.testing.assert_allclose(weights, w / w.max(), rtol=1e-5)
    assert float(jnp.max(weights)) == 1.0
    np.testing.assert_array_equal(items["id"], indices)


def test_update_priorities_with_duplicates_matches_numpy_tree():
    capacity, num_leaves, alpha, eps = 13, 16, 0.8, 1e-6
    state = filled_prioritized(capacity, capacity)
    indices = jnp.array([3, 1, 3, 5, 1, 12, 3, 0], jnp.int32)
    td = jnp.array([0.5, -2.0, 1.5, 0.25, 4.0, -0.1, 0.75, 3.0], jnp.float32)
    new = p_update(state, indices, td, alpha, eps)

    leaves = np.ones(capacity, np.float32)  # added items start at max_priority = 1
    for i, e in zip(np.asarray(indices), np.asarray(td)):  # sequential: the last write wins
        leaves[i] = (np.float32(abs(e)) + np.float32(eps)) ** np.float32(alpha)
    np.testing.assert_allclose(prioritized.priorities(new), leaves, rtol=1e-6)
    # Every internal node is exactly the float32 sum of its children (full rebuild agrees).
    ours = np.asarray(new.tree)
    np.testing.assert_array_equal(ours, numpy_sum_tree(ours[num_leaves:], num_leaves))
    np.testing.assert_allclose(ours, numpy_sum_tree(leaves, num_leaves), rtol=1e-6)
    np.testing.assert_allclose(ours[1], leaves.sum(dtype=np.float64), rtol=1e-6)
    np.testing.assert_allclose(new.max_priority, max(1.0, leaves.max()), rtol=1e-6)
    # Idempotent, and scatter order does not matter once the last occurrence is fixed.
    assert_trees_equal(p_update(new, indices, td, alpha, eps), new)
    perm = np.array([1, 0, 3, 2, 5, 4, 6, 7])  # keeps the last occurrence of 1 and 3 last
    assert_trees_equal(p_update(state, indices[perm], td[perm], alpha, eps).tree, new.tree)


def test_sum_tree_invariant_after_many_random_updates():
    capacity, num_leaves = 11, 16

    @jax.jit
    def run(key):
        state = prioritized.init(EXAMPLE_ITEM, capacity)

        def body(state, key):
            add_key, idx_key, td_key = jax.random.split(key, 3)
            ids = jax.random.randint(add_key, (3,), 0, 100)
            items = {"obs": jnp.zeros((3, 2)), "id": ids, "flag": ids > 50}
            state = p_add(state, items, 0)
            idx = jax.random.randint(idx_key, (6,), 0, state.replay.size)
            td = jax.random.normal(td_key, (6,)) * 3.0
            return p_update(state, idx, td, 0.6), None

        return jax.lax.scan(body, state, jax.random.split(key, 40))[0]

    tree = np.asarray(run(jax.random.key(7)).tree)
    np.testing.assert_array_equal(tree, numpy_sum_tree(tree[num_leaves:], num_leaves))
    assert (tree[num_leaves : num_leaves + capacity] > 0).all()
    assert (tree[num_leaves + capacity :] == 0).all() and tree[0] == 0
    np.testing.assert_allclose(tree[1], tree[num_leaves:].sum(dtype=np.float64), rtol=1e-5)


def test_overwritten_items_get_max_priority():
    state = filled_prioritized(capacity=4, count=4)
    state = p_update(state, jnp.arange(4), jnp.array([5.0, 0.1, 0.2, 0.3]), alpha=1.0)
    state = p_update(state, jnp.array([0]), jnp.array([0.01]), alpha=1.0)
    np.testing.assert_allclose(state.max_priority, 5.0 + 1e-6, rtol=1e-6)  # never decreases
    state = p_add(state, make_items(100, 2), 9)  # wraps onto slots 0 and 1
    np.testing.assert_allclose(prioritized.priorities(state), [5.0, 5.0, 0.2, 0.3], rtol=1e-5)
    np.testing.assert_array_equal(state.replay.data["id"], [100, 101, 2, 3])
    np.testing.assert_array_equal(state.replay.added_at, [9, 9, 0, 0])
    assert int(state.replay.position) == 2 and int(state.replay.size) == 4
    np.testing.assert_allclose(state.tree[1], 10.5, rtol=1e-5)


def test_prioritized_never_samples_empty_or_invalid_slots_under_drift():
    state = filled_prioritized(capacity=8, count=5)
    # Simulate floating-point drift: the root claims more mass than its children hold, so the
    # upper targets overshoot the leaves; they must still land on a valid, non-zero slot.
    drifted = state.replace(tree=state.tree.at[1].multiply(1.5))
    _, indices, weights = p_sample(drifted, jax.random.key(8), 64, 0.5)
    indices = np.asarray(indices)
    assert indices.max() <= 4 and indices.min() >= 0
    assert (np.asarray(prioritized.priorities(drifted))[indices] > 0).all()
    assert np.isfinite(np.asarray(weights)).all()


def test_prioritized_sample_does_not_reuse_keys():
    state = filled_prioritized(capacity=8, count=5)
    with jax.debug_key_reuse(True):
        key = jax.random.key(9)
        key_u, key_p = jax.random.split(key)
        u_sample(u_add(uniform.init(EXAMPLE_ITEM, 8), make_items(0, 3), 0), key_u, 4)
        p_sample(state, key_p, 4, 0.5)

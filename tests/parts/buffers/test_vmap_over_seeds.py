"""Every buffer vmapped over seeds (uniform, prioritized, n-step window): per-seed results equal
running each seed alone."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxrl.parts.buffers import prioritized, uniform
from tests.parts.buffers.items import EXAMPLE_ITEM, assert_trees_equal, random_rows, run_window


def _seed_items(key, num_batches: int, batch: int) -> list[dict]:
    """Per-seed item batches from a single random draw (few PRNG calls keep compiles short)."""
    ids = jax.random.randint(key, (num_batches, batch), 0, 1000)
    obs = jnp.stack([ids * 1.0, ids * 2.0], axis=-1)
    return [{"obs": obs[i], "id": ids[i], "flag": ids[i] > 500} for i in range(num_batches)]


def _uniform_run(key):
    data_key, sample_key = jax.random.split(key)
    state = uniform.init(EXAMPLE_ITEM, 8)
    for step, items in enumerate(_seed_items(data_key, 4, 3)):  # 12 items: wraps
        state = uniform.add(state, items, step)
    items, indices, _ = uniform.sample(state, sample_key, 16)
    return state, items, indices, uniform.staleness(state, indices, 5)


def _prioritized_run(key, alpha, beta):
    data_key, td_key, sample_key = jax.random.split(key, 3)
    state = prioritized.init(EXAMPLE_ITEM, 6)
    for step, items in enumerate(_seed_items(data_key, 3, 3)):  # 9 items: wraps
        state = prioritized.add(state, items, step)
    idx = jnp.array([0, 2, 2, 5], jnp.int32)
    state = prioritized.update_priorities(state, idx, jax.random.normal(td_key, (4,)), alpha)
    items, indices, weights = prioritized.sample(state, sample_key, 8, beta)
    return state, items, indices, weights


def _nstep_run(key):
    rows = random_rows(0, T=7, N=4)
    rows["reward"] = jax.random.normal(key, (7, 4))
    return run_window(rows, 0.9, 3)


def test_vmap_over_seeds_equals_each_seed_alone():
    keys = jax.random.split(jax.random.key(11), 3)
    alphas = jnp.array([0.4, 0.6, 0.8])
    betas = jnp.array([0.3, 0.5, 1.0])
    cases = [
        (_uniform_run, (keys,)),
        (_prioritized_run, (keys, alphas, betas)),
        (_nstep_run, (keys,)),
    ]
    for fn, args in cases:
        batched = jax.jit(jax.vmap(fn))(*args)
        single = jax.jit(fn)
        for seed in range(3):
            alone = single(*(a[seed] for a in args))
            assert_trees_equal(jax.tree.map(lambda x: x[seed], batched), alone)
        # Seeds are not all the same (the test could not fail otherwise).
        leaves = jax.tree.leaves(batched)
        assert any(not np.array_equal(x[0], x[1]) for x in leaves)

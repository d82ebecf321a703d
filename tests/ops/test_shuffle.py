"""The packed-sort minibatch shuffle is a uniformly random permutation."""

import itertools

import jax
import numpy as np
import pytest

from jaxrl.ops.shuffle import MAX_PACKED, permutation


@pytest.mark.parametrize("n", [0, 1, 2, 7, 500, 4096])
def test_is_a_permutation(n):
    perms = np.asarray(jax.vmap(lambda k: permutation(k, n))(jax.random.split(jax.random.key(n), 8)))
    assert perms.shape == (8, n) and perms.dtype == np.int32
    for p in perms:
        assert sorted(p.tolist()) == list(range(n))
    if n >= 7:
        assert len({tuple(p) for p in perms}) == 8  # different keys, different orders


def test_all_orders_equally_likely():
    """n = 5: 24,000 draws over the 120 orders; chi-square with 119 dof stays under its 0.1%
    critical value (about 173), and so does the position of each element (16 dof, about 39)."""
    draws = np.asarray(jax.jit(jax.vmap(lambda k: permutation(k, 5)))(
        jax.random.split(jax.random.key(0), 24_000)))
    index = {p: i for i, p in enumerate(itertools.permutations(range(5)))}
    counts = np.bincount([index[tuple(d)] for d in draws], minlength=120)
    expected = len(draws) / 120
    assert ((counts - expected) ** 2 / expected).sum() < 173
    positions = np.stack([np.bincount(draws[:, j], minlength=5) for j in range(5)])
    expected = len(draws) / 5
    assert ((positions - expected) ** 2 / expected).sum() < 39


def test_sort_is_single_operand_and_large_inputs_fall_back():
    hlo = jax.jit(lambda k: permutation(k, 500)).lower(jax.random.key(0)).compile().as_text()
    sorts = [line.split("=", 1)[1].strip() for line in hlo.splitlines() if " sort(" in line]
    assert len(sorts) == 2 and all(s.startswith("u32[500]") for s in sorts), sorts  # no tuples
    big = np.asarray(permutation(jax.random.key(1), MAX_PACKED + 3))
    assert sorted(big.tolist()) == list(range(MAX_PACKED + 3))

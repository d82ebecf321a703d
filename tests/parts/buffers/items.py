"""Items, jitted buffer operations and random rollout rows shared by the buffer tests."""

from __future__ import annotations

import functools

import jax
import numpy as np

from jaxrl.parts.buffers import nstep, prioritized, uniform
from jaxrl.parts.transition import Transition


def assert_trees_equal(a, b):
    jax.tree.map(np.testing.assert_array_equal, a, b)


def make_items(start: int, batch: int) -> dict:
    """A batch of items whose content encodes their global id."""
    ids = np.arange(start, start + batch, dtype=np.int32)
    return {
        "obs": np.stack([ids * 1.0, -ids * 0.5], axis=1).astype(np.float32),
        "id": ids,
        "flag": ids % 3 == 0,
    }


EXAMPLE_ITEM = jax.tree.map(lambda x: x[0], make_items(0, 1))


# Jitted once here: op-by-op dispatch of the tree loops is slower than compiling them.
u_add = jax.jit(uniform.add)


u_sample = jax.jit(uniform.sample, static_argnums=2)


p_init = jax.jit(prioritized.init, static_argnums=1)


p_add = jax.jit(prioritized.add)


p_sample = jax.jit(prioritized.sample, static_argnums=2)


p_update = jax.jit(prioritized.update_priorities)


def random_rows(seed: int, T: int = 16, N: int = 6) -> dict:
    """Random rows ``[T, N, ...]`` with hand-placed episode boundaries in the first columns."""
    rng = np.random.default_rng(seed)
    term = rng.random((T, N)) < 0.2
    trunc = rng.random((T, N)) < 0.2
    term[:, 0], trunc[:, 0] = True, False  # every step terminal
    term[:, 1], trunc[:, 1] = False, False  # never done
    term[:, 2], trunc[:, 2] = np.arange(T) % 3 == 0, np.arange(T) % 3 == 0  # both flags at once
    term[:, 3], trunc[:, 3] = False, np.arange(T) % 4 == 1  # truncations only
    obs = rng.normal(size=(T, N, 3)).astype(np.float32)
    return {
        "obs": obs,
        "action": rng.integers(0, 5, size=(T, N)).astype(np.int32),
        "reward": rng.normal(size=(T, N)).astype(np.float32),
        "terminated": term,
        "truncated": trunc,
        "next_obs": (obs + 10.0).astype(np.float32),  # distinct from every obs
    }


@functools.partial(jax.jit, static_argnums=2)
def run_window(rows: dict, gamma, n: int):
    """Push ``[T, N, ...]`` rows one by one; returns emitted items ``[T, N]`` and valid ``[T]``."""
    rows = Transition(**rows)
    window = nstep.window_init(jax.tree.map(lambda x: x[0], rows), n)

    def body(window, row):
        window, item, valid = nstep.push(window, row, gamma)
        return window, (item, valid)

    return jax.lax.scan(body, window, rows)[1]

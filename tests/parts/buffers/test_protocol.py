"""The one buffer protocol both replay modules follow: ``add`` checks item shapes and takes a
``valid`` flag (an uncounted scratch write), ``sample`` returns importance weights, and the
prioritized state is a `ReplayState` plus its sum tree."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxrl.parts.buffers import prioritized, uniform
from tests.parts.buffers.items import EXAMPLE_ITEM, assert_trees_equal, make_items


def test_add_checks_item_shapes():
    state = uniform.init(EXAMPLE_ITEM, 4)
    items = make_items(0, 2)
    with pytest.raises(AssertionError):
        uniform.add(state, dict(items, obs=items["obs"][:, :1]), 0)  # [B, 1] vs [B, 2]
    with pytest.raises(AssertionError):
        uniform.add(state, {"obs": items["obs"], "id": items["id"]}, 0)  # a leaf missing
    with pytest.raises(AssertionError):
        prioritized.add(prioritized.init(EXAMPLE_ITEM, 4), dict(items, id=items["id"][:, None]), 0)


@pytest.mark.parametrize("module", [uniform, prioritized])
def test_add_not_valid_writes_scratch_that_is_not_counted(module):
    state = module.add(module.init(EXAMPLE_ITEM, 4), make_items(0, 3), 0)
    scratch = jax.jit(module.add)(state, make_items(50, 1), 1, jnp.bool_(False))
    replay = scratch.replay if module is prioritized else scratch
    assert int(replay.position) == 3 and int(replay.size) == 3
    assert float(module.fill_fraction(scratch)) == 0.75
    state = module.add(scratch, make_items(3, 1), 2)  # overwrites the scratch slot
    replay = state.replay if module is prioritized else state
    np.testing.assert_array_equal(replay.data["id"], [0, 1, 2, 3])
    assert int(replay.size) == 4 and module.capacity(state) == 4


def test_prioritized_state_contains_a_replay_state():
    state = prioritized.add(prioritized.init(EXAMPLE_ITEM, 4), make_items(0, 3), 5)
    plain = uniform.add(uniform.init(EXAMPLE_ITEM, 4), make_items(0, 3), 5)
    assert isinstance(state.replay, uniform.ReplayState)
    assert_trees_equal(state.replay, plain)
    np.testing.assert_array_equal(prioritized.staleness(state, jnp.arange(3), 7), [2, 2, 2])

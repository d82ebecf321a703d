"""The n-step window against a slow reference and `jaxrl.ops.n_step_targets`: truncation
bootstraps and termination does not, n = 1 is the one-step transition, bad n refused."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxrl.ops import n_step_targets
from jaxrl.parts.buffers import nstep
from jaxrl.parts.transition import Transition
from tests.parts.buffers.items import random_rows, run_window


def ref_nstep(rows: dict, gamma: float, n: int) -> dict:
    """Slow reference: the n-step transition starting at every s <= T - n, per env."""
    T, N = rows["reward"].shape
    out = {k: [] for k in ("obs", "action", "reward", "discount", "terminated", "next_obs",
                           "steps")}
    for s in range(T - n + 1):
        per_env = {k: [] for k in out}
        for b in range(N):
            ret, m = 0.0, 0
            for k in range(n):
                ret += gamma**k * float(rows["reward"][s + k, b])
                m = k + 1
                if rows["terminated"][s + k, b] or rows["truncated"][s + k, b]:
                    break
            last = s + m - 1
            term = bool(rows["terminated"][last, b])
            per_env["obs"].append(rows["obs"][s, b])
            per_env["action"].append(rows["action"][s, b])
            per_env["reward"].append(ret)
            per_env["discount"].append(gamma**m * (0.0 if term else 1.0))
            per_env["terminated"].append(term)
            per_env["next_obs"].append(rows["next_obs"][last, b])
            per_env["steps"].append(m)
        for k in out:
            out[k].append(np.array(per_env[k]))
    return {k: np.stack(v) for k, v in out.items()}


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_nstep_window_matches_reference(n):
    gamma = 0.9
    for seed in range(3):
        rows = random_rows(seed)
        items, valid = run_window(rows, gamma, n)
        np.testing.assert_array_equal(valid, np.arange(len(valid)) >= n - 1)
        emitted = jax.tree.map(lambda x: np.asarray(x)[n - 1 :], items)
        expected = ref_nstep(rows, gamma, n)
        for key in ("obs", "action", "terminated", "next_obs", "steps"):
            np.testing.assert_array_equal(getattr(emitted, key), expected[key], err_msg=key)
        for key in ("reward", "discount"):
            np.testing.assert_allclose(
                getattr(emitted, key), expected[key], rtol=1e-5, atol=1e-6, err_msg=key
            )


def test_nstep_truncation_bootstraps_and_termination_does_not():
    n, gamma = 3, 0.5
    rows = random_rows(0, T=6, N=4)
    items, _ = run_window(rows, gamma, n)
    first = jax.tree.map(lambda x: np.asarray(x)[n - 1], items)  # starts at row 0
    np.testing.assert_allclose(first.discount[0], 0.0)  # terminated at row 0: m = 1
    np.testing.assert_allclose(first.discount[1], gamma**3)  # never done: m = n
    np.testing.assert_allclose(first.discount[2], 0.0)  # both flags at row 0: terminated wins
    np.testing.assert_array_equal(first.next_obs[2], rows["next_obs"][0, 2])
    # env 3 is truncated at row 1: m = 2, bootstraps from the final obs of row 1.
    np.testing.assert_allclose(first.discount[3], gamma**2)
    np.testing.assert_array_equal(first.next_obs[3], rows["next_obs"][1, 3])
    np.testing.assert_allclose(
        first.reward[3], rows["reward"][0, 3] + gamma * rows["reward"][1, 3], rtol=1e-6
    )


def test_nstep_with_n1_is_exactly_the_one_step_transition():
    gamma = jnp.float32(0.97)
    rows = random_rows(4)
    items, valid = run_window(rows, gamma, 1)
    assert np.asarray(valid).all()
    np.testing.assert_array_equal(items.obs, rows["obs"])
    np.testing.assert_array_equal(items.action, rows["action"])
    np.testing.assert_array_equal(items.reward, rows["reward"])
    np.testing.assert_array_equal(items.terminated, rows["terminated"])
    np.testing.assert_array_equal(items.next_obs, rows["next_obs"])
    one_step = gamma * (1.0 - jnp.asarray(rows["terminated"], jnp.float32))
    np.testing.assert_array_equal(items.discount, one_step)


@pytest.mark.parametrize("n", [1, 3, 4])
def test_nstep_window_agrees_with_n_step_targets(n):
    gamma = 0.95
    rows = random_rows(5, T=20)
    w = np.array([0.3, -1.2, 0.7], np.float32)
    value = lambda obs: obs @ w  # a fixed V(obs)
    targets, discounts = n_step_targets(
        rows["reward"], value(rows["next_obs"]), rows["terminated"], rows["truncated"], gamma, n
    )
    items, _ = run_window(rows, gamma, n)
    emitted = jax.tree.map(lambda x: np.asarray(x)[n - 1 :], items)
    starts = len(rows["reward"]) - n + 1
    np.testing.assert_allclose(emitted.discount, np.asarray(discounts)[:starts], rtol=1e-5)
    np.testing.assert_allclose(
        emitted.reward + emitted.discount * value(emitted.next_obs),
        np.asarray(targets)[:starts],
        rtol=1e-5,
        atol=1e-5,
    )


def test_nstep_window_rejects_bad_n():
    row = Transition(*(jnp.zeros(2),) * 6)
    with pytest.raises(ValueError, match="n must be"):
        nstep.window_init(row, 0)

"""Replay buffers: order and wrap-around, transition alignment on a real env, prioritized
sampling against its definition and a NumPy sum tree, n-step windows against slow references
and `jaxrl.ops.n_step_targets`, and vmap over seeds."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

import envs
from jaxrl.buffers import nstep, prioritized, uniform
from jaxrl.ops import n_step_targets


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

# --------------------------------------------------------------------------------------------
# Uniform buffer
# --------------------------------------------------------------------------------------------


def test_uniform_order_and_wrap_around():
    capacity, batch = 8, 3
    state = uniform.init(EXAMPLE_ITEM, capacity)
    assert state.data["obs"].shape == (capacity, 2) and state.data["obs"].dtype == jnp.float32
    assert state.data["id"].dtype == jnp.int32 and state.data["flag"].dtype == jnp.bool_
    model_ids = np.full(capacity, -1)
    model_step = np.zeros(capacity, np.int32)
    written = 0
    for step in range(7):  # 21 items = 2.625 x capacity
        state = u_add(state, make_items(written, batch), jnp.int32(100 + step))
        for b in range(batch):
            model_ids[(written + b) % capacity] = written + b
            model_step[(written + b) % capacity] = 100 + step
        written += batch
        size = min(written, capacity)
        assert int(state.position) == written % capacity
        assert int(state.size) == size
        np.testing.assert_array_equal(state.added_at, model_step)
        valid = model_ids[:size]
        assert (valid >= 0).all()
        expected = make_items(0, written)
        np.testing.assert_array_equal(state.data["id"][:size], valid)
        np.testing.assert_array_equal(state.data["obs"][:size], expected["obs"][valid])
        np.testing.assert_array_equal(state.data["flag"][:size], expected["flag"][valid])
    # After 21 items: the newest 8 are ids 13..20 with 16..20 in slots 0..4.
    np.testing.assert_array_equal(state.data["id"], [16, 17, 18, 19, 20, 13, 14, 15])
    np.testing.assert_array_equal(
        uniform.staleness(state, jnp.array([0, 5]), jnp.int32(110)), [110 - 105, 110 - 104]
    )
    assert float(uniform.fill_fraction(state)) == 1.0


def test_uniform_add_rejects_batch_larger_than_capacity():
    state = uniform.init(EXAMPLE_ITEM, 4)
    with pytest.raises(ValueError, match="capacity"):
        u_add(state, make_items(0, 5), 0)
    with pytest.raises(ValueError, match="capacity"):
        uniform.init(EXAMPLE_ITEM, 0)


def test_uniform_sample_is_uniform_over_valid_slots():
    state = u_add(uniform.init(EXAMPLE_ITEM, 10), make_items(0, 4), 3)
    items, indices = u_sample(state, jax.random.key(0), 4000)
    indices = np.asarray(indices)
    assert indices.dtype == np.int32 and indices.shape == (4000,)
    assert indices.min() == 0 and indices.max() == 3
    np.testing.assert_array_equal(items["id"], indices)  # item i was written to slot i
    counts = np.bincount(indices, minlength=4)
    assert stats.chisquare(counts).pvalue > 1e-3
    np.testing.assert_array_equal(uniform.staleness(state, indices, 10), np.full(4000, 7))


# --------------------------------------------------------------------------------------------
# Alignment on a real env: every sample is a recorded (s_t, a_t, r_t, s_{t+1})
# --------------------------------------------------------------------------------------------

NUM_ENVS, NUM_STEPS, ALIGN_CAPACITY = 4, 48, 64


@functools.partial(jax.jit, static_argnums=(1,))
def _record_cartpole(key, env, params):
    """Random-policy rollout of N CartPoles, adding one-step transitions as it goes."""
    reset_key, run_key = jax.random.split(key)
    obs, env_state = jax.vmap(env.reset, in_axes=(0, None))(
        jax.random.split(reset_key, NUM_ENVS), params
    )
    example = {
        "obs": obs[0],
        "action": jnp.int32(0),
        "reward": jnp.float32(0),
        "terminated": jnp.bool_(False),
        "next_obs": obs[0],
    }
    buffer = uniform.init(example, ALIGN_CAPACITY)

    def one_step(carry, inputs):
        obs, env_state, buffer = carry
        t, step_key = inputs
        act_key, env_key = jax.random.split(step_key)
        action = jax.random.randint(act_key, (NUM_ENVS,), 0, 2, dtype=jnp.int32)
        step = jax.vmap(env.step, in_axes=(0, 0, 0, None))
        obs_tp1, env_state, reward, term, trunc, info = step(
            jax.random.split(env_key, NUM_ENVS), env_state, action, params
        )
        item = {
            "obs": obs,
            "action": action,
            "reward": reward,
            "terminated": term,
            "next_obs": info["final_observation"],
        }
        buffer = u_add(buffer, item, t)
        record = dict(item, truncated=trunc, obs_tp1=obs_tp1)
        return (obs_tp1, env_state, buffer), record

    inputs = (jnp.arange(NUM_STEPS, dtype=jnp.int32), jax.random.split(run_key, NUM_STEPS))
    (_, _, buffer), records = jax.lax.scan(one_step, (obs, env_state, buffer), inputs)
    return buffer, records


def test_transition_alignment_on_cartpole_with_truncation():
    env, params = envs.make("CartPole-v1")
    params = params.replace(max_steps_in_episode=14)
    buffer, rec = _record_cartpole(jax.random.key(1), env, params)
    rec = jax.tree.map(np.asarray, rec)  # leaves [T, N, ...]
    term, trunc = rec["terminated"], rec["truncated"]

    # The recording itself is aligned: s_{t+1} is the next row's obs unless the episode ended;
    # on a truncated step next_obs is the final observation, not the reset observation.
    cont = ~(term | trunc)
    np.testing.assert_array_equal(rec["next_obs"][cont], rec["obs_tp1"][cont])
    np.testing.assert_array_equal(rec["obs"][1:], rec["obs_tp1"][:-1])
    trunc_only = trunc & ~term
    assert trunc_only.sum() >= 2 and (term & ~trunc).sum() >= 2
    assert (rec["next_obs"][trunc_only] != rec["obs_tp1"][trunc_only]).any(axis=-1).all()

    # Sample many; each index must point at exactly the record last written to that slot.
    items, indices = u_sample(buffer, jax.random.key(2), 512)
    items, indices = jax.tree.map(np.asarray, (items, indices))
    assert int(buffer.size) == ALIGN_CAPACITY
    assert len(np.unique(indices)) > ALIGN_CAPACITY // 2
    total = NUM_STEPS * NUM_ENVS
    flat_index = [total - ALIGN_CAPACITY + ((s - total) % ALIGN_CAPACITY) for s in indices]
    t_idx, env_idx = np.divmod(np.array(flat_index), NUM_ENVS)
    assert (np.array(flat_index) % ALIGN_CAPACITY == indices).all()
    for key in ("obs", "action", "reward", "terminated", "next_obs"):
        np.testing.assert_array_equal(items[key], rec[key][t_idx, env_idx], err_msg=key)
    np.testing.assert_array_equal(uniform.staleness(buffer, indices, NUM_STEPS), NUM_STEPS - t_idx)

    # Sampled truncated steps: bootstrap observation is the final obs, and not terminal.
    sampled_trunc = trunc_only[t_idx, env_idx]
    assert sampled_trunc.any()
    assert not items["terminated"][sampled_trunc].any()
    reset_obs = rec["obs_tp1"][t_idx, env_idx]
    assert (items["next_obs"][sampled_trunc] != reset_obs[sampled_trunc]).any(axis=-1).all()


# --------------------------------------------------------------------------------------------
# Prioritized buffer
# --------------------------------------------------------------------------------------------


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
            idx = jax.random.randint(idx_key, (6,), 0, state.size)
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
    np.testing.assert_array_equal(state.data["id"], [100, 101, 2, 3])
    np.testing.assert_array_equal(state.added_at, [9, 9, 0, 0])
    assert int(state.position) == 2 and int(state.size) == 4
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


# --------------------------------------------------------------------------------------------
# n-step window
# --------------------------------------------------------------------------------------------


def ref_nstep(rows: dict, gamma: float, n: int) -> dict:
    """Slow reference: the n-step transition starting at every s <= T - n, per env."""
    T, N = rows["reward"].shape
    out = {k: [] for k in ("obs", "action", "reward", "discount", "terminated", "next_obs")}
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
        for k in out:
            out[k].append(np.array(per_env[k]))
    return {k: np.stack(v) for k, v in out.items()}


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
    rows = nstep.StepRow(**rows)
    window = nstep.window_init(jax.tree.map(lambda x: x[0], rows), n)

    def body(window, row):
        window, item, valid = nstep.push(window, row, gamma)
        return window, (item, valid)

    return jax.lax.scan(body, window, rows)[1]


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_nstep_window_matches_reference(n):
    gamma = 0.9
    for seed in range(3):
        rows = random_rows(seed)
        items, valid = run_window(rows, gamma, n)
        np.testing.assert_array_equal(valid, np.arange(len(valid)) >= n - 1)
        emitted = jax.tree.map(lambda x: np.asarray(x)[n - 1 :], items)
        expected = ref_nstep(rows, gamma, n)
        for key in ("obs", "action", "terminated", "next_obs"):
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
    row = nstep.StepRow(*(jnp.zeros(2),) * 6)
    with pytest.raises(ValueError, match="n must be"):
        nstep.window_init(row, 0)


# --------------------------------------------------------------------------------------------
# vmap over seeds: per-seed results equal running each seed alone
# --------------------------------------------------------------------------------------------


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
    items, indices = uniform.sample(state, sample_key, 16)
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

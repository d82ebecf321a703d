"""The uniform replay buffer: order and wrap-around, capacity, uniform sampling over valid slots,
and transition alignment on a real env (every sample a recorded (s_t, a_t, r_t, s_{t+1})).
Prioritized replay, the n-step window and vmap over seeds have their own files here."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

import envs
from jaxrl.parts.buffers import uniform
from tests.parts.buffers.items import EXAMPLE_ITEM, make_items, u_add, u_sample

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
    items, indices, weights = u_sample(state, jax.random.key(0), 4000)
    indices = np.asarray(indices)
    assert indices.dtype == np.int32 and indices.shape == (4000,)
    # the buffer protocol: importance weights always come back; uniform ones are all 1
    assert weights.dtype == jnp.float32 and weights.shape == (4000,)
    np.testing.assert_array_equal(weights, np.ones(4000))
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
    items, indices, _ = u_sample(buffer, jax.random.key(2), 512)
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

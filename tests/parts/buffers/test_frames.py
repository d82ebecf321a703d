"""The frame store gives back exactly the stacks the n-step window emitted: observations and
true next observations, across resets (zero-filled new stacks), terminations that do not reset
(a lost life), truncations, and the ring wrapping around; a stacking it cannot rebuild is
counted, not hidden."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxrl.parts.buffers import frames, nstep, uniform
from jaxrl.parts.transition import Transition

H, W, S = 3, 2, 4


def stacked_rollout(seed: int, T: int = 40, N: int = 5) -> dict:
    """Rows ``[T, N, ...]`` of an env that stacks its last S frames (k * STEP) like `envs.atari`: a
    reset starts a zero-filled stack; ``terminated`` without a reset in env 1 (a lost life: the
    game and the stack go on); ``final`` is the true next stack on a reset step."""
    rng = np.random.default_rng(seed)
    new_frame = lambda: rng.integers(1, 256, (H, W)).astype(np.float32) * frames.STEP
    fresh = lambda: np.concatenate([np.zeros((H, W, S - 1), np.float32), new_frame()[..., None]],
                                   axis=-1)
    stacks = [fresh() for _ in range(N)]
    rows = {k: [] for k in ("obs", "action", "reward", "terminated", "truncated", "next_obs")}
    for _ in range(T):
        obs = np.stack(stacks)
        step = {k: [] for k in rows if k != "obs"}
        for b in range(N):
            following = np.concatenate([stacks[b][..., 1:], new_frame()[..., None]], axis=-1)
            terminated, truncated = rng.random() < 0.15, rng.random() < 0.1
            reset = (terminated or truncated) and b != 1  # env 1: terminations keep the game
            step["next_obs"].append(following)
            step["terminated"].append(terminated)
            step["truncated"].append(truncated and b != 1)
            step["action"].append(rng.integers(0, 3))
            step["reward"].append(rng.normal())
            stacks[b] = fresh() if reset else following
        rows["obs"].append(obs)
        for k, v in step.items():
            rows[k].append(np.asarray(v))
    return {k: np.asarray(v) for k, v in rows.items()}


def flat(x):
    return x.reshape(*x.shape[:-3], -1)


@functools.partial(jax.jit, static_argnums=(2, 3))
def replay(rows: dict, gamma: float, n: int, capacity: int):
    """Every row through the window, the frame store and a uniform buffer (as the off-policy
    train step does); returns the plain items, their stored forms decoded, and the mismatch
    counts."""
    T, N = rows["reward"].shape
    ring = frames.ring_rounds(capacity, N, n, S)
    first = Transition(*(jnp.asarray(rows[k][0]) for k in ("obs", "action", "reward",
                                                         "terminated", "truncated", "next_obs")))
    store = frames.init((H, W, S), N, ring)
    item = frames.encode(store, nstep.emit(jax.tree.map(lambda x: x[None], first), 1.0), n)
    buffer = uniform.init(jax.tree.map(lambda x: x[0], item), capacity)

    def one(carry, t):
        window, store, buffer = carry
        row = Transition(*(jnp.asarray(rows[k])[t] for k in ("obs", "action", "reward",
                                                             "terminated", "truncated",
                                                             "next_obs")))
        window, item, valid = nstep.push(window, row, gamma)
        store, mismatches = frames.push(store, row.obs)
        stored = frames.encode(store, item, n)
        buffer = uniform.add(buffer, stored, t, valid)
        # what a batch sampled now would hold for the items just written
        slots = uniform.write_slots(buffer, N) - N
        decoded = frames.decode(store, uniform.gather(buffer, slots % capacity))
        return (window, store, buffer), (item, decoded, valid, mismatches)

    carry = (nstep.window_init(first, n), store, buffer)
    (_, store, buffer), out = jax.lax.scan(one, carry, jnp.arange(T))
    # every item still in the buffer at the end, decoded from the final store
    everything = frames.decode(store, uniform.gather(buffer, jnp.arange(capacity)))
    return out, everything, buffer.position


@pytest.mark.parametrize("n", [1, 3])
def test_decoded_items_are_the_emitted_items(n):
    rows = stacked_rollout(0)
    (items, decoded, valid, mismatches), _, _ = replay(rows, 0.9, n, 64)
    assert int(mismatches.sum()) == 0
    valid = np.asarray(valid)
    assert valid.sum() == len(valid) - (n - 1)
    for key in ("obs", "next_obs"):
        np.testing.assert_array_equal(np.asarray(getattr(decoded, key))[valid],
                                      np.asarray(getattr(items, key))[valid], err_msg=key)
    for key in ("action", "reward", "discount", "terminated", "steps"):
        np.testing.assert_array_equal(np.asarray(getattr(decoded, key))[valid],
                                      np.asarray(getattr(items, key))[valid], err_msg=key)


def test_items_still_in_a_wrapped_buffer_decode_after_the_ring_wraps():
    """A buffer of 30 items (6 rounds of 5 envs) over 40 rounds: the ring (6 + 3 + 4 rounds)
    has wrapped three times; every item left decodes to what was emitted."""
    n, capacity, T, N = 3, 30, 40, 5
    rows = stacked_rollout(1, T=T, N=N)
    (items, _, _, _), everything, position = replay(rows, 0.9, n, capacity)
    emitted = jax.tree.map(lambda x: np.asarray(x)[n - 1:].reshape(-1, *x.shape[2:]), items)
    count = len(emitted.reward)
    # slot i holds emitted item j with j = count - capacity + ((i - position) mod capacity)
    order = (np.arange(capacity) - int(position)) % capacity + count - capacity
    for key in ("obs", "next_obs", "reward", "steps"):
        np.testing.assert_array_equal(np.asarray(getattr(everything, key)),
                                      np.asarray(getattr(emitted, key))[order], err_msg=key)


def test_the_store_keeps_two_uint8_frames_per_item():
    store = frames.init((84, 84, 4), 8, frames.ring_rounds(1000, 8, 3, 4))
    assert store.frames.dtype == jnp.uint8 and store.frames.shape == (125 + 3 + 4, 8, 84, 84)
    item = nstep.NStepTransition(obs=jnp.zeros((8, 84, 84, 4)), action=jnp.zeros((8,), jnp.int32),
                                 reward=jnp.zeros((8,)), discount=jnp.zeros((8,)),
                                 terminated=jnp.zeros((8,), bool),
                                 next_obs=jnp.zeros((8, 84, 84, 4)), steps=jnp.ones((8,), jnp.int32),
                                 ended=jnp.zeros((8,), bool))
    stored = frames.encode(store, item, 3)
    assert stored.next_obs.dtype == jnp.uint8 and stored.next_obs.shape == (8, 84, 84)
    assert stored.obs.round.shape == (8,)


def test_a_stacking_it_cannot_rebuild_is_counted():
    """Frames that are not k * STEP, or a new stack that is not zero-filled, do not rebuild:
    the mismatch count says so instead of replaying something else."""
    push = jax.jit(frames.push)
    store = frames.init((H, W, S), 2, 8)
    not_zero_filled = jnp.full((2, H, W, S), 3 * frames.STEP)  # a first stack whose older frames are not 0
    assert int(push(store, not_zero_filled)[1]) == 2
    first = jnp.zeros((2, H, W, S)).at[..., -1].set(3 * frames.STEP)
    store, mismatches = push(store, first)
    assert int(mismatches) == 0
    off_grid = jnp.concatenate([first[..., 1:], jnp.full((2, H, W, 1), 0.5)], axis=-1)
    assert int(push(store, off_grid)[1]) == 2  # 0.5 is no k * STEP: it would come back as 128 * STEP

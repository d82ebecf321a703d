"""ACER's segment frame replay gives back exactly the observations and true next observations of
a segment: across resets (zero-filled new stacks), terminations that do not reset (a lost life)
and truncations; a segment with more resets than room, or a stacking it cannot rebuild, is
counted, not hidden."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxrl.parts.buffers import frames, segment_frames
from tests.parts.buffers.test_frames import S, stacked_rollout

T = 8  # segment length


def segments(rows: dict) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(obs, next_obs, resets)``: the rollout's ``[T_all, N]`` rows cut into segments
    ``[N, K, T, H, W, S]`` per env, and ``[N, K]`` the resets inside each (after its first
    step)."""
    total, n = rows["reward"].shape
    k = total // T
    cut = lambda x: np.swapaxes(x[: k * T], 0, 1).reshape(n, k, T, *x.shape[2:])
    obs, next_obs = cut(rows["obs"]), cut(rows["next_obs"])
    resets = np.any(obs[:, :, 1:] != next_obs[:, :, :-1], axis=(3, 4, 5)).sum(-1)
    return obs, next_obs, resets


def encode_all(obs, next_obs, restarts: int):
    encode = jax.vmap(jax.vmap(lambda o, n: segment_frames.encode(o, n, restarts)))
    return jax.jit(encode)(jnp.asarray(obs), jnp.asarray(next_obs))


@pytest.mark.parametrize("seed", [0, 1])
def test_decoded_segments_are_the_rollouts_observations(seed):
    obs, next_obs, resets = segments(stacked_rollout(seed, T=64, N=5))
    assert resets.max() >= 2 and (resets[1] == 0).all()  # env 1 loses lives, never resets
    stored, mismatch = encode_all(obs, next_obs, restarts=int(resets.max()))
    assert not np.asarray(mismatch).any()
    back_obs, back_next = jax.vmap(jax.vmap(lambda s: segment_frames.decode(s, S)))(stored)
    np.testing.assert_array_equal(np.asarray(back_obs), obs)
    np.testing.assert_array_equal(np.asarray(back_next), next_obs)
    assert np.asarray(stored.stream).dtype == np.uint8


def test_a_segment_with_more_resets_than_room_is_counted():
    obs, next_obs, resets = segments(stacked_rollout(2, T=64, N=5))
    for room in range(int(resets.max()) + 1):
        _, mismatch = encode_all(obs, next_obs, restarts=room)
        np.testing.assert_array_equal(np.asarray(mismatch), resets > room)


def test_the_stream_keeps_a_frame_per_step_and_a_stack_per_start():
    assert segment_frames.stream_length(20, 4, 1) == 28  # ACER's Atari segments: 1.4 per step
    obs, next_obs, _ = segments(stacked_rollout(3, T=T, N=5))
    stored, _ = encode_all(obs[1:2], next_obs[1:2], restarts=0)  # env 1: no reset
    assert stored.stream.shape[-3:] == (S + T, *obs.shape[-3:-1])
    np.testing.assert_array_equal(np.asarray(stored.obs_at)[0, 0], np.arange(S - 1, S - 1 + T))


def test_a_stacking_it_cannot_rebuild_is_counted():
    obs, next_obs, resets = segments(stacked_rollout(4, T=T, N=5))
    room = int(resets.max())
    # next observations that do not shift the stack by one frame
    _, mismatch = encode_all(obs, next_obs[..., ::-1], restarts=room)
    assert np.asarray(mismatch).all()
    # frames that are not k * STEP: the uint8 form would round them
    _, mismatch = encode_all(obs + 0.3 * frames.STEP, next_obs + 0.3 * frames.STEP, room)
    assert np.asarray(mismatch).all()

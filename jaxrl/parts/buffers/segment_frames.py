"""Replay of whole segments of stacked image observations, every frame kept once per segment.

ACER replays segments: T consecutive steps of one env, each with its observation and its true
next observation (the final one on a step that ended an episode). With observations that stack
the last ``S`` frames, ``[H, W, S]`` floats ``k * STEP`` (Atari's), the next observation of a
step is its observation shifted by one new frame, and so is the observation of the following
step unless an episode ended in between. A segment is then a *stream* of uint8 frames in which
every observation is a window of ``S`` consecutive frames::

    stream:   a0 a1 a2 a3 | a4 | a5 | ... | a9 | b0 b1 b2 b3 | b4 | ...
              obs_0 whole  next_0 next_1    next_k  obs_k+1 whole (after a reset)
    obs_t      = stream[obs_at[t] - S + 1 .. obs_at[t]]
    next_obs_t = stream[obs_at[t] - S + 2 .. obs_at[t] + 1]

Each step adds one frame (the newest of its next observation); a step whose observation does
not continue the previous step's next observation (the first step, and a reset) adds its whole
stack first. A segment with at most ``restarts`` resets after its first step fits in
``S (1 + restarts) + T`` frames (`stream_length`): 28 frames for ACER's Atari segments (T = 20,
S = 4, one reset), 1.4 frames per step, where obs and next obs kept whole take 8.

    stored, mismatch = segment_frames.encode(obs, next_obs, restarts)   # [T, H, W, S] each
    obs, next_obs = segment_frames.decode(stored)                      # [T, H, W, S] float32

A stored segment lives in the replay buffer itself, so it leaves the buffer with its frames (no
ring to outlive). `encode` checks its own work: it rebuilds every observation of the segment
and ``mismatch`` says whether any differs, a diagnostic that must stay False. It is True for a
segment with more resets than room, for an env whose consecutive stacks do not shift by one
frame, or whose frames are not ``k * STEP``. Pure, jittable and vmappable (over envs, over
sampled segments, over seeds); T, S, the frame shape and ``restarts`` are static.
"""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
from flax import struct

from jaxrl.parts.buffers.frames import from_u8, to_u8

__all__ = ["StoredFrames", "decode", "decode_u8", "encode", "stream_length", "windows"]


@struct.dataclass
class StoredFrames:
    """A segment's observations as kept.

    stream: ``[L, H, W]`` uint8, the segment's frames (`stream_length`; unused slots zero).
    obs_at: ``[T]`` int32, the slot of each step's newest observation frame; the step's next
        observation ends one slot later.
    """

    stream: jax.Array
    obs_at: jax.Array


def stream_length(num_steps: int, stack: int, restarts: int) -> int:
    """Frames a segment of ``num_steps`` steps of ``stack``-frame observations keeps, with room
    for ``restarts`` resets after its first step."""
    return stack * (1 + restarts) + num_steps


def windows(stream: jax.Array, ends: jax.Array, stack: int) -> jax.Array:
    """``[K, H, W, stack]``: the stacks ending at slots ``ends`` ``[K]`` of ``stream``
    ``[L, H, W]``, oldest frame first."""
    slots = ends[:, None] + jnp.arange(1 - stack, 1)  # [K, S]
    return jnp.moveaxis(stream[slots], 1, -1)


def encode(obs: jax.Array, next_obs: jax.Array, restarts: int
           ) -> tuple[StoredFrames, jax.Array]:
    """The stored form of one env's segment: ``obs`` and ``next_obs`` ``[T, H, W, S]`` floats in
    ``[0, 1]``. Returns ``(stored, mismatch)``, ``mismatch`` ``[]`` bool: some observation does
    not come back exactly (see the module docstring)."""
    chex.assert_equal_shape([obs, next_obs])
    chex.assert_rank(obs, 4)
    t, h, w, s = obs.shape
    length = stream_length(t, s, restarts)
    u, v = to_u8(obs), to_u8(next_obs)
    continues = jnp.all(u[1:] == v[:-1], axis=(1, 2, 3))
    restart = jnp.concatenate([jnp.ones((1,), bool), ~continues])  # [T]
    obs_at = (jnp.cumsum(restart * s) + jnp.arange(t) - 1).astype(jnp.int32)
    # a restarting step's whole stack goes to the S slots ending at obs_at; the others to none
    # (index `length` is out of range, and out-of-range writes are dropped)
    stack_slots = jnp.where(restart[:, None], obs_at[:, None] + jnp.arange(1 - s, 1), length)
    stream = jnp.zeros((length, h, w), jnp.uint8)
    stream = stream.at[stack_slots].set(jnp.moveaxis(u, -1, 1), mode="drop")
    stream = stream.at[obs_at + 1].set(v[..., -1], mode="drop")
    stored = StoredFrames(stream=stream, obs_at=obs_at)
    back_obs, back_next = decode_u8(stored, s)
    mismatch = (jnp.any(back_obs != u) | jnp.any(back_next != v) | (obs_at[-1] + 1 >= length)
                | jnp.any(from_u8(u) != obs) | jnp.any(from_u8(v) != next_obs))
    return stored, mismatch


def decode_u8(stored: StoredFrames, stack: int) -> tuple[jax.Array, jax.Array]:
    """``(obs, next_obs)`` ``[T, H, W, stack]`` uint8 of one stored segment."""
    return (windows(stored.stream, stored.obs_at, stack),
            windows(stored.stream, stored.obs_at + 1, stack))


def decode(stored: StoredFrames, stack: int) -> tuple[jax.Array, jax.Array]:
    """``(obs, next_obs)`` ``[T, H, W, stack]`` float32 ``k * STEP`` of one stored segment, the
    exact observations given to `encode` (when it reported no mismatch)."""
    obs, next_obs = decode_u8(stored, stack)
    return from_u8(obs), from_u8(next_obs)

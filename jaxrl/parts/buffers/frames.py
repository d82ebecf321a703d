"""Replay of stacked image observations that keeps every frame once, as uint8.

An Atari observation is a stack of the last ``S`` frames, ``[H, W, S]`` float32 in ``[0, 1]``
(``k * STEP``, ``STEP = float32(1 / 255)``), and the stack of step ``t + 1`` is the stack of
step ``t`` shifted by one new frame. A replay item that holds ``obs`` and ``next_obs`` whole costs ``2 S`` float32 frames;
with a `FrameStore` beside the replay buffer it costs two uint8 frames (1/16: a 250k-item
Atari buffer needs 3.5 GB instead of 56 GB):

* every env-step round, `push` writes the newest frame of each env's observation (uint8) into
  a ring of ``R`` rounds, with the stack's *age* (how many of its older frames came before it
  in the ring, up to ``S - 1``);
* `encode` turns an n-step item into a `FrameRef` (the round of its first step and its env)
  plus the newest frame of its next observation (the last frame of a finished episode is in no
  later round);
* `decode` rebuilds whole stacks for a sampled batch: ``obs`` from the ring, ``next_obs`` as
  the stack of the item's last step shifted by ``next_frame``.

    store = frames.init((H, W, S), num_envs=N, rounds=R)
    store, mismatches = frames.push(store, obs)               # obs [N, H, W, S], every round
    stored = frames.encode(store, item, n)                     # item: an NStepTransition
    item = frames.decode(store, stored)                        # at sampling time

A stack *continues* the previous one of its env when its frames ``0 .. S-2`` equal the previous
stack's ``1 .. S-1``; otherwise it restarted (a reset), and its frames before the restart are
zeros (ale-py fills a new stack with zeros). `push` rebuilds what it just stored and counts the
envs whose stack differs: ``mismatches`` is a diagnostic that must stay 0 (it is not 0 for an
env that stacks frames another way, or whose frames are not ``k * STEP``).

The ring must outlive the items that point into it: ``R >= ceil(capacity / N) + n + S``
(`ring_rounds`). Pure, jittable and vmappable over seeds; ``R``, ``N`` and the frame shape are
static.
"""

from __future__ import annotations

import dataclasses
from typing import cast

import chex
import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxrl.parts.buffers.nstep import NStepTransition

__all__ = ["FrameRef", "FrameStore", "decode", "encode", "from_u8", "init", "push",
           "rebuild", "ring_rounds", "to_u8"]


@struct.dataclass
class FrameStore:
    """The newest frame of every env's observation over the last ``R`` rounds.

    frames: ``[R, N, H, W]`` uint8; round ``r`` is in row ``r % R``.
    age: ``[R, N]`` int32, ``min(S - 1, frames of the stack that precede it in the ring)``.
    last: ``[N, H, W, S]`` uint8, the stacks pushed last (to tell a continued stack from a
        restarted one).
    rounds: ``[]`` int32, rounds pushed so far.
    """

    frames: jax.Array
    age: jax.Array
    last: jax.Array
    rounds: jax.Array


@struct.dataclass
class FrameRef:
    """Where an item's first observation is: ``round`` ``[K]`` int32 and ``env`` ``[K]``
    int32."""

    round: jax.Array
    env: jax.Array


def ring_rounds(capacity: int, num_envs: int, n: int, stack: int) -> int:
    """Rounds the ring must keep for a replay buffer of ``capacity`` items written ``num_envs``
    at a time by an ``n``-step window: every stored item's rounds and its ``stack - 1`` older
    frames."""
    return -(-capacity // num_envs) + n + stack


STEP = np.float32(1 / 255)  # a frame value is k * STEP (float32), as `envs.atari` makes it


def to_u8(obs: jax.Array) -> jax.Array:
    """``[0, 1]`` floats to uint8 ``round(255 x)`` (the ``k`` of ``k * STEP``)."""
    return jnp.round(jnp.clip(obs, 0.0, 1.0) * 255.0).astype(jnp.uint8)


def from_u8(frames: jax.Array) -> jax.Array:
    """uint8 ``k`` to float32 ``k * STEP``, the exact values of the env's frames."""
    return frames.astype(jnp.float32) * STEP


def init(frame_shape: tuple[int, int, int], num_envs: int, rounds: int) -> FrameStore:
    """An empty store for observations ``[H, W, S]`` of ``num_envs`` envs, ``rounds`` deep."""
    h, w, s = frame_shape
    return FrameStore(
        frames=jnp.zeros((rounds, num_envs, h, w), jnp.uint8),
        age=jnp.zeros((rounds, num_envs), jnp.int32),
        last=jnp.zeros((num_envs, h, w, s), jnp.uint8),
        rounds=jnp.zeros((), jnp.int32),
    )


def rebuild(store: FrameStore, rounds: jax.Array, envs: jax.Array) -> jax.Array:
    """``[K, H, W, S]`` uint8: the stacks pushed at ``rounds`` ``[K]`` by ``envs`` ``[K]``
    (rounds still in the ring)."""
    ring, stack = store.frames.shape[0], store.last.shape[-1]
    age = store.age[rounds % ring, envs]
    columns = []
    for back in range(stack - 1, -1, -1):  # oldest frame first
        frame = store.frames[(rounds - back) % ring, envs]
        columns.append(jnp.where((back <= age)[:, None, None], frame, jnp.uint8(0)))
    return jnp.stack(columns, axis=-1)


def push(store: FrameStore, obs: jax.Array) -> tuple[FrameStore, jax.Array]:
    """Store this round's observations ``[N, H, W, S]`` (floats in ``[0, 1]``). Returns the
    store and ``[]`` int32 the number of envs whose stack does not rebuild exactly (0 when the
    env stacks frames as the module docstring says)."""
    chex.assert_shape(obs, store.last.shape)
    ring, stack = store.frames.shape[0], store.last.shape[-1]
    new = to_u8(obs)
    continues = jnp.all(new[..., :-1] == store.last[..., 1:], axis=(1, 2, 3))
    continues &= store.rounds > 0
    previous_age = store.age[(store.rounds - 1) % ring]
    age = jnp.where(continues, jnp.minimum(previous_age + 1, stack - 1), 0)
    row = store.rounds % ring
    store = FrameStore(frames=store.frames.at[row].set(new[..., -1]),
                       age=store.age.at[row].set(age), last=new, rounds=store.rounds + 1)
    envs = jnp.arange(new.shape[0], dtype=jnp.int32)
    rebuilt = rebuild(store, jnp.full_like(envs, store.rounds - 1), envs)
    wrong = jnp.any(rebuilt != new, axis=(1, 2, 3)) | jnp.any(from_u8(new) != obs, axis=(1, 2, 3))
    mismatches = jnp.sum(wrong).astype(jnp.int32)
    return store, mismatches


def encode(store: FrameStore, item: NStepTransition, n: int) -> NStepTransition:
    """The replay form of the n-step item the window emitted in the round just pushed (its
    first step was pushed ``n - 1`` rounds before): ``obs`` becomes a `FrameRef` and
    ``next_obs`` the newest frame ``[N, H, W]`` uint8 of the true next observation
    (``[N, H, W, S]`` floats in)."""
    envs = jnp.arange(item.reward.shape[0], dtype=jnp.int32)
    first = jnp.full_like(envs, store.rounds - n)
    ref = cast(jax.Array, FrameRef(round=first, env=envs))  # the obs slot holds the reference
    return dataclasses.replace(item, obs=ref,
                               next_obs=to_u8(item.next_obs[..., -1]))


def decode(store: FrameStore, stored: NStepTransition) -> NStepTransition:
    """Whole stacks again for sampled items (leaves ``[K, ...]``): ``obs`` and ``next_obs``
    ``[K, H, W, S]`` float32. ``next_obs`` is the stack of the item's last step, shifted by
    its stored newest frame."""
    ref = cast(FrameRef, stored.obs)  # what `encode` put in the obs slot
    obs = rebuild(store, ref.round, ref.env)
    last = rebuild(store, ref.round + stored.steps - 1, ref.env)
    next_obs = jnp.concatenate([last[..., 1:], stored.next_obs[..., None]], axis=-1)
    return dataclasses.replace(stored, obs=from_u8(obs), next_obs=from_u8(next_obs))

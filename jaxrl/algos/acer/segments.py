"""ACER's segments: as a rollout collects them and as the segment replay keeps them.

A `Segment` is consecutive steps of envs with the probabilities ``mu`` each action was drawn
from: ``[T, N, ...]`` as collected (time-major, as the update reads it), ``[N, T, ...]`` as
replay items. The replay keeps one of three forms of the observations (`to_replay`, and
`from_replay` back to floats):

* float32 as collected;
* uint8 with ``uint8_replay`` (observations ``k / 255``), a quarter of the memory;
* with ``frame_replay``, a `FrameSegment`: stacked image observations (Atari's) as one stream
  of uint8 frames per segment (`jaxrl.parts.buffers.segment_frames`), where obs and next obs are
  windows of it: ``S (1 + segment_restarts) + T`` frames instead of ``2 S T``.

Every form gives back exactly the floats collected (tested).
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
from flax import struct

from jaxrl.algos.acer.config import ACERStatic
from jaxrl.parts.buffers import frames, segment_frames
from jaxrl.parts.transition import Transition

__all__ = ["FrameSegment", "Segment", "from_replay", "replay_example", "to_replay", "transpose"]


@struct.dataclass
class Segment(Transition):
    """Consecutive steps of one env as replayed: the `Transition` fields with leaves
    ``[T, ...]`` (``[N, T, ...]`` for a rollout's N envs, ``[T, B, ...]`` time-major in an
    update), and ``mu`` ``[.., A]``, the probabilities each action was drawn from."""

    mu: jax.Array


@struct.dataclass
class FrameSegment:
    """A `Segment` as ``frame_replay`` keeps it (leaves ``[T, ...]``, ``[B, T, ...]`` batched):
    its observations and true next observations in one `segment_frames.StoredFrames`, the other
    fields as they are."""

    frames: segment_frames.StoredFrames
    action: jax.Array
    reward: jax.Array
    terminated: jax.Array
    truncated: jax.Array
    mu: jax.Array


def replay_example(num_steps: int, obs_dim: int, num_actions: int, static: ACERStatic,
                   shape: tuple[int, int, int] | None) -> Segment | FrameSegment:
    """One replay item of zeros (leaves ``[T, ...]``), the storage example of the buffer."""
    t = num_steps
    example = Segment(obs=jnp.zeros((t, 1, obs_dim)), action=jnp.zeros((t, 1), jnp.int32),
                      reward=jnp.zeros((t, 1)), terminated=jnp.zeros((t, 1), bool),
                      truncated=jnp.zeros((t, 1), bool), next_obs=jnp.zeros((t, 1, obs_dim)),
                      mu=jnp.zeros((t, 1, num_actions)))
    item, _ = to_replay(example, static, shape)
    return jax.tree.map(lambda x: x[0], item)


def to_replay(segments: Segment, static: ACERStatic, shape: tuple[int, int, int] | None
              ) -> tuple[Segment | FrameSegment, jax.Array]:
    """A rollout ``[T, N]`` as replay items ``[N, T]``, and ``[]`` int32 the segments whose
    observations would not come back exactly (0 but with ``frame_replay``). Observations become
    uint8 with ``uint8_replay``; with ``frame_replay`` (``shape`` the stacks' ``(H, W, S)``)
    the items are `FrameSegment` s."""
    items = transpose(segments)
    if static.uint8_replay:
        items = dataclasses.replace(items, obs=frames.to_u8(items.obs),
                                    next_obs=frames.to_u8(items.next_obs))
    if shape is None:
        return items, jnp.zeros((), jnp.int32)
    view = lambda x: x.reshape(*x.shape[:2], *shape)
    encode = lambda obs, next_obs: segment_frames.encode(obs, next_obs, static.segment_restarts)
    stored, mismatch = jax.vmap(encode)(view(items.obs), view(items.next_obs))
    kept = FrameSegment(stored, items.action, items.reward, items.terminated, items.truncated,
                        items.mu)
    return kept, jnp.sum(mismatch).astype(jnp.int32)


def from_replay(items: Segment | FrameSegment, static: ACERStatic,
                shape: tuple[int, int, int] | None) -> Segment:
    """Sampled items ``[B, T]`` as a time-major batch ``[T, B]`` of flat float observations."""
    if isinstance(items, FrameSegment):
        assert shape is not None
        obs, next_obs = jax.vmap(lambda s: segment_frames.decode(s, shape[-1]))(items.frames)
        flat = lambda x: x.reshape(*x.shape[:2], -1)
        items = Segment(flat(obs), items.action, items.reward, items.terminated, items.truncated,
                        flat(next_obs), items.mu)
    elif static.uint8_replay:
        items = dataclasses.replace(items, obs=frames.from_u8(items.obs),
                                    next_obs=frames.from_u8(items.next_obs))
    return transpose(items)


def transpose(segments: Segment) -> Segment:
    """``[T, B, ...]`` <-> ``[B, T, ...]``: a rollout into replay items, sampled items into a
    time-major batch."""
    return jax.tree.map(lambda x: jnp.swapaxes(x, 0, 1), segments)

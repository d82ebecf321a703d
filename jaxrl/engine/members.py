"""The member axis: the leading axis of every compiled program (configs x seeds)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxrl.ops.lockstep import MEMBER_AXIS


def seed_keys(seed: int, seeds: int) -> jax.Array:
    """The per-seed keys ``[seeds]`` a run with root ``seed`` uses (to reproduce a seed with
    `jaxrl.make_train`)."""
    return jax.random.split(jax.random.fold_in(jax.random.key(seed), 0), seeds)


@dataclasses.dataclass(frozen=True)
class Members:
    """The leading axis of one compiled program: ``len(configs) x seeds`` members, config-major
    (member ``i * seeds + j`` is config ``i``, seed ``j``). All configs share their static
    fields; seed ``j`` of every config gets key ``j`` of `seed_keys(seed, seeds)`, so config
    ``i``'s results are those of a separate `train` run with the same root seed."""

    configs: tuple
    seeds: int
    seed: int = 0

    @property
    def size(self) -> int:
        return len(self.configs) * self.seeds

    def keys(self) -> jax.Array:  # [members]
        return jnp.concatenate([seed_keys(self.seed, self.seeds)] * len(self.configs))

    def eval_keys(self) -> jax.Array:  # [members]
        keys = jax.random.split(jax.random.fold_in(jax.random.key(self.seed), 1), self.seeds)
        return jnp.concatenate([keys] * len(self.configs))

    def hparams(self):
        """Every member's traced hyperparameters: the configs' hparams pytrees stacked, each
        leaf ``[members]``."""
        stacked = jax.tree.map(lambda *xs: jnp.stack(xs), *[c.hparams() for c in self.configs])
        return jax.tree.map(lambda x: jnp.repeat(x, self.seeds, axis=0), stacked)

    def of_config(self, tree, i: int):
        """Config ``i``'s slice ``[seeds, ...]`` of a member-batched pytree."""
        return jax.tree.map(lambda x: x[i * self.seeds:(i + 1) * self.seeds], tree)


def member_sharding(count: int, shard: bool):
    """``(sharding, padded_count)`` for a program of ``count`` members: with several local
    devices (and ``shard``) the member axis is split over ``min(devices, count)`` of them,
    padded up to a multiple of that (the padding repeats the last member and is dropped from
    results). One member stays on one device: splitting it would only add padding work."""
    devices = jax.local_devices()[:count]
    if not shard or len(devices) < 2:
        return None, count
    mesh = jax.sharding.Mesh(np.array(devices), ("members",))
    padded = -(-count // len(devices)) * len(devices)
    return jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("members")), padded


def describe_devices(sharding) -> str:
    """``"N x platform"`` for the devices a program's members run on."""
    if sharding is None:
        return f"1 x {jax.local_devices()[0].platform}"
    devices = sorted(sharding.device_set, key=lambda d: d.id)
    return f"{len(devices)} x {devices[0].platform}"


def pad_members(tree, count: int):
    """Grow the leading (member) axis of every leaf to ``count`` by repeating the last member."""
    def pad(x):
        extra = count - x.shape[0]
        return x if extra == 0 else jnp.concatenate([x, jnp.repeat(x[-1:], extra, axis=0)])

    return jax.tree.map(pad, tree)


def take_members(tree, count: int):
    """Drop the padding members (no copy when there is none)."""
    return jax.tree.map(lambda x: x if x.shape[0] == count else x[:count], tree)


def over_members(fn: Callable, members: int) -> Callable:
    """``fn`` mapped over the leading member axis of every argument and result.

    Several members are vmapped. A single member runs unbatched, with the axis taken off the
    arguments and put back on the results: XLA's CPU program for a size-1 batch axis is
    about 7% slower per PPO update than the plain one (measured in-process, interleaved).
    The map is named `MEMBER_AXIS` (`jaxrl.ops.lockstep.any_member`)."""
    if members > 1:  # named, so that a step can branch on a flag all members share
        return jax.vmap(fn, axis_name=MEMBER_AXIS)

    def single(*args):
        out = fn(*jax.tree.map(lambda x: x[0], args))
        return jax.tree.map(lambda x: x[None], out)

    return single


@dataclasses.dataclass
class Placed:
    """A group's members laid out on its devices: keys, evaluation keys and numeric
    hyperparameters ``[padded members]``, and ``place`` (host array -> its sharding)."""

    members: Members
    padded: int
    sharding: Any
    keys: Any
    eval_keys: Any
    hparams: Any

    def place(self, x):
        return jax.device_put(x, self.sharding) if self.sharding else x

    def chunk_index(self, c: int):
        """``[padded]`` chunk index ``c``, for the evaluation keys."""
        return self.place(np.full(self.padded, c, np.int32))

"""A memory plan made before anything is compiled: will ``members`` train states fit?

The driver trains every member (seed x config) in one vmapped program, so a request such as
"10,000 seeds of SAC with a 10M-transition replay buffer" asks for terabytes that no device
has. XLA would find out only after a long compile, with an opaque allocation error. This
module answers first, in well under a second:

    est = memory.check(algorithm, config, env, env_params, members=seeds)   # or raises
    est.describe()      # "8 members on 1 device: 1.2 MiB per member (...) -> 9.5 MiB per device"

How the figures are made
------------------------
* ``state_bytes`` is exact: ``jax.eval_shape`` runs the algorithm's ``init`` abstractly (it is
  traced, never compiled or executed, so a replay buffer of any size costs no memory) and the
  leaf shapes and dtypes of the resulting state are summed.
* The rest is the algorithm family's **memory model**, stated by the family next to its train
  step and named by the registry (`jaxrl.algos.Algorithm.memory_model`):
  ``memory_model(config, abstract_state, obs_bytes, action_bytes) -> Footprint``, i.e.
  ``replay_bytes`` (the part of the state that is replay buffer: 0 on-policy, the off-policy
  state's ``buffer``) and the working set of one train step, an estimate from the config's
  shape fields, the observation / action sizes and the networks' widths (`activation_units`).
  See `jaxrl.algos.onpolicy.memory_model` and `jaxrl.algos.offpolicy.memory_model` for the
  terms. The working set is deliberately generous, and ``transient_bytes`` multiplies it (plus
  `METRICS_ALLOWANCE`) by `TRANSIENT_MARGIN`.
* One member needs ``STATE_COPIES * state_bytes + transient_bytes`` (`MemoryEstimate.per_member`):
  the driver donates the train state to the chunk program, which updates it in place (the
  scan carry that becomes the output state takes over the input's buffers), so one copy.
* Members are split evenly over ``devices``; the busiest device holds ``ceil(members /
  devices)`` of them (`MemoryEstimate.per_device`).

Device capacity (`device_capacity_bytes`): accelerators report ``bytes_limit`` (the allocator's
limit, i.e. after XLA's preallocation fraction); the CPU backend has the physical RAM, shared by
its local devices. ``$JAXRL_DEVICE_MEMORY_BYTES`` overrides both (per device).
"""

from __future__ import annotations

import dataclasses
import math
import os
from typing import Any

import jax
import numpy as np

from jaxrl.config import ConfigError
from jaxrl.parts.torsos import CONV_TORSOS, conv_units

__all__ = [
    "MEMORY_ENV_VAR",
    "STATE_COPIES",
    "TRANSIENT_MARGIN",
    "Footprint",
    "MemoryEstimate",
    "MemoryPlanError",
    "activation_units",
    "check",
    "device_capacity_bytes",
    "estimate",
    "format_bytes",
    "tree_bytes",
]

MEMORY_ENV_VAR = "JAXRL_DEVICE_MEMORY_BYTES"

STATE_COPIES = 1
"""Copies of the train state alive while a chunk runs: the chunk program takes over the input
state's buffers (donated), so the scan carry and the output state are the input's memory (the
ACER Atari preset's 5.9 GB replay: 7.4 GB peak for a seed on the CPU, 13.2 GB before)."""

TRANSIENT_MARGIN = 2
"""Safety factor on the summed working-set terms (XLA keeps some intermediates alive longer
than the minimum, fuses less than hoped, pads, ...)."""

LEARNER_TEMPORARIES = 3
"""Copies of the learner (params, target params, optimizer states) alive in an update: the new
values, the gradients / optimizer updates / TRPO's conjugate-gradient vectors, and the selects
that keep the old values (off-policy warm-up)."""

ACTIVATION_STORE = 3
"""Floats kept per unit and sample for a gradient: pre-activation, activation and its gradient."""

OFF_POLICY_PASSES = 2
"""Network passes with gradients alive together in an off-policy learning step (of the critic
update, the actor update, the target computation and the critics at the actor's actions,
which XLA runs largely one after another)."""

INFO_BYTES = 16
"""Per env step: the episode statistics stacked by a rollout (return, length, done, spare)."""

METRICS_ALLOWANCE = 64 * 1024
"""Per member: metrics stacked over a chunk of updates (a few dozen floats per update)."""


class MemoryPlanError(ConfigError):
    """The requested members do not fit in device memory. One-line message with the figures."""


@dataclasses.dataclass(frozen=True)
class Footprint:
    """What an algorithm family's memory model says about one member (bytes).

    replay_bytes: the part of the train state that is replay buffer (0 for on-policy).
    working_bytes: the working set of one train step (rollout or sampled batch, activations,
        gradients, learner temporaries), before `TRANSIENT_MARGIN`.
    """

    replay_bytes: int
    working_bytes: int


@dataclasses.dataclass(frozen=True)
class MemoryEstimate:
    """Device memory of a multi-member training program (all sizes in bytes).

    members: members (seeds x configs) in the program.
    devices: devices the members are split evenly over.
    state_bytes: one member's train state (exact: params, optimizer states, replay buffer, env
        states, normalizers, keys, counters, hyperparameters).
    replay_bytes: the part of ``state_bytes`` that is replay buffer (0 for on-policy).
    transient_bytes: one member's working set inside a train step (rollout or sampled batch,
        activations, gradients), a deliberately generous estimate (margin included).
    """

    members: int
    devices: int
    state_bytes: int
    replay_bytes: int
    transient_bytes: int

    def per_member(self) -> int:
        """Bytes one member occupies while a chunk runs: ``STATE_COPIES`` train states (the
        input, updated in place) plus its working set."""
        return STATE_COPIES * self.state_bytes + self.transient_bytes

    def members_per_device(self) -> int:
        """Members on the busiest device: ``ceil(members / devices)``."""
        return -(-self.members // self.devices)

    def per_device(self) -> int:
        """Bytes needed on the busiest device."""
        return self.members_per_device() * self.per_member()

    def max_members(self, capacity_bytes: int) -> int:
        """The largest member count whose `per_device` fits in ``capacity_bytes`` on each of
        ``devices`` devices (0 if not even one member fits)."""
        return self.devices * max(0, int(capacity_bytes) // self.per_member())

    def replace(self, **changes) -> MemoryEstimate:
        return dataclasses.replace(self, **changes)

    def breakdown(self) -> str:
        """``"replay buffer 382 MiB, rest of state 1.2 MiB, working set 3.0 MiB"``."""
        parts = []
        if self.replay_bytes:
            parts.append(f"replay buffer {format_bytes(self.replay_bytes)}")
            parts.append(f"rest of state {format_bytes(self.state_bytes - self.replay_bytes)}")
        else:
            parts.append(f"state {format_bytes(self.state_bytes)}")
        parts.append(f"working set {format_bytes(self.transient_bytes)}")
        return ", ".join(parts)

    def describe(self) -> str:
        """One line, e.g. ``"8 members on 1 device: 1.2 MiB per member (state 310 KiB, working
        set 640 KiB) -> 9.5 MiB per device"``."""
        devices = f"{self.devices} device" + ("s" if self.devices != 1 else "")
        return (f"{self.members} member{'s' if self.members != 1 else ''} on {devices}: "
                f"{format_bytes(self.per_member())} per member ({self.breakdown()}) -> "
                f"{format_bytes(self.per_device())} per device")


# -- sizes ------------------------------------------------------------------------------------
def format_bytes(n: float) -> str:
    """Binary units, three significant figures at most: ``"364 MiB"``, ``"3.6 TiB"``."""
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            if unit == "B":
                return f"{int(n)} B"
            return f"{n:.0f} {unit}" if abs(n) >= 100 else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def _leaf_bytes(leaf) -> int:
    dtype = leaf.dtype
    if jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key):  # typed keys: their raw key data
        data = jax.eval_shape(jax.random.key_data, jax.ShapeDtypeStruct(leaf.shape, dtype))
        return math.prod(data.shape) * np.dtype(data.dtype).itemsize
    return math.prod(leaf.shape) * np.dtype(dtype).itemsize


def tree_bytes(tree: Any) -> int:
    """Bytes of every array leaf of a pytree (concrete arrays or ``ShapeDtypeStruct``)."""
    return sum(_leaf_bytes(leaf) for leaf in jax.tree.leaves(tree) if hasattr(leaf, "dtype"))


def _key_name(k) -> Any:
    for attr in ("name", "key"):
        if hasattr(k, attr):
            return getattr(k, attr)
    return None


def activation_units(params: Any, config) -> int:
    """Activation units per sample over all networks: the bias elements of every dense layer,
    and each conv torso's feature maps and patch matrices (`torsos.conv_units`)."""
    units = 0
    for path, leaf in jax.tree_util.tree_flatten_with_path(params)[0]:
        if not path or not hasattr(leaf, "shape"):
            continue
        name = _key_name(path[-1])
        if name == "bias":
            units += math.prod(leaf.shape)
        elif name == "conv_0_kernel" and config.torso in CONV_TORSOS:
            units += conv_units(config.torso, int(leaf.shape[-2])) * math.prod(leaf.shape[:-4])
    if units == 0:  # no Dense biases found: assume two networks of the configured widths
        units = 2 * (sum(config.hidden) or 512)
    return units


def _space_floats(space) -> int:
    return max(1, math.prod(space.shape))


# -- the plan ---------------------------------------------------------------------------------
def _abstract_key():
    return jax.ShapeDtypeStruct((), jax.random.key(0).dtype)


def estimate(algorithm, config, env, env_params, members: int, devices: int = 1
             ) -> MemoryEstimate:
    """Size ``members`` train states of ``algorithm`` split over ``devices`` devices.

    The state is sized exactly with ``jax.eval_shape(lambda k: algorithm.init(k, env,
    env_params, config), key)``: abstract evaluation only (no compile, no allocation, so a
    replay buffer of any capacity is free to size). The replay share and the working set come
    from ``algorithm.memory_model``, its family's memory model (see the module docstring)."""
    members, devices = int(members), int(devices)
    if members < 1 or devices < 1:
        raise MemoryPlanError(f"members and devices must be >= 1, got {members} and {devices}")
    state = jax.eval_shape(lambda k: algorithm.init(k, env, env_params, config), _abstract_key())
    obs_b = 4 * _space_floats(env.observation_space(env_params))
    act_b = 4 * _space_floats(env.action_space(env_params))
    footprint = algorithm.memory_model(config, state, obs_b, act_b)
    transient = TRANSIENT_MARGIN * (footprint.working_bytes + METRICS_ALLOWANCE)
    return MemoryEstimate(members, devices, int(tree_bytes(state)), int(footprint.replay_bytes),
                          int(transient))


def _parse_bytes(text: str) -> int:
    try:
        value = float(text.strip().replace("_", ""))
    except ValueError:
        raise MemoryPlanError(f"${MEMORY_ENV_VAR} must be a number of bytes, got {text!r}") \
            from None
    if not value > 0 or not math.isfinite(value):
        raise MemoryPlanError(f"${MEMORY_ENV_VAR} must be a positive number of bytes, got "
                              f"{text!r}")
    return int(value)


def _physical_ram() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def _default_device(device=None):
    return device if device is not None else jax.local_devices()[0]


def device_label(device=None) -> str:
    """``"cpu:0"``, ``"cuda:0"``, ..."""
    device = _default_device(device)
    return f"{device.platform}:{device.id}"


def device_capacity_bytes(device=None, sharing: int | None = None) -> int:
    """Usable memory of one device (default: the first local device), in bytes.

    * ``$JAXRL_DEVICE_MEMORY_BYTES`` when set (any platform; lets users and tests override);
    * GPU / TPU: ``device.memory_stats()["bytes_limit"]`` (the allocator's limit), falling back
      to ``bytes_reservable_limit``, then to the physical RAM if the backend reports neither;
    * CPU: the physical RAM (``SC_PAGE_SIZE * SC_PHYS_PAGES``) divided among the CPU devices
      that share it: ``sharing``, the devices the program runs on (a program on one device of
      two has all of it), or by default all the local CPU devices.
    """
    override = os.environ.get(MEMORY_ENV_VAR, "").strip()
    if override:
        return _parse_bytes(override)
    device = _default_device(device)
    if device.platform != "cpu":
        try:
            stats = device.memory_stats() or {}
        except Exception:  # some backends do not implement memory_stats
            stats = {}
        for name in ("bytes_limit", "bytes_reservable_limit"):
            if stats.get(name):
                return int(stats[name])
        return _physical_ram()
    if sharing is None:
        sharing = sum(1 for d in jax.local_devices() if d.platform == "cpu") or 1
    return _physical_ram() // max(1, sharing)


def check(algorithm, config, env, env_params, members: int, devices: int = 1,
          capacity_bytes: int | None = None, seeds_per_config: int | None = None,
          device=None) -> MemoryEstimate:
    """`estimate`, then raise `MemoryPlanError` if the busiest device would need more than
    ``capacity_bytes`` (default: `device_capacity_bytes` of ``device``, whose RAM, on the CPU,
    the ``devices`` the program runs on share). With
    ``seeds_per_config`` (members = configs x seeds) the message says how many seeds per config
    would fit. Returns the estimate when the plan fits."""
    est = estimate(algorithm, config, env, env_params, members, devices)
    label = device_label(device)
    if capacity_bytes is None:
        capacity_bytes = device_capacity_bytes(device, sharing=devices)
        note = f" (${MEMORY_ENV_VAR})" if os.environ.get(MEMORY_ENV_VAR, "").strip() else ""
    else:
        note = " (capacity given)"
    capacity_bytes = int(capacity_bytes)
    if est.per_device() <= capacity_bytes:
        return est

    name = getattr(algorithm, "name", str(algorithm))
    fit = est.max_members(capacity_bytes)
    spc = int(seeds_per_config) if seeds_per_config else None
    configs = -(-est.members // spc) if spc else 1
    if configs > 1:
        who = f"{configs} configs x {spc} seeds ({est.members} members) of {name}"
        unit = "member"
        fits = f"at most {fit} members fit ({fit // configs} seeds per config)"
    else:
        who = f"{est.members} seed{'s' if est.members != 1 else ''} of {name}"
        unit = "seed"
        fits = f"at most {fit} seed{'s' if fit != 1 else ''} fit"
    where = "per device" if est.devices == 1 else f"per device ({est.devices} devices)"
    raise MemoryPlanError(
        f"memory plan: {who} need ~{format_bytes(est.per_device())} {where} "
        f"({format_bytes(est.per_member())} per {unit}: {est.breakdown()}) but {label} has "
        f"{format_bytes(capacity_bytes)}{note}; {fits}")

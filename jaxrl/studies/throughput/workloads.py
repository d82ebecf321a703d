"""Throughput workloads: what the ladder trains at each member count, read from a YAML file.

A workload is one algorithm on one env in a fixed configuration (the anchor's own, where a
published figure exists), a short fixed budget per member, and the published points it is set
beside::

    name: throughput
    member_counts: [1, 4, 16, 64, 256, 1024, 2048, 4096, 8192]
    workloads:
      - name: ppo-cartpole                  # also the peer's workload name
        algo: ppo
        env: CartPole-v1
        steps_per_member: 32768             # env steps each member trains (a few chunks)
        max_chunk_updates: 16               # updates per jitted chunk
        warmup_chunks: 1                    # chunks left out of the rate (first call, replay fill)
        config: {num_envs: 4, num_steps: 128}
        env_kwargs: {}
        source: where the configuration comes from
        peer: rejax                         # the peer that can run the same workload (optional)
        anchors:
          - {label: PureJaxRL, members: 2048, env_steps_per_second: 1.0e7,
             hardware: one A100, source: ...}

Every problem is one `LadderError` line naming the workload and the key.
"""

from __future__ import annotations

import dataclasses
import fnmatch
from pathlib import Path
from typing import Any

from jaxrl import named_yaml
from jaxrl.config import ConfigError
from jaxrl.repo_data import LADDERS_DIR

__all__ = ["LADDERS_DIR", "MEMBER_COUNTS", "Anchor", "Ladder", "LadderError", "Workload",
           "load_ladder", "select"]

MEMBER_COUNTS = (1, 4, 16, 64, 256, 1024, 2048, 4096, 8192)
_WORKLOAD_KEYS = {"name", "algo", "env", "steps_per_member", "max_chunk_updates",
                  "warmup_chunks", "config", "env_kwargs", "source", "peer", "anchors"}
_ANCHOR_KEYS = {"label", "members", "env_steps_per_second", "hardware", "source"}


class LadderError(ConfigError):
    """A ladder file or request that cannot run. One line, naming the problem."""


@dataclasses.dataclass(frozen=True)
class Anchor:
    """A published throughput point: ``env_steps_per_second`` over ``members`` members."""

    label: str
    members: int
    env_steps_per_second: float
    hardware: str
    source: str


@dataclasses.dataclass(frozen=True)
class Workload:
    """One algorithm and env in a fixed configuration, trained ``steps_per_member`` env steps
    per member at every rung of the ladder."""

    name: str
    algo: str
    env: str
    steps_per_member: int
    max_chunk_updates: int = 16
    warmup_chunks: int = 1
    config: dict = dataclasses.field(default_factory=dict)
    env_kwargs: dict = dataclasses.field(default_factory=dict)
    source: str = ""
    peer: str | None = None
    anchors: tuple[Anchor, ...] = ()

    def scaled(self, budget_scale: float) -> Workload:
        """The same workload with ``budget_scale`` times the steps per member (at least 1)."""
        return dataclasses.replace(self, steps_per_member=max(1, int(self.steps_per_member
                                                                    * budget_scale)))

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class Ladder:
    name: str
    path: str
    member_counts: tuple[int, ...]
    workloads: tuple[Workload, ...]


def _count(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value) \
            or int(value) < 1:
        raise LadderError(f"{what} must be a whole number >= 1, got {value!r}")
    return int(value)


def _mapping(value: Any, what: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise LadderError(f"{what} must be a mapping, got {type(value).__name__}")
    return dict(value)


def _anchor(raw: Any, where: str) -> Anchor:
    if not isinstance(raw, dict):
        raise LadderError(f"{where}: an anchor must be a mapping")
    unknown = sorted(set(raw) - _ANCHOR_KEYS)
    missing = sorted(_ANCHOR_KEYS - set(raw))
    if unknown or missing:
        raise LadderError(f"{where}: anchor keys {', '.join(missing)} missing"
                          if missing else f"{where}: unknown anchor keys {unknown}")
    rate = raw["env_steps_per_second"]
    try:  # YAML 1.1 reads 1.0e7 (no sign in the exponent) as a string
        rate = float(rate) if not isinstance(rate, bool) else None
    except (TypeError, ValueError):
        rate = None
    if rate is None or not rate > 0:
        raise LadderError(f"{where}: env_steps_per_second must be a number > 0, got "
                          f"{raw['env_steps_per_second']!r}")
    return Anchor(str(raw["label"]), _count(raw["members"], f"{where}: members"), rate,
                  str(raw["hardware"]), str(raw["source"]))


def _workload(raw: Any, index: int, file: str) -> Workload:
    if not isinstance(raw, dict):
        raise LadderError(f"{file}: workload {index} must be a mapping")
    where = f"{file}: workload {raw.get('name', index)!r}"
    unknown = sorted(set(raw) - _WORKLOAD_KEYS)
    if unknown:
        raise LadderError(f"{where}: unknown keys {unknown} (known: {sorted(_WORKLOAD_KEYS)})")
    for key in ("name", "algo", "env", "steps_per_member"):
        if key not in raw:
            raise LadderError(f"{where}: '{key}' is required")
    warmup = raw.get("warmup_chunks", 1)
    if isinstance(warmup, bool) or not isinstance(warmup, int) or warmup < 0:
        raise LadderError(f"{where}: warmup_chunks must be a whole number >= 0, got {warmup!r}")
    anchors = raw.get("anchors") or []
    if not isinstance(anchors, list):
        raise LadderError(f"{where}: anchors must be a list")
    return Workload(
        name=str(raw["name"]), algo=str(raw["algo"]), env=str(raw["env"]),
        steps_per_member=_count(raw["steps_per_member"], f"{where}: steps_per_member"),
        max_chunk_updates=_count(raw.get("max_chunk_updates", 16),
                                 f"{where}: max_chunk_updates"),
        warmup_chunks=warmup, config=_mapping(raw.get("config"), f"{where}: config"),
        env_kwargs=_mapping(raw.get("env_kwargs"), f"{where}: env_kwargs"),
        source=str(raw.get("source") or ""),
        peer=None if raw.get("peer") is None else str(raw["peer"]),
        anchors=tuple(_anchor(a, f"{where}, anchor {i}") for i, a in enumerate(anchors)))


def ladder_path(name_or_path: str) -> Path:
    """A ladder by name (``experiments/ladders/NAME.yaml``) or by path."""
    return named_yaml.find(name_or_path, LADDERS_DIR, "ladder", LadderError)


def load_ladder(name_or_path: str = "throughput") -> Ladder:
    """Parse and check a ladder file (one `LadderError` line per problem)."""
    path = ladder_path(name_or_path)
    raw = named_yaml.read(path, "ladder", LadderError)
    if not isinstance(raw, dict) or not isinstance(raw.get("workloads"), list) \
            or not raw["workloads"]:
        raise LadderError(f"ladder {str(path)!r} needs a non-empty 'workloads' list")
    counts = raw.get("member_counts", list(MEMBER_COUNTS))
    if not isinstance(counts, list) or not counts:
        raise LadderError(f"{path.name}: member_counts must be a non-empty list")
    workloads = tuple(_workload(w, i, path.name) for i, w in enumerate(raw["workloads"]))
    names = [w.name for w in workloads]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise LadderError(f"{path.name}: duplicate workload names {duplicates}")
    return Ladder(str(raw.get("name") or path.stem), str(path),
                  tuple(sorted({_count(c, f"{path.name}: member_counts") for c in counts})),
                  workloads)


def select(ladder: Ladder, only: list[str] | None) -> list[Workload]:
    """The workloads whose name matches one of ``only`` (glob patterns; all when empty)."""
    if not only:
        return list(ladder.workloads)
    chosen = [w for w in ladder.workloads if any(fnmatch.fnmatchcase(w.name, p) for p in only)]
    if not chosen:
        raise LadderError(f"no workload of ladder {ladder.name!r} matches {only}; workloads: "
                          f"{', '.join(w.name for w in ladder.workloads)}")
    return chosen

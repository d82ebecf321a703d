"""Environments for jaxrl: one functional, vmappable protocol (see `envs.core`).

The names below load on first use, so that ``import envs.families`` (the family table, which
the CLI's parser reads) does not import JAX."""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

_HOMES = {
    "Environment": "envs.core", "auto_reset": "envs.core",
    "PROBES": "envs.probes", "PROBES_BY_NAME": "envs.probes", "ProbeAnswer": "envs.probes",
    "ProbeEnv": "envs.probes",
    "UnknownEnvironmentError": "envs.registry", "env_family": "envs.registry",
    "make": "envs.registry", "register": "envs.registry",
    "registered_names": "envs.registry",
    "Box": "envs.spaces", "Discrete": "envs.spaces", "Space": "envs.spaces",
    "EpisodeStatistics": "envs.wrappers", "completed_episode_summary": "envs.wrappers",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        value = getattr(importlib.import_module(_HOMES[name]), name)
        globals()[name] = value
        return value
    if importlib.util.find_spec(f"envs.{name}") is not None:  # a submodule: `envs.registry`
        return importlib.import_module(f"envs.{name}")
    raise AttributeError(f"module 'envs' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})

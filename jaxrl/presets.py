"""Named presets: the committed config files under ``presets/``, found by name.

A preset is ``presets/ALGO/NAME.yaml``, a mapping of every config key of the algorithm to its
value, and is named ``ALGO/NAME``:

* ``ALGO/FAMILY`` (``ppo/brax``, ``dqn/atari``): jaxrl's defaults for an env family
  (`jaxrl.algos.families`);
* the named presets of `jaxrl.algos.references`: a reference's own configuration
  (``ppo/baselines-mujoco``, ``sac/spinningup-mujoco``) or a preset jaxrl tuned for one task
  (``ppo/mountaincar``), each key's source in a comment.

Every file is generated from the code (``python -c "from jaxrl.cli.discover import
write_presets; write_presets()"``) and a test holds the committed ones to it, so reading the
file by name is reading the code's preset. The names work wherever a config file does:
``jaxrl train ppo --env brax:hopper --config ppo/baselines-mujoco`` and a benchmark suite
entry's ``preset: ppo/baselines-mujoco`` (its ``config:`` keys apply on top).

This module reads files only (no engine import), so the CLI can resolve a name cheaply.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from jaxrl import named_yaml
from jaxrl.repo_data import PRESETS_DIR

__all__ = ["PRESETS_DIR", "PresetError", "entry_config", "is_name", "load", "names",
           "preset_path"]

_NAME = re.compile(r"^[a-z0-9_]+/[a-z0-9_.-]+$")


class PresetError(ValueError):
    """An unknown or unreadable preset; one line."""


def is_name(text: str) -> bool:
    """Whether ``text`` reads as a preset name (``ALGO/NAME``, no ``.yaml``), not a path."""
    return bool(_NAME.match(text)) and not text.endswith((".yaml", ".yml"))


def names() -> list[str]:
    """Every committed preset's name, sorted."""
    return sorted(f"{p.parent.name}/{p.stem}" for p in PRESETS_DIR.glob("*/*.yaml"))


def preset_path(name: str) -> Path:
    """``presets/ALGO/NAME.yaml`` for ``ALGO/NAME``; `PresetError` naming the algorithm's
    presets when there is no such file."""
    if not is_name(name):
        raise PresetError(f"a preset is named ALGO/NAME (e.g. ppo/baselines-mujoco), got "
                          f"{name!r}")
    path = PRESETS_DIR / f"{name}.yaml"
    if not path.is_file():
        algo = name.split("/")[0]
        known = [n for n in names() if n.startswith(f"{algo}/")]
        hint = f"{algo}'s presets: {', '.join(known)}" if known else f"presets: {', '.join(names())}"
        raise PresetError(f"unknown preset {name!r}; {hint}")
    return path


def load(name: str) -> dict[str, Any]:
    """The config keys of preset ``name``: ``{key: value}`` as YAML reads them (lists for
    tuples; a config's ``replace`` coerces them)."""
    path = preset_path(name)
    data = named_yaml.read(path, "preset", PresetError)
    if not isinstance(data, dict):
        raise PresetError(f"preset {name!r} ({path}) is not a mapping of config keys")
    return data


def entry_config(entry: dict) -> dict[str, Any]:
    """A benchmark suite entry's config keys as it runs them: its ``preset``'s keys (if it
    names one), then its ``config`` overrides on top. The one reading of an entry's config,
    for the suite loader (`jaxrl.studies.bench.suite`) and the reports' staleness check alike."""
    config = entry.get("config") or {}
    if entry.get("preset") is None:
        return dict(config)
    return {**load(str(entry["preset"])), **config}

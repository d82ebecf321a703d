"""A named preset's record (`Preset`) and the helpers the reference modules write them with."""

from __future__ import annotations

import dataclasses
from typing import Any

#: a large gradient-norm bound for references that clip no gradient: it never binds
NO_CLIP = 1.0e6

Keys = dict[str, tuple[Any, str]]  # config key -> (value, where the value comes from)


def sourced(source: str, **values: Any) -> Keys:
    """``values`` each with the one ``source`` they come from."""
    return {key: (value, source) for key, value in values.items()}


@dataclasses.dataclass(frozen=True)
class Preset:
    algo: str
    env: str  # the env the preset is for (its family gives base="family" its defaults)
    title: str  # whose configuration, for what
    keys: Keys
    absent: tuple[str, ...] = ()
    base: str = "class"  # keys not named: "class" (config class defaults) | "family"

    def values(self) -> dict[str, Any]:
        return {key: value for key, (value, _) in self.keys.items()}

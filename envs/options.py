"""The env options that are counts, checked once where options enter (`checked`).

An env option (``envs.make(name, **options)``, ``jaxrl train --env-arg``, a bench entry's
``env_kwargs``) that counts steps, frames or rounds must be a whole number in the int32 range
the programs count in: ``episode_length=.inf`` would otherwise be an ``OverflowError`` deep in
an adapter, ``episode_length=0`` a run in which no evaluation episode ends, and ``2.5`` an
``int()`` that trains 2 while the run records 2.5. A float with a whole value (``2.0``) is
taken as the int (and recorded so). The module imports no JAX (a suite file is checked with it
before anything is built).

The table holds the options the registry and the families' adapters declare: the time limit's
three names (which `jaxrl.parts.evaluate` reads as the time limit of every env), brax's and
Playground's ``action_repeat``, Craftax's ``reset_ratio``, BitFlip's ``n_bits``, the registry's
``prepared_starts`` (0: a reset computed at every step), and the Atari adapter's own.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from collections.abc import Mapping
from typing import Any

INT32_MAX = 2**31 - 1


class EnvOptionError(ValueError):
    """An env option the env does not take, or a value it cannot (one line naming both)."""


@dataclasses.dataclass(frozen=True)
class Count:
    """A whole-number option in ``[least, INT32_MAX]``; ``none_ok``: None (the default) too."""

    least: int = 1
    what: str = "steps"
    none_ok: bool = False

    def allowed(self) -> str:
        low = "a positive whole number" if self.least == 1 else f"a whole number >= {self.least}"
        return f"{low} of {self.what} up to {INT32_MAX}" + (" or null" if self.none_ok else "")


#: Count options every env's options are checked for (names jaxrl gives one meaning).
COUNTS: Mapping[str, Count] = {
    "episode_length": Count(what="agent steps"),
    "time_limit": Count(what="agent steps"),
    "max_steps_in_episode": Count(what="agent steps"),
    "action_repeat": Count(what="physics steps"),
    "reset_ratio": Count(what="envs per prepared reset"),
    "n_bits": Count(what="bits"),
    "prepared_starts": Count(least=0, what="steps between prepared starts"),
}

#: Count options of one family's names (by prefix): names too common to hold for every env.
PREFIX_COUNTS: Mapping[str, Mapping[str, Count]] = {
    "atari:": {"max_frames": Count(what="frames"), "frame_skip": Count(what="frames"),
               "stack": Count(what="frames"), "size": Count(what="pixels"),
               "noop_max": Count(least=0, what="no-op frames"),
               "num_threads": Count(least=0, what="threads", none_ok=True)},
}


def counts_of(env: str) -> dict[str, Count]:
    """The count options of env ``env`` (by name): `COUNTS` and its prefix's `PREFIX_COUNTS`."""
    extra = next((c for p, c in PREFIX_COUNTS.items() if str(env).startswith(p)), {})
    return {**COUNTS, **extra}


def checked(env: str, options: Mapping[str, Any] | None) -> dict | None:
    """``options`` with every count option of ``env`` checked and made an ``int`` (``2.0`` ->
    ``2``); `EnvOptionError` (one line: the option, the value, what is allowed) for a value
    that is not a whole number in range. Other options pass unchanged; None stays None."""
    if options is None:
        return None
    counts = counts_of(env)
    return {k: (_count(k, v, counts[k]) if k in counts else v) for k, v in options.items()}


def _count(name: str, value: Any, count: Count) -> int | None:
    if value is None and count.none_ok:
        return None
    whole = isinstance(value, numbers.Integral) or (
        isinstance(value, numbers.Real) and math.isfinite(value) and value == int(value))
    if isinstance(value, bool) or not whole or not count.least <= value <= INT32_MAX:
        raise EnvOptionError(f"env option {name}={_shown(value)} is not allowed: it must be "
                             f"{count.allowed()}")
    return int(value)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."

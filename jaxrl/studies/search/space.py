"""A search space: which config fields a search tunes and over what, as Optuna distributions.

A space is a mapping ``{field: spec}`` (a YAML file's top level, or a dict), each spec one of

    loguniform(1e-5, 1e-3)   {loguniform: [1e-5, 1e-3]}   a float, uniform in log space
    uniform(0, 0.05)         {uniform: [0, 0.05]}         a float
    int(4, 32)               {int: [4, 32]}               a whole number, bounds included
    intlog(16, 1024)         {intlog: [16, 1024]}         a whole number, uniform in log space
    categorical(a, b, c)     {categorical: [a, b, c]}     one of the values; also a bare list

A categorical value that is not a number, a string, a bool or null (``hidden: [[64, 64], [128,
128]]``) is carried as text (``"64,64"``), which the config reads back like a ``--set`` value.
Every field must be one of the algorithm's config fields, and both ends of every range a value
the config accepts: a bad space is one line (`SpaceError`) before anything trains.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

import optuna.distributions as od

from jaxrl.config import ConfigError
from jaxrl.studies.sweep.runner import split_values

KINDS = ("loguniform", "uniform", "int", "intlog", "categorical")
_CALL = re.compile(r"\s*(\w+)\s*\((.*)\)\s*", re.S)


class SpaceError(ConfigError):
    """A search space that cannot be searched (one line naming the field and why)."""


def parse_space(space: Mapping[str, Any], config=None) -> dict[str, od.BaseDistribution]:
    """``{field: Optuna distribution}`` of a space (module docstring); with ``config`` (the
    algorithm's default config), every field is checked to be one of its fields and every
    range end a value it accepts."""
    if not isinstance(space, Mapping) or not space:
        raise SpaceError(f"a search space is a non-empty mapping of config fields to "
                         f"distributions, got {type(space).__name__}")
    parsed = {str(name): distribution(str(name), spec) for name, spec in space.items()}
    if config is not None:
        for name, dist in parsed.items():
            check_field(config, name, dist)
    return parsed


def distribution(name: str, spec: Any) -> od.BaseDistribution:
    """The Optuna distribution of field ``name``'s ``spec`` (a call string, a one-key mapping
    or a list of categories)."""
    kind, args, log = _kind_and_args(name, spec)
    if kind == "categorical":
        if not args:
            raise SpaceError(f"search space {name}: categorical needs at least one value")
        return od.CategoricalDistribution([_category(v) for v in args])
    if len(args) != 2:
        raise SpaceError(f"search space {name}: {kind} takes two bounds, got {len(args)}")
    low, high = (_number(name, kind, a) for a in args)
    if kind in ("int", "intlog"):
        if low != int(low) or high != int(high):
            raise SpaceError(f"search space {name}: {kind} bounds must be whole numbers, got "
                             f"{args[0]!r} and {args[1]!r}")
        low, high = int(low), int(high)
    log = log or kind in ("loguniform", "intlog")
    if not low < high or (log and low <= 0):
        need = "0 < low < high" if log else "low < high"
        raise SpaceError(f"search space {name}: {kind}({args[0]}, {args[1]}) needs {need}")
    if kind in ("int", "intlog"):
        return od.IntDistribution(low, high, log=log)
    return od.FloatDistribution(low, high, log=log)


def _kind_and_args(name: str, spec: Any) -> tuple[str, list, bool]:
    """``(kind, arguments, log)`` of one field's spec."""
    if isinstance(spec, (list, tuple)):
        return "categorical", list(spec), False
    if isinstance(spec, str):
        match = _CALL.fullmatch(spec)
        if match is None or match.group(1) not in KINDS:
            raise SpaceError(f"search space {name}: {spec!r} is not one of "
                             + ", ".join(f"{k}(...)" for k in KINDS))
        return match.group(1), split_values(match.group(2)), False
    if isinstance(spec, Mapping):
        kinds = [k for k in spec if k in KINDS]
        extra = sorted(set(map(str, spec)) - set(KINDS) - {"log"})
        if len(kinds) != 1 or extra:
            raise SpaceError(f"search space {name}: a mapping names one of {', '.join(KINDS)} "
                             f"(and optionally log: true), got {sorted(map(str, spec))}")
        args = spec[kinds[0]]
        if not isinstance(args, (list, tuple)):
            raise SpaceError(f"search space {name}: {kinds[0]} takes a list, got {args!r}")
        log = spec.get("log", False)
        if not isinstance(log, bool):
            raise SpaceError(f"search space {name}: log must be true or false, got {log!r}")
        return kinds[0], list(args), log
    raise SpaceError(f"search space {name}: expected a distribution such as 'loguniform(1e-5, "
                     f"1e-3)', got {type(spec).__name__}")


def _number(name: str, kind: str, value: Any) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise SpaceError(f"search space {name}: {kind} bounds must be numbers, got "
                         f"{value!r}") from None
    if not math.isfinite(x) or isinstance(value, bool):
        raise SpaceError(f"search space {name}: {kind} bounds must be finite numbers, got "
                         f"{value!r}")
    return x


def _category(value: Any):
    """A categorical value as Optuna keeps it: scalars as they are, anything else as text."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return ",".join(str(v) for v in value)
    raise SpaceError(f"search space: categorical value {value!r} is not a number, text or list")


def check_field(config, name: str, dist: od.BaseDistribution) -> None:
    """`SpaceError` unless ``name`` is a field of ``config`` that takes every end of ``dist``."""
    fields = {f for f in type(config).__dataclass_fields__ if not f.startswith("_")}
    if name not in fields:
        close = sorted(f for f in fields if f.split("_")[0] == name.split("_")[0])[:5]
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise SpaceError(f"search space {name}: not a field of {type(config).__name__}{hint}")
    ends = (dist.choices if isinstance(dist, od.CategoricalDistribution)
            else (dist.low, dist.high))
    for value in ends:
        try:
            config.replace(**{name: value})
        except (ConfigError, ValueError, TypeError) as err:
            raise SpaceError(f"search space {name}: {value!r} is not a value the config "
                             f"takes: {err}") from None

"""Algorithm configs: frozen dataclasses whose fields are either *static* or *traced*.

* static fields fix shapes or loop counts (num_envs, rollout length, network sizes, flags);
  changing one means a new program, so they key the compile cache;
* traced fields are numeric hyperparameters (learning rate, gamma, lambda, clip eps, ...). They
  are carried in the train state as float32 arrays (``state.hparams``), so changing them never
  recompiles and a batch of configs can be vmapped like seeds.

An algorithm declares each field once: static fields with `static` on a `StaticConfig`
subclass (with ``validate`` checks and derived properties), traced ones with `traced` on an
`Hparams` subclass (a typed pytree: ``state.hparams.learning_rate``). Its config class is the
two as one flat frozen dataclass (`AlgoConfig`), which splits back into a static view
(``config.static()``: what the jitted functions close over) and the float32 values
(``config.hparams()``). Configs are never mutated: use ``config.replace(**overrides)``
(validated).

Every numeric field is checked against the `Interval` declared with it (``valid=``: learning
rates > 0, gamma and lambda in [0, 1], ...), whenever a config is built: by `jaxrl.train`, the
CLI, each point of a sweep and each bench entry, before anything compiles. An ``int`` field
declared without one is a count (>= 1), and every ``int`` field is at most `INT32_MAX`; a
value that is not a finite number (``1e309`` is infinite) is one line naming its key.
`jaxrl.run_args.check_run_args` holds the same kind of rule for a run's ``seeds``,
``total_steps``, root ``seed`` and ``env_kwargs``.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import inspect
import math
import numbers
import typing
from collections.abc import Callable
from typing import Any, Self

import jax.numpy as jnp
from flax import struct


class ConfigError(ValueError):
    """A bad config key or value. The message is one line that names the problem."""


def static(default: Any, doc: str = "", valid: Interval | None = None) -> Any:
    """A field that fixes shapes, loop counts or code paths (part of the compile key); declared
    on a `StaticConfig` subclass. ``valid``: its values' `Interval` where a number is not a
    count (>= 1)."""
    return dataclasses.field(default=default,
                             metadata={"static": True, "doc": doc, "valid": valid})


def traced(default: float, doc: str = "", valid: Interval | None = None) -> Any:
    """A numeric hyperparameter carried as a float32 array in the train state; declared on an
    `Hparams` subclass with its values' `Interval` (``valid``; `ANY`: any finite number)."""
    return dataclasses.field(default=default,
                             metadata={"static": False, "doc": doc, "valid": valid})


def defaults(**values: Any) -> Callable[[type], type]:
    """A class decorator: this subclass's own defaults for fields its bases declare, whose
    type, doc and interval stay the base's (each field is declared once). Goes under the
    dataclass decorator::

        @dataclasses.dataclass(frozen=True)
        @defaults(num_envs=128, num_steps=32)
        class PQNStatic(onpolicy.RolloutStatic): ...

    A name no base declares, or one the class also declares itself, is a `TypeError` at
    import. The names set are kept in the class's ``_own_defaults``."""

    def apply(cls: type) -> type:
        inherited: dict[str, dataclasses.Field] = {}
        for base in reversed(cls.__mro__[1:]):
            inherited.update(getattr(base, "__dataclass_fields__", {}))
        own = inspect.get_annotations(cls)
        unknown = [name for name in values if name not in inherited or name in own]
        if unknown:
            raise TypeError(f"{cls.__name__}: defaults() names {unknown}, which no base declares"
                            " or which the class declares itself")
        hints = typing.get_type_hints(cls)
        annotations = dict(own)
        for name, value in values.items():
            annotations[name] = hints[name]
            setattr(cls, name, dataclasses.field(default=value,
                                                 metadata=inherited[name].metadata))
        cls.__annotations__ = annotations
        cls._own_defaults = frozenset(values)  # type: ignore[attr-defined]
        return cls

    return apply


@dataclasses.dataclass(frozen=True)
class StaticConfig:
    """Base of an algorithm's static fields (shapes, loop counts, flags), declared with `static`.

    An instance without the traced fields is the *static view* of a config (`AlgoConfig.static`):
    what an algorithm's jitted functions close over. Reading a traced field from it is an
    ``AttributeError``, so a traced value can never be baked into a compiled program (which the
    compile cache, keyed on `static_key`, would then reuse for other values)."""

    def __post_init__(self):
        check_ranges(self)  # first: a subclass's validate may divide by a count
        self.validate()

    def validate(self) -> None:
        """Raise `ConfigError` for inconsistent values (choices, divisibility). Numeric ranges
        are not checked here but by the intervals declared with the fields. Subclasses extend this."""

    def static(self) -> Self:
        """The static view: this object itself (a whole `AlgoConfig` gives its static part)."""
        return self

    def for_env(self, env) -> Self:
        """This config with what it reads from ``env`` filled in (the engine asks every config
        once it has the env): itself, unless a part needs the env (an actor-critic's
        ``actor_obs``, `jaxrl.algos.offpolicy.ActorCriticStatic.for_env`)."""
        del env
        return self

    def static_key(self) -> tuple:
        """The static fields only: equal keys share one compiled program."""
        return (
            type(self).__name__,
            *((f.name, getattr(self, f.name))
              for f in dataclasses.fields(self)
              if f.metadata.get("static", True)),
        )


@struct.dataclass(frozen=True)
class Hparams:
    """Base of an algorithm's traced hyperparameters, declared with `traced`: a pytree read by
    attribute (``hp.learning_rate``). In a train state (``state.hparams``) every field is a
    float32 scalar ``[]`` (``[members]`` across a compiled program's members), so changing one
    never recompiles and a batch of configs is vmapped like seeds."""


class AlgoConfig:
    """A whole algorithm config: one flat frozen dataclass of its static and traced fields, as
    users write it (``PPOConfig(learning_rate=1e-3, num_envs=8)``, ``config.replace(...)``)::

        @dataclasses.dataclass(frozen=True)
        class PPOConfig(AlgoConfig, PPOHparams, PPOStatic):
            \"\"\"PPO's config: `PPOStatic` and `PPOHparams` as one set of fields.\"\"\"

    Each field is declared once, on its part. The algorithm never sees the whole config: its
    jitted functions get `static` (the static view) and read traced values from
    ``state.hparams``, built by `hparams`. ``AlgoConfig`` comes first among the bases so that
    its `replace` (validated) is the one used."""

    @classmethod
    def static_type(cls) -> type[StaticConfig]:
        """The class of the static part (e.g. ``PPOStatic``)."""
        return _part(cls, StaticConfig)

    @classmethod
    def hparams_type(cls) -> type[Hparams]:
        """The class of the traced part (e.g. ``PPOHparams``)."""
        return _part(cls, Hparams)

    # -- field bookkeeping --------------------------------------------------------------------
    @classmethod
    def field_names(cls) -> list[str]:
        return [f.name for f in _fields(cls)]

    @classmethod
    def traced_names(cls) -> list[str]:
        return [f.name for f in _fields(cls.hparams_type())]

    def static(self) -> Any:
        """The static view: the static fields only, as the algorithm's ``static_type`` (e.g. a
        ``PPOStatic``)."""
        part = self.static_type()
        return part(**{f.name: getattr(self, f.name) for f in _fields(part)})

    def hparams(self) -> Hparams:
        """The traced fields as float32 scalars ``[]`` (what goes into ``state.hparams``)."""
        return self.hparams_type()(
            **{n: jnp.asarray(getattr(self, n), jnp.float32) for n in self.traced_names()})

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in _fields(self)}

    # -- overrides ----------------------------------------------------------------------------
    def replace(self, **overrides) -> Self:
        """A new config with ``overrides`` applied, type-coerced and validated."""
        fields = {f.name: f for f in _fields(self)}
        coerced = {}
        for key, value in overrides.items():
            if key not in fields:
                raise ConfigError(
                    f"unknown config key {key!r} for {type(self).__name__}; "
                    f"valid keys: {', '.join(sorted(fields))}"
                )
            coerced[key] = coerce(key, value, _field_type(type(self), key))
        return dataclasses.replace(self, **coerced)  # type: ignore[type-var]


def _fields(obj: Any) -> tuple[dataclasses.Field, ...]:
    return dataclasses.fields(obj)


def _part(cls: type, base: type) -> Any:
    """The first class of ``cls``'s MRO that derives from ``base`` and is not a whole config."""
    return next(c for c in cls.__mro__ if issubclass(c, base) and not issubclass(c, AlgoConfig))


def _field_type(cls: type, name: str) -> Any:
    return typing.get_type_hints(cls)[name]


def import_path(factory, key: str) -> str:
    """``package.module:factory``, the name a config keeps for a ``factory`` passed to ``key``
    (``jaxrl.train(..., network=make_net)``), which the stored run reloads by; one-line
    `ConfigError` for a factory no import finds again (a lambda, a nested function)."""
    module, qualname = getattr(factory, "__module__", None), getattr(factory, "__qualname__", "")
    path = f"{module}:{qualname}"
    try:
        found = module and "<" not in qualname and "." not in qualname and getattr(
            importlib.import_module(module), qualname, None) is factory
    except ImportError:
        found = False
    if not found:
        raise ConfigError(f"{key}: {(qualname or repr(factory))[:80]} is not a module-level "
                          f"factory that an import finds again (the run stores its import path); "
                          f"define it at the top of a module, or register it and pass its name")
    return path


def coerce(key: str, value: Any, typ: Any) -> Any:
    """Convert ``value`` (possibly a CLI string) to the field's type, or raise `ConfigError`."""
    origin = typing.get_origin(typ)
    try:
        if typ is bool:
            if isinstance(value, str):
                low = value.strip().lower()
                if low not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError(value)
                return low in ("true", "1", "yes")
            if not isinstance(value, (bool, int)):
                raise ValueError(value)
            return bool(value)
        if typ is int:
            number = float(value.replace("_", "")) if isinstance(value, str) else value
            if isinstance(number, bool) or float(number) != int(float(number)):
                raise ValueError(value)
            return int(number)
        if typ is float:
            if isinstance(value, bool):
                raise ValueError(value)
            return float(value.replace("_", "") if isinstance(value, str) else value)
        if typ is str:
            if callable(value):  # a factory (torso=, network=): named by its import path
                return import_path(value, key)
            if not isinstance(value, str):
                raise ValueError(value)
            return value
        if origin is tuple:
            if isinstance(value, str):
                value = [v for v in value.strip("()[] ").split(",") if v.strip()]
            (inner, *_rest) = typing.get_args(typ)
            return tuple(coerce(key, v, inner) for v in value)
    except ConfigError:  # an element of a tuple: its own message
        raise
    except (TypeError, ValueError, OverflowError):  # OverflowError: int(inf), float(10**400)
        name = getattr(typ, "__name__", str(typ))
        raise ConfigError(f"config key {key!r} expects {name}, got {shown(value)}") from None
    return value


def shown(value: Any) -> str:
    """``value`` for a one-line message: its repr, at most 60 characters; a number of more
    than 15 digits as ``%g`` (``1e+30``), one past a float's range as ``about 2**N``."""
    if is_real(value) and abs(value) >= 1e15:
        try:
            return f"{value:g}"
        except OverflowError:  # an int past 1.8e308 (its repr may be too long to make at all)
            return f"{'-' if value < 0 else ''}about 2**{int(value).bit_length()}"
    text = repr(value)
    return text if len(text) <= 60 else text[:59] + "…"


# -- ranges: one table for the numeric fields of every algorithm ------------------------------
@dataclasses.dataclass(frozen=True)
class Interval:
    """The finite numbers from ``low`` to ``high``; an end is excluded when ``*_open``."""

    low: float = -math.inf
    high: float = math.inf
    low_open: bool = False
    high_open: bool = False

    def __contains__(self, x: float) -> bool:
        above = x > self.low if self.low_open else x >= self.low
        below = x < self.high if self.high_open else x <= self.high
        return above and below and (isinstance(x, numbers.Integral) or math.isfinite(x))

    def __str__(self) -> str:
        """``> 0``, ``>= 1``, ``in (0, 1]`` or ``a finite number``."""
        if self.high == math.inf:
            if self.low == -math.inf:
                return "a finite number"
            return f"{'>' if self.low_open else '>='} {_number(self.low)}"
        return (f"in {'(' if self.low_open else '['}{_number(self.low)}, "
                f"{_number(self.high)}{')' if self.high_open else ']'}")


def _number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


# The intervals config fields declare (``valid=``). Why the bounds: a learning rate, clip range,
# trust region, clip norm or epsilon of 0 never moves or divides by zero (< 0 ascends the loss);
# gamma = 1 is the undiscounted finite-horizon return, lambda = 0 TD(0), lambda = 1 Monte Carlo;
# tau = 1 copies the online net and tau = 0 would freeze the target; epsilon-greedy and PER's
# alpha / beta are probabilities or exponents in [0, 1]; a loss weight of 0 switches its term
# off; an average decay of 1 never updates the average; counts that may be 0 (learning_starts,
# replay_rollouts) are NON_NEGATIVE.
ANY = Interval()
POSITIVE = Interval(0.0, low_open=True)
NON_NEGATIVE = Interval(0.0)
COUNT = Interval(1)  # an int field declared without valid=: envs, steps, epochs, sizes
UNIT = Interval(0.0, 1.0)  # [0, 1]
UNIT_NO_ZERO = Interval(0.0, 1.0, low_open=True)  # (0, 1]
UNIT_NO_ONE = Interval(0.0, 1.0, high_open=True)  # [0, 1)
UNIT_OPEN = Interval(0.0, 1.0, low_open=True, high_open=True)  # (0, 1)

INT32_MAX = 2**31 - 1  # every int field, whatever its interval: shapes and counts are int32

@functools.cache
def numeric_fields(cls: type) -> dict[str, type]:
    """``{name: int | float}`` for the numeric fields of a config class (tuples of ints, such as
    ``hidden``, count as int: each element is checked)."""
    hints = typing.get_type_hints(cls)
    out = {}
    for f in dataclasses.fields(cls):
        typ = hints[f.name]
        if typing.get_origin(typ) is tuple:
            typ = typing.get_args(typ)[0]
        if typ in (int, float):
            out[f.name] = typ
    return out


@functools.cache
def declared_intervals(cls: type) -> dict[str, Interval | None]:
    """``{field: the Interval declared with it (valid=...), or None}`` of a config class."""
    return {f.name: f.metadata.get("valid") for f in dataclasses.fields(cls)}


def allowed(cls: type, name: str, typ: type) -> Interval:
    """The interval of field ``name`` of config class ``cls``: the one declared with it; a
    count (>= 1) for an int field declared without one."""
    declared = declared_intervals(cls).get(name)
    return declared if declared is not None else (COUNT if typ is int else ANY)


def check_ranges(config: Any) -> None:
    """Raise `ConfigError` (one line: field, value, allowed range) for the first numeric field
    of ``config`` outside its interval."""
    for name, typ in numeric_fields(type(config)).items():
        value = getattr(config, name)
        interval = allowed(type(config), name, typ)
        each = "each element " if isinstance(value, tuple) else ""
        for x in value if isinstance(value, tuple) else (value,):
            if not is_real(x) or x not in interval:
                raise ConfigError(f"{name}={shown(value)} is out of range for "
                                  f"{type(config).__name__}: {each}must be {interval}")
            if typ is int and abs(x) > INT32_MAX:
                raise ConfigError(f"{name}={shown(value)} is out of range for "
                                  f"{type(config).__name__}: {each}must be at most "
                                  f"{INT32_MAX} (the programs count in int32)")


def is_real(x: Any) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool)

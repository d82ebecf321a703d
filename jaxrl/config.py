"""Algorithm configs: frozen dataclasses whose fields are either *static* or *traced*.

* static fields fix shapes or loop counts (num_envs, rollout length, network sizes, flags);
  changing one means a new program, so they key the compile cache;
* traced fields are numeric hyperparameters (learning rate, gamma, lambda, clip eps, ...). They
  are carried in the train state as float32 arrays (``state.hparams``), so changing them never
  recompiles and a batch of configs can be vmapped like seeds.

Declare fields with `static` / `traced`; subclasses add ``validate`` checks and derived
properties. Configs are never mutated: use ``config.replace(**overrides)`` (validated).
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

import jax.numpy as jnp


class ConfigError(ValueError):
    """A bad config key or value. The message is one line that names the problem."""


def static(default: Any, doc: str = "") -> Any:
    """A field that fixes shapes, loop counts or code paths (part of the compile key)."""
    return dataclasses.field(default=default, metadata={"static": True, "doc": doc})


def traced(default: float, doc: str = "") -> Any:
    """A numeric hyperparameter carried as a float32 array in the train state."""
    return dataclasses.field(default=default, metadata={"static": False, "doc": doc})


@dataclasses.dataclass(frozen=True)
class AlgoConfig:
    """Base class for algorithm configs (frozen dataclass of static and traced fields)."""

    def __post_init__(self):
        self.validate()

    # -- field bookkeeping --------------------------------------------------------------------
    @classmethod
    def field_names(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls)]

    @classmethod
    def traced_names(cls) -> list[str]:
        return [f.name for f in dataclasses.fields(cls) if not f.metadata.get("static", True)]

    def static_key(self) -> tuple:
        """The static fields only: equal keys share one compiled program."""
        return (type(self).__name__,) + tuple(
            (f.name, getattr(self, f.name))
            for f in dataclasses.fields(self)
            if f.metadata.get("static", True)
        )

    def hparams(self) -> dict[str, jnp.ndarray]:
        """The traced fields as float32 scalars (goes into ``state.hparams``)."""
        return {n: jnp.asarray(getattr(self, n), jnp.float32) for n in self.traced_names()}

    def to_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    # -- overrides ----------------------------------------------------------------------------
    def replace(self, **overrides) -> AlgoConfig:
        """A new config with ``overrides`` applied, type-coerced and validated."""
        fields = {f.name: f for f in dataclasses.fields(self)}
        coerced = {}
        for key, value in overrides.items():
            if key not in fields:
                raise ConfigError(
                    f"unknown config key {key!r} for {type(self).__name__}; "
                    f"valid keys: {', '.join(sorted(fields))}"
                )
            coerced[key] = coerce(key, value, _field_type(type(self), key))
        return dataclasses.replace(self, **coerced)

    def validate(self) -> None:
        """Raise `ConfigError` for out-of-range values. Subclasses extend this."""


def _field_type(cls: type, name: str) -> Any:
    return typing.get_type_hints(cls)[name]


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
            if isinstance(value, str):
                value = float(value.replace("_", ""))
            if isinstance(value, bool) or float(value) != int(float(value)):
                raise ValueError(value)
            return int(value)
        if typ is float:
            if isinstance(value, bool):
                raise ValueError(value)
            return float(value.replace("_", "") if isinstance(value, str) else value)
        if typ is str:
            if not isinstance(value, str):
                raise ValueError(value)
            return value
        if origin is tuple:
            if isinstance(value, str):
                value = [v for v in value.strip("()[] ").split(",") if v.strip()]
            (inner, *_rest) = typing.get_args(typ)
            return tuple(coerce(key, v, inner) for v in value)
    except (TypeError, ValueError):
        name = getattr(typ, "__name__", str(typ))
        raise ConfigError(f"config key {key!r} expects {name}, got {value!r}") from None
    return value


def env_family(env_name: str) -> str:
    """'probe' | 'brax' | 'minatar' | 'continuous' | 'discrete' (for default configs)."""
    if env_name.startswith("probe:"):
        return "probe"
    if env_name.startswith("brax:"):
        return "brax"
    if "MinAtar" in env_name:
        return "minatar"
    if env_name.removeprefix("gymnax:") in ("Pendulum-v1", "MountainCarContinuous-v0"):
        return "continuous"
    return "discrete"

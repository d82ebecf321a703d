"""Each config field is declared once: a kit or an algorithm whose default differs sets it with
`jaxrl.config.defaults`, keeping the declaring base's type, doc and interval."""

import dataclasses
import inspect

import pytest
from flax import struct

from jaxrl import algos
from jaxrl.algos.network_static import NetworkStatic
from jaxrl.config import (
    POSITIVE,
    ConfigError,
    Hparams,
    StaticConfig,
    check_ranges,
    defaults,
    static,
    traced,
)


def _subclasses(base: type) -> set[type]:
    out = set()
    for sub in base.__subclasses__():
        out |= {sub} | _subclasses(sub)
    return out


def _config_parts() -> set[type]:
    for algo in algos.ALGORITHMS.values():  # every built-in's config module is imported
        algo.config_cls()
    return {c for c in _subclasses(StaticConfig) | _subclasses(Hparams)
            if c.__module__.startswith("jaxrl.")}


def test_no_config_class_redeclares_a_field_of_its_bases():
    redeclared = []
    for cls in _config_parts():
        set_by_defaults = cls.__dict__.get("_own_defaults", frozenset())
        for name in set(inspect.get_annotations(cls)) - set_by_defaults:
            if any(name in getattr(base, "__dataclass_fields__", {}) or
                   name in inspect.get_annotations(base) for base in cls.__mro__[1:]):
                redeclared.append(f"{cls.__module__}.{cls.__qualname__}.{name}")
    assert not redeclared, f"use jaxrl.config.defaults(...) instead: {sorted(redeclared)}"


def test_the_network_fields_are_declared_on_one_class():
    for name in ("hidden", "torso", "activation", "verbosity"):
        owners = [c.__qualname__ for c in _config_parts() | {NetworkStatic}
                  if name in inspect.get_annotations(c)
                  and name not in c.__dict__.get("_own_defaults", ())]
        assert owners == ["NetworkStatic"], (name, owners)


def test_every_algorithm_shares_the_network_fields():
    for name, algo in algos.ALGORITHMS.items():
        assert issubclass(algo.config_cls.static_type(), NetworkStatic), name


@dataclasses.dataclass(frozen=True)
class _Base(StaticConfig):
    width: int = static(8, "a width")
    mode: str = static("a", "a | b")


@dataclasses.dataclass(frozen=True)
@defaults(width=32)
class _Child(_Base):
    extra: bool = static(False, "a flag of the child")


@struct.dataclass(frozen=True)
class _HBase(Hparams):
    rate: float = traced(0.1, "a rate", valid=POSITIVE)


@struct.dataclass(frozen=True)
@defaults(rate=0.5)
class _HChild(_HBase):
    pass


def test_defaults_changes_the_default_and_keeps_the_declaration():
    base, child = ({f.name: f for f in dataclasses.fields(c)} for c in (_Base, _Child))
    assert list(child) == ["width", "mode", "extra"]  # the base's order
    assert (_Base().width, _Child().width, _Child().mode) == (8, 32, "a")
    assert child["width"].metadata == base["width"].metadata
    assert child["width"].type == base["width"].type
    rate = {f.name: f for f in dataclasses.fields(_HChild)}["rate"]
    assert _HChild().rate == 0.5 and rate.metadata["valid"] is POSITIVE
    with pytest.raises(ConfigError, match="rate"):  # the base's interval
        check_ranges(_HChild(rate=-1.0))
    with pytest.raises(ConfigError, match="width"):
        _Child(width=0)


def test_defaults_refuses_a_field_no_base_declares():
    with pytest.raises(TypeError, match="widht"):
        @defaults(widht=3)
        class _Typo(_Base):
            pass
    with pytest.raises(TypeError, match="width"):
        @defaults(width=3)
        class _Both(_Base):
            width: int = static(3, "declared again")

"""A user's module factory found by name: one registered in this process, or an import path
``package.module:factory``, which every process (a resumed run, a reloaded or exported policy)
can import again. What `jaxrl.parts.torsos` (a torso) and `jaxrl.parts.user_networks` (a whole network)
look their names up with; ``what`` names the kind in the one-line errors.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

import flax.linen as nn

from jaxrl.config import ConfigError


def is_user_name(name: str, registry: dict) -> bool:
    """Whether ``name`` names a user's factory: registered in ``registry``, or an import path."""
    return name in registry or ":" in name


def find(name: str, registry: dict, what: str) -> Callable[..., nn.Module]:
    """The factory ``name`` names (`is_user_name`); one-line `ConfigError` when it cannot be
    found or is not callable."""
    if name in registry:
        return registry[name]
    module_name, _, attr = name.partition(":")
    try:
        found = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError, ValueError) as err:
        raise ConfigError(f"{what} {name!r} cannot be imported: {err}") from None
    if not callable(found):
        raise ConfigError(f"{what} {name!r} is not a factory (a callable returning a module)")
    return found


def made(name: str, registry: dict, what: str, *args) -> nn.Module:
    """A fresh module from the factory ``name`` (`find`), called with ``args``; one-line
    `ConfigError` when it returns anything but a Flax module."""
    module = find(name, registry, what)(*args)
    if not isinstance(module, nn.Module):
        raise ConfigError(f"{what} {name!r}: its factory returned {type(module).__name__}, not "
                          f"a Flax module")
    return module


def register(name: str, factory, registry: dict, what: str, taken: tuple[str, ...]) -> None:
    """Put ``factory`` in ``registry`` under ``name``: a new name without ':' (not one of
    ``taken``), a callable factory; one-line `ConfigError` otherwise."""
    if not isinstance(name, str) or not name or ":" in name or name in taken:
        raise ConfigError(f"a registered {what} needs a new name without ':' (not one of "
                          f"{', '.join(taken)}), got {name!r}")
    if not callable(factory):
        raise ConfigError(f"{what} {name!r}: the factory must be callable, got "
                          f"{type(factory).__name__}")
    registry[name] = factory

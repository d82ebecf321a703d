"""jaxrl: a JAX-accelerated, vectorized reinforcement-learning engine.

The public API (`train`, `sweep`, `bench`, ...) is loaded on first use, so importing a light
part of the package (the run store, its queries) does not load JAX or the engine."""

import importlib

from jaxrl.platform import configure_cpu_devices

configure_cpu_devices()  # one CPU device per core, before anything creates a JAX backend

__version__ = "0.1.0"

# public name -> the module that defines it
_PUBLIC = {
    "train": "jaxrl.api",
    "resume": "jaxrl.api",
    "make_train": "jaxrl.api",
    "seed_keys": "jaxrl.engine.members",
    "TrainResult": "jaxrl.trained.results",
    "NonFiniteMetricError": "jaxrl.trained.results",
    "sweep": "jaxrl.studies.sweep.runner",
    "search": "jaxrl.studies.search.runner",
    "pbt": "jaxrl.studies.pbt.runner",
    "bench": "jaxrl.studies.bench.runner",
    "load_policy": "jaxrl.api",
    "render": "jaxrl.api",
    "demos": "jaxrl.api",
    "load_demos": "jaxrl.api",
}

__all__ = sorted(_PUBLIC)


def __getattr__(name: str):
    """Load a public name's module on first access (PEP 562)."""
    if name not in _PUBLIC:
        raise AttributeError(f"module 'jaxrl' has no attribute {name!r}")
    value = getattr(importlib.import_module(_PUBLIC[name]), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(list(globals()) + __all__)

"""Algorithm registry: each algorithm is a module of pure functions plus a config class, ending
in the one line that makes its `Algorithm` from its family's kit; `ALGORITHMS` holds them, one
per name of `jaxrl.algo_names.BUILT_IN` (where a new algorithm is registered, in one line)."""

from __future__ import annotations

import difflib
import importlib

from jaxrl.algo_names import BUILT_IN as BUILT_IN_NAMES
from jaxrl.algos import onpolicy
from jaxrl.algos.algorithm import Algorithm

#: what users reach through ``jaxrl.algos``; a custom on-policy algorithm is made with its kit,
#: ``algos.onpolicy.algorithm(...)`` (`notebooks/custom_algorithm.ipynb`)
__all__ = ["ALGORITHMS", "BUILT_IN", "Algorithm", "UnknownAlgorithmError", "get", "onpolicy",
           "register"]

ALGORITHMS: dict[str, Algorithm] = {
    module.ALGORITHM.name: module.ALGORITHM
    for module in (importlib.import_module(f"jaxrl.algos.{name}") for name in BUILT_IN_NAMES)
}


BUILT_IN: frozenset[str] = frozenset(ALGORITHMS)


class UnknownAlgorithmError(ValueError):
    pass


def register(algorithm: Algorithm) -> Algorithm:
    """Make ``algorithm`` known by its name in this process: ``train``, ``sweep``, ``bench``
    and the probe ladder find it like a built-in one. Re-registering a user algorithm replaces
    it; built-in names are refused."""
    if not isinstance(algorithm, Algorithm):
        raise TypeError(f"register takes an Algorithm, got {type(algorithm).__name__}")
    key = algorithm.name.lower()
    if key in BUILT_IN:
        raise ValueError(f"{algorithm.name!r} is a built-in algorithm; pick another name")
    ALGORITHMS[key] = algorithm
    return algorithm


def get(name: str) -> Algorithm:
    key = name.lower()
    if key not in ALGORITHMS:
        close = difflib.get_close_matches(key, list(ALGORITHMS), n=3, cutoff=0.3)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise UnknownAlgorithmError(
            f"Unknown algorithm {name!r}. Available: {', '.join(sorted(ALGORITHMS))}.{hint}"
        )
    return ALGORITHMS[key]

"""Algorithm registry: each algorithm is a module of pure functions plus a config class, ending
in the one line that makes its `Algorithm` from its family's kit; `ALGORITHMS` lists them."""

from __future__ import annotations

import difflib

from jaxrl.algos import (
    a2c,
    acer,
    bc,
    c51,
    ddpg,
    dqn,
    gail,
    iqn,
    onpolicy,
    ppo,
    pqn,
    qrdqn,
    sac,
    td3,
    trpo,
    vpg,
)
from jaxrl.algos.algorithm import Algorithm

#: what users reach through ``jaxrl.algos``; a custom on-policy algorithm is made with its kit,
#: ``algos.onpolicy.algorithm(...)`` (`notebooks/custom_algorithm.ipynb`)
__all__ = ["ALGORITHMS", "BUILT_IN", "Algorithm", "UnknownAlgorithmError", "get", "onpolicy",
           "register"]

ALGORITHMS: dict[str, Algorithm] = {
    module.ALGORITHM.name: module.ALGORITHM
    for module in (ppo, vpg, a2c, trpo, dqn, c51, qrdqn, iqn, pqn, ddpg, td3, sac, acer, gail, bc)
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

"""Names the ``jaxrl`` parser shows in its help, as plain tuples: the parser must not import the
algorithm or env registries (they load JAX), so ``jaxrl --help`` stays fast. Tests check
`ALGORITHMS` against the registry (``ALGORITHMS == sorted(jaxrl.algos.ALGORITHMS)``); the env
families come from their JAX-free table."""

from __future__ import annotations

from envs import families
from jaxrl.algo_names import BUILT_IN

#: `jaxrl.algos.ALGORITHMS`, sorted (an algorithm's name is its module's).
ALGORITHMS: tuple[str, ...] = tuple(sorted(BUILT_IN))

#: The families of `envs.families` (a table that imports no JAX), in the order ``jaxrl envs``
#: lists them.
ENV_FAMILIES: tuple[str, ...] = families.NAMES

ALGO_HELP = f"one of: {', '.join(ALGORITHMS)}"

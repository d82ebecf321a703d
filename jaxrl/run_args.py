"""A run's arguments checked before anything is built: `check_run_args`, the same rule for
`jaxrl.train`, the CLI, each sweep point and each bench entry (a config's own fields are
checked by the intervals declared with them, `jaxrl.config`)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from typing import Any

from jaxrl.config import COUNT, ConfigError, Interval, is_real, shown
from jaxrl.runs.runmeta import SEEDS_LIMIT, STEP_LIMIT

SEED_LIMIT = 2**32  # a PRNG key keeps 32 bits of the root seed: seed 2**32 would repeat seed 0
STEPS = Interval(1, STEP_LIMIT)  # a budget the int32 env-step counters of the programs can count
_UNSET: Any = object()


def check_run_args(*, seeds: Any = _UNSET, total_steps: Any = _UNSET, seed: Any = _UNSET,
                   eval_episodes: Any = _UNSET, env_kwargs: Any = _UNSET) -> None:
    """Refuse a run's arguments before anything is built (`int` would truncate them):
    ``seeds`` in ``[1, 2**31 - 1]``, the root ``seed`` in ``[0, 2**32)`` and ``eval_episodes``
    >= 0 (0: no evaluation) must be ints; ``total_steps`` in ``[1, 2**31 - 1]`` (what the int32
    env-step counters hold) may also be a float with a whole value (``1e6``); ``env_kwargs`` is
    None or a mapping of env option names to values. Arguments not given are not checked."""
    if seeds is not _UNSET:
        _check_whole("seeds", seeds, COUNT)
        _check_whole("seeds", seeds, Interval(1, SEEDS_LIMIT), why=" (the programs count in int32)")
    if total_steps is not _UNSET:
        _check_whole("total_steps", total_steps, COUNT, whole_floats=True)
        _check_whole("total_steps", total_steps, STEPS, whole_floats=True,
                     why=" (the env-step counters are 32-bit)")
    if seed is not _UNSET:
        _check_whole("seed", seed, Interval(0, SEED_LIMIT, high_open=True))
    if eval_episodes is not _UNSET:
        _check_whole("eval_episodes", eval_episodes, Interval(0))
    if env_kwargs is not _UNSET and env_kwargs is not None and not (
            isinstance(env_kwargs, Mapping) and all(isinstance(k, str) for k in env_kwargs)):
        raise ConfigError(f"env_kwargs must be a mapping of env option names to values, got "
                          f"{type(env_kwargs).__name__} {shown(env_kwargs)}")


def _check_whole(name: str, value: Any, interval: Interval, whole_floats: bool = False,
                 why: str = "") -> None:
    whole = isinstance(value, numbers.Integral) or (
        whole_floats and is_real(value) and math.isfinite(value) and value == int(value))
    if not whole or isinstance(value, bool):
        raise ConfigError(f"{name} must be a whole number, got {shown(value)}")
    if value not in interval:
        raise ConfigError(f"{name} must be {interval}{why}, got {shown(value)}")


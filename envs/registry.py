"""One registry for every environment: ``envs.make(name, **kwargs) -> (env, params)``.

Names:

* ``"CartPole-v1"`` or ``"gymnax:CartPole-v1"``: any gymnax environment;
* ``"brax:hopper"`` (``backend="mjx"`` by default, ``episode_length=1000``): brax environments;
* ``"probe:value"`` …: the probe ladder (`envs.probes`);
* ``"goal:BitFlip"`` (``n_bits=25``), ``"goal:PointReach"``: goal-conditioned envs for
  hindsight relabelling (`envs.goals`);
* ``"atari:Breakout"`` (``preset="baselines"`` or ``"machado"``): every game ale-py ships, in
  the jitted loop through ale-py's XLA interface (`envs.atari`, the ``atari`` extra).

Unknown names raise `UnknownEnvironmentError` listing the closest registered names.
`env_family` sorts a name into the family whose default hyperparameters fit it.
"""

from __future__ import annotations

import contextlib
import difflib
import math
from collections.abc import Callable
from typing import Any

from envs import goals, probes
from envs.wrappers import ObservationSubset, RewardScale

Factory = Callable[..., tuple[Any, Any]]


class UnknownEnvironmentError(ValueError):
    """Raised by `make` for a name that no registered family knows."""


FAMILIES = ("probe", "discrete", "continuous", "minatar", "atari", "brax")
_REGISTERED: dict[str, tuple[Factory, str]] = {}  # name -> (factory, family), this process


def register(name: str, factory: Factory, family: str = "discrete") -> None:
    """Make ``make(name, **kwargs)`` return ``factory(**kwargs)``, an ``(env, params)`` pair
    (params None: the env's ``default_params``), in this process: a user env then trains,
    sweeps and benches by name like the built-in ones. ``family`` picks the algorithms'
    default configs (`env_family`). Registering the same name again replaces the factory; a
    built-in name is refused. The registration is not stored: a process that resumes a run,
    loads its policy or works for Ray must register the name again. Return the same env
    instance from every call (or give the env ``__eq__``/``__hash__``), so that programs
    compiled for it are reused within the process."""
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"an env name must be a non-empty string, got {name!r}")
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {', '.join(FAMILIES)}, got {family!r}")
    prefixed = ":" in name and name.partition(":")[0] in ("gymnax", "brax", "atari", "probe",
                                                            "goal")
    if name not in _REGISTERED and (prefixed or name in registered_names(include_brax=False)):
        raise ValueError(f"{name!r} is a built-in env name; register your env under another")
    if not callable(factory):
        raise ValueError(f"factory must be callable (**kwargs) -> (env, params), got {factory!r}")
    _REGISTERED[name] = (factory, family)


class EnvOptionError(ValueError):
    """Raised by `make` for an option (keyword argument) the env does not take."""


def _gymnax_names() -> tuple[str, ...]:
    from envs.gymnax_adapter import GYMNAX_NAMES

    return tuple(GYMNAX_NAMES)


def _brax_names() -> tuple[str, ...]:
    from envs.brax_adapter import BRAX_NAMES

    return tuple(f"brax:{n}" for n in BRAX_NAMES)


def _make_gymnax(name: str, **kwargs):
    from envs.gymnax_adapter import make_gymnax

    return make_gymnax(name, **kwargs)


def _make_brax(name: str, **kwargs):
    from envs.brax_adapter import make_brax

    return make_brax(name, **kwargs)


def _make_atari(game: str, **kwargs):
    from envs.atari import AtariEnv

    return AtariEnv(game, **kwargs), None


def registered_names(include_brax: bool = True) -> list[str]:
    """Every name `make` accepts (brax names need brax importable)."""
    names = list(probes.PROBES_BY_NAME) + list(goals.GOAL_ENVS) + list(_gymnax_names())
    names += list(_REGISTERED)
    names += [f"gymnax:{n}" for n in _gymnax_names()]
    if include_brax:
        with contextlib.suppress(ImportError):  # brax is a pinned dependency
            names += list(_brax_names())
    return names


def make(name: str, reward_scale: float | None = None, observation_indices=None, **kwargs
         ) -> tuple[Any, Any]:
    """Build ``(env, params)`` for a registered name; ``kwargs`` go to the family's factory
    (for probes: overrides of their params, e.g. ``time_limit=10``). Two options work on any
    env: ``reward_scale`` multiplies the training reward (`envs.wrappers.RewardScale`; returns
    are still reported in the env's units), and ``observation_indices`` keeps only those
    entries of a flat observation (`envs.wrappers.ObservationSubset`: CartPole-v1 with
    ``[0, 2]`` hides both velocities)."""
    if not isinstance(name, str):
        raise TypeError(f"environment name must be a string, got {type(name).__name__}")
    if observation_indices is not None:
        env, params = make(name, reward_scale=reward_scale, **kwargs)
        return ObservationSubset(env, observation_indices), params
    try:
        return _make_family(name, reward_scale, **kwargs)
    except TypeError as err:  # a factory refusing an option; the message names which
        if not kwargs:
            raise
        raise EnvOptionError(f"{name} with option(s) {', '.join(sorted(kwargs))}: {err}"
                             ) from None


def _make_family(name: str, reward_scale: float | None, **kwargs) -> tuple[Any, Any]:
    """`make` after the options every env takes: the family's factory, then the reward scale."""
    if reward_scale is not None:
        if not (isinstance(reward_scale, (int, float)) and math.isfinite(reward_scale)
                and reward_scale != 0):
            raise ValueError(f"reward_scale must be a finite non-zero number, got {reward_scale!r}")
        env, params = make(name, **kwargs)
        return RewardScale(env, reward_scale), params
    if name in _REGISTERED:
        env, params = _REGISTERED[name][0](**kwargs)
        return env, (env.default_params if params is None else params)
    if name in probes.PROBES_BY_NAME:
        return probes.make_probe(name, **kwargs)
    if name in goals.GOAL_ENVS:
        return goals.make_goal_env(name, **kwargs)
    bare = name.removeprefix("gymnax:")
    if bare in _gymnax_names():
        return _make_gymnax(bare, **kwargs)
    if name.startswith("brax:"):
        bare = name.removeprefix("brax:")
        if f"brax:{bare}" in _brax_names():
            return _make_brax(bare, **kwargs)
    if name.startswith("atari:"):
        return _make_atari(name.removeprefix("atari:"), **kwargs)
    raise UnknownEnvironmentError(unknown_name_message(name))


def unknown_name_message(name: str) -> str:
    """'Unknown environment ...; closest registered names: ...' (one line). brax's names are
    candidates only for a ``brax:`` name: importing brax to suggest them prints lines of its
    own ("Failed to import warp") before the error."""
    candidates = registered_names(include_brax=name.startswith("brax:"))
    lowered = {c.lower(): c for c in candidates}
    close = difflib.get_close_matches(name.lower(), list(lowered), n=5, cutoff=0.4)
    hint = ", ".join(lowered[c] for c in close) if close else ", ".join(candidates[:8]) + ", ..."
    return f"Unknown environment {name!r}. Closest registered names: {hint}"


def env_family(env_name: str) -> str:
    """'probe' | 'brax' | 'atari' | 'minatar' | 'continuous' | 'discrete': the family of a registered
    name, by which an algorithm picks its default config (a `register`ed env: its own)."""
    if env_name in _REGISTERED:
        return _REGISTERED[env_name][1]
    if env_name.startswith("probe:"):
        return "probe"
    if env_name.startswith("brax:"):
        return "brax"
    if env_name.startswith("atari:"):
        return "atari"
    if "MinAtar" in env_name:
        return "minatar"
    if env_name.removeprefix("gymnax:") in ("Pendulum-v1", "MountainCarContinuous-v0",
                                            "goal:PointReach"):
        return "continuous"
    return "discrete"

"""One registry for every environment: ``envs.make(name, **kwargs) -> (env, params)``.

Names:

* ``"CartPole-v1"`` or ``"gymnax:CartPole-v1"``: any gymnax environment;
* ``"brax:hopper"`` (``backend="mjx"`` by default, ``episode_length=1000``): brax environments;
* ``"probe:value"`` …: the probe ladder (`envs.probes`);
* ``"goal:BitFlip"`` (``n_bits=25``), ``"goal:PointReach"``: goal-conditioned envs for
  hindsight relabelling (`envs.goals`);
* ``"atari:Breakout"`` (``preset="baselines"`` or ``"machado"``): every game ale-py ships, in
  the jitted loop through ale-py's XLA interface (`envs.atari`, the ``atari`` extra);
* ``"playground:CartpoleBalance"``: MuJoCo Playground's DM Control Suite on MJX
  (`envs.playground`, the ``playground`` extra);
* any other suite with a row in `envs.families`: ``"<prefix>:<task>"``, built by its adapter.

Unknown names raise `UnknownEnvironmentError` listing the closest registered names; a suite
that is not installed, `SuiteUnavailableError` naming its extra; a suite version the adapter is
not written for, `SuiteVersionError`: each one line. `env_family` sorts a name into the family
whose default hyperparameters fit it (`envs.families`).
"""

from __future__ import annotations

import contextlib
import difflib
import importlib
import math
from collections.abc import Callable
from importlib import metadata
from typing import Any

from envs import families, goals, probes
from envs.families import Family
from envs.options import EnvOptionError, checked
from envs.starts import PreparedStarts
from envs.wrappers import ObservationSubset, RewardScale, StickyActions

Factory = Callable[..., tuple[Any, Any]]


class UnknownEnvironmentError(ValueError):
    """Raised by `make` for a name that no registered family knows."""


class SuiteUnavailableError(ValueError):
    """Raised by `make` for a task of a suite that is not installed (its extra is missing)."""


class SuiteVersionError(ValueError):
    """Raised by `make` for a suite whose installed version its adapter is not written for."""


FAMILIES = families.NAMES
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
    prefixed = name.startswith(families.RESERVED_PREFIXES)
    if name not in _REGISTERED and (prefixed or name in registered_names(suites=())):
        raise ValueError(f"{name!r} is a built-in env name; register your env under another")
    if not callable(factory):
        raise ValueError(f"factory must be callable (**kwargs) -> (env, params), got {factory!r}")
    _REGISTERED[name] = (factory, family)


def _gymnax_names() -> tuple[str, ...]:
    from envs.gymnax_adapter import GYMNAX_NAMES

    return tuple(GYMNAX_NAMES)


def _make_gymnax(name: str, **kwargs):
    from envs.gymnax_adapter import make_gymnax

    return make_gymnax(name, **kwargs)


def suite_adapter(family: Family):
    """The adapter module of a suite's family, after checking the suite is installed at a
    version the adapter is written for (`SuiteUnavailableError` / `SuiteVersionError`, one
    line each)."""
    for dist, prefixes in family.supported.items():
        try:
            found = metadata.version(dist)
        except metadata.PackageNotFoundError:
            raise SuiteUnavailableError(_missing(family, f"no {dist}")) from None
        if not found.startswith(prefixes):
            wanted = ", ".join(f"{p}*" for p in prefixes)
            raise SuiteVersionError(f"the {family.name} family found {dist} {found}; jaxrl's "
                                    f"adapter supports {dist} {wanted} ({family.install_hint()} "
                                    "installs a supported one)")
    try:
        return importlib.import_module(family.adapter)
    except ImportError as err:
        raise SuiteUnavailableError(_missing(family, err)) from None


def _missing(family: Family, why: str | ImportError) -> str:
    """One line: which family is missing what, and the extra that installs it."""
    if isinstance(why, ModuleNotFoundError) and why.name:
        why = f"no module {why.name}"
    hint = f": {family.install_hint()}" if family.extra else ""
    return f"the {family.name} family is not installed ({str(why).split(':')[0]}){hint}"


def suite_tasks(family: Family) -> list[str]:
    """The names `make` takes for a suite's tasks (``prefix + task``); `SuiteUnavailableError`
    where the suite is not installed."""
    module = suite_adapter(family)
    try:
        return [family.prefix + task for task in module.task_names()]
    except ImportError as err:
        raise SuiteUnavailableError(_missing(family, err)) from None


def check_task(family: Family, name: str) -> None:
    """`UnknownEnvironmentError` with the closest names unless the suite has the task ``name``
    (prefixed; compared by the adapter's ``task_key`` where it has one: Atari's two spellings);
    `SuiteUnavailableError` / `SuiteVersionError` for the suite itself."""
    key = getattr(suite_adapter(family), "task_key", lambda t: t)
    known = suite_tasks(family)
    if key(name.removeprefix(family.prefix)) not in {
            key(t.removeprefix(family.prefix)) for t in known}:
        raise UnknownEnvironmentError(_closest(name, known))


def _make_task(family: Family, name: str, prepared_starts: int | None = None, **kwargs
               ) -> tuple[Any, Any]:
    """A suite's task by its prefixed name: the closest names for an unknown task, the extra
    for a missing suite, each one line. Episodes begin from prepared starts (`envs.starts`)
    at the family's period, or ``prepared_starts`` (0: a reset computed at every step)."""
    check_task(family, name)
    period = family.prepared_starts if prepared_starts is None else prepared_starts
    try:
        env, params = suite_adapter(family).make_task(name.removeprefix(family.prefix), **kwargs)
    except ImportError as err:
        raise SuiteUnavailableError(_missing(family, err)) from None
    return (PreparedStarts(env, period) if period else env), params


def registered_names(suites: tuple[str, ...] = ("brax",)) -> list[str]:
    """Every name `make` accepts, with the tasks of the suite families named in ``suites``
    that are installed (listing a suite imports it)."""
    names = list(probes.PROBES_BY_NAME) + list(goals.GOAL_ENVS) + list(_gymnax_names())
    names += list(_REGISTERED)
    names += [f"gymnax:{n}" for n in _gymnax_names()]
    for family in families.FAMILIES:
        if family.adapter and family.name in suites:
            with contextlib.suppress(SuiteUnavailableError, SuiteVersionError):
                names += suite_tasks(family)
    return names


def make(name: str, reward_scale: float | None = None, observation_indices=None,
         sticky_action_prob: float | None = None, **kwargs) -> tuple[Any, Any]:
    """Build ``(env, params)`` for a registered name; ``kwargs`` go to the family's factory
    (for probes: overrides of their params, e.g. ``time_limit=10``). Three options work on any
    env: ``reward_scale`` multiplies the training reward (`envs.wrappers.RewardScale`; returns
    are still reported in the env's units), ``observation_indices`` keeps only those
    entries of a flat observation (`envs.wrappers.ObservationSubset`: CartPole-v1 with
    ``[0, 2]`` hides both velocities), and ``sticky_action_prob`` repeats the last executed
    action with that probability (`envs.wrappers.StickyActions`, discrete actions: MinAtar's
    0.1). An option that counts (``episode_length``, ...: `envs.options`) must be a whole
    number in range (`EnvOptionError`, one line)."""
    if not isinstance(name, str):
        raise TypeError(f"environment name must be a string, got {type(name).__name__}")
    kwargs = checked(name, kwargs)
    if sticky_action_prob is not None:
        if not isinstance(sticky_action_prob, (int, float)) or isinstance(sticky_action_prob,
                                                                          bool):
            raise ValueError(f"sticky_action_prob must be a number in [0, 1), got "
                             f"{sticky_action_prob!r}")
        env, params = make(name, reward_scale=reward_scale,
                           observation_indices=observation_indices, **kwargs)
        return StickyActions(env, sticky_action_prob), params
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
    family = families.prefixed_family(name)
    if family is not None and family.adapter:
        return _make_task(family, name, **kwargs)
    raise UnknownEnvironmentError(unknown_name_message(name))


def unknown_name_message(name: str) -> str:
    """'Unknown environment ...; closest registered names: ...' (one line). A suite's names are
    candidates only for a name with its prefix: importing a suite to suggest its names prints
    lines of its own (brax: "Failed to import warp") before the error."""
    family = families.prefixed_family(name)
    return _closest(name, registered_names(suites=(family.name,) if family else ()))


def _closest(name: str, candidates: list[str]) -> str:
    lowered = {c.lower(): c for c in candidates}
    close = difflib.get_close_matches(name.lower(), list(lowered), n=5, cutoff=0.4)
    hint = ", ".join(lowered[c] for c in close) if close else ", ".join(candidates[:8]) + ", ..."
    return f"Unknown environment {name!r}. Closest registered names: {hint}"


def env_family(env_name: str) -> str:
    """The family of a registered name (`envs.families`), by which an algorithm picks its
    default config; a `register`ed env: the one it was registered with."""
    if env_name in _REGISTERED:
        return _REGISTERED[env_name][1]
    return families.family_of(env_name)

"""A group's build in the compile ledger (`jaxrl.compile_ledger`): before the compile, what
the persistent cache will serve and about how long a cold compile takes here; after it, the
line that lets the next run say so."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from envs.registry import env_family
from jaxrl import compile_cache, compile_ledger
from jaxrl.engine import programs


class Pending(NamedTuple):
    """The ledger of this build (None when the persistent cache is off) and the digest of each
    program it lowered (``{name: digest}``; programs this process already held have none)."""

    path: Path | None
    digests: dict[str, str]


def foretell(pending: dict, spec, r, say: Callable[[str], None] | None) -> Pending:
    """Digest each lowered program of ``pending`` ({name: `programs.Lowered` or
    `programs.Built`}) and, when ``say`` is given and something is to be built, tell it what
    the cache will serve (`compile_ledger.describe`)."""
    folder = compile_cache.configure()
    path = compile_ledger.ledger_path(folder)
    lowered = {name: p for name, p in pending.items() if isinstance(p, programs.Lowered)}
    if path is None or not lowered:
        return Pending(path, {})
    digests = {name: compile_ledger.digest(p.lowered, p.options) for name, p in lowered.items()}
    if say is not None:
        lines = compile_ledger.read(path)
        say(compile_ledger.describe(compile_ledger.outlook(
            lines, digests, r.algorithm.name, env_family(spec.env), folder)))
    return Pending(path, digests)


def add(ledger: Pending, name: str, program) -> None:
    """Add the digest of ``program`` (lowered after the others: the evaluation program, behind
    the first chunks) to ``ledger``, so that `note` records it too."""
    if ledger.path is not None and isinstance(program, programs.Lowered):
        ledger.digests[name] = compile_ledger.digest(program.lowered, program.options)


def note(ledger: Pending, built: dict, spec, r, members: int, wait: float, source: str
         ) -> None:
    """Append this build (``built``: {name: `programs.Built`}) to the ledger (nothing when no
    program was lowered or the cache is off)."""
    if ledger.path is None or not ledger.digests:
        return
    seconds = {name: built[name].phases.get("compile", 0.0) for name in ledger.digests}
    compile_ledger.record(ledger.path, compile_ledger.entry(
        ledger.digests, seconds, r.algorithm.name, env_family(spec.env), spec.env, members,
        wait, source))

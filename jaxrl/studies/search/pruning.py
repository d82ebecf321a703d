"""Pruning a search without waste: successive halving's rungs at chunk boundaries (numpy and
plain Python only; `jaxrl.studies.search.pruned` runs it).

A pruned search trains a batch's B trials as B *slots* of one program. A trial's budget is
what its slot trained since the trial took it (in chunks of the program). Its rungs are at
budgets ``rung * eta**k`` chunks (k = 0, 1, ...); the program starts trials only at chunk 0
or at a rung boundary, so every rung falls on a multiple of ``rung`` chunks and is seen by a
`jaxrl.engine.loop.BetweenChunks` hook of that interval. The rule (asynchronous successive
halving, Li et al. 2020, with the trials arriving at the same boundary ranked together):

    a trial's value at a rung: over its seeds (the objective's IQM or mean), the mean training
        return of the last ``window`` updates of the chunk that ends at the rung
    at each boundary, for each rung k: V = the values of every trial of the search that reached
        rung k before, and of those reaching it now
    a trial reaching rung k now is promoted if it is among the top max(1, len(V) // eta) of V
        (NaN the worst; ties: the lower trial number), else it lost the rung
    the losers are pruned, the worst value first, as long as a slot can be given to a new
        trial: the search has trials left to ask and the boundary leaves at least ``rung``
        chunks (a new trial reaches its first rung); a loser no slot is needed for goes on
        (its slot would otherwise idle: a program's members are fixed)

A trial promoted once is never demoted. A pruned trial's slot is refilled at once by a newly
asked trial (fresh parameters, optimizer, statistics, envs and replay buffer from a fresh key,
and its own hyperparameters); a trial that is never pruned runs until the program's end.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

from jaxrl.config import ConfigError
from jaxrl.studies.search.space import SpaceError


@dataclasses.dataclass(frozen=True)
class Pruning:
    """The rule (module docstring): ``rung``: chunks to a trial's first rung; ``eta``: each
    rung keeps the top 1/eta; ``window``: the last updates of a chunk whose mean training
    return is a rung's value."""

    rung: int = 1
    eta: int = 3
    window: int = 10

    def check(self) -> None:
        """One-line `ConfigError` for a rule that cannot run."""
        for name, least in (("rung", 1), ("eta", 2), ("window", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ConfigError(f"prune {name} must be a whole number >= {least}, got "
                                  f"{value!r}")


def parse_prune(value: Any) -> Pruning | None:
    """The rule asked for: None or False (no pruning); True or ``""`` (the defaults); a
    `Pruning`; a mapping of its fields; or text ``"rung=2,eta=3,window=10"`` (the CLI's
    ``--prune``). One-line `ConfigError` for anything else."""
    if value is None or value is False:
        return None
    if value is True:
        value = {}
    if isinstance(value, str):
        value = dict(_key_value(item) for item in value.split(",") if item.strip())
    if isinstance(value, Mapping):
        fields = {f.name for f in dataclasses.fields(Pruning)}
        unknown = sorted(set(map(str, value)) - fields)
        if unknown:
            raise ConfigError(f"prune: unknown setting {unknown[0]!r}; use "
                              f"{', '.join(sorted(fields))}")
        value = Pruning(**{k: _whole(k, v) for k, v in value.items()})
    if not isinstance(value, Pruning):
        raise ConfigError(f"prune must be true, a mapping or 'rung=N,eta=N,window=N', got "
                          f"{type(value).__name__}")
    value.check()
    return value


def _key_value(item: str) -> tuple[str, str]:
    key, sep, text = item.partition("=")
    if not sep or not key.strip() or not text.strip():
        raise ConfigError(f"prune expects key=value settings (rung=2,eta=3), got {item!r}")
    return key.strip(), text.strip()


def _whole(name: str, value: Any):
    """``value`` as an int when it is a whole number written as text (the CLI's), else as is
    (`Pruning.check` judges it)."""
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            raise ConfigError(f"prune {name} must be a whole number, got {value!r}") from None
    return value


def check_setting(pruning: Pruning, config, space: Mapping, trials: int, batch: int,
                  chunks: int, chunk_updates: int) -> None:
    """One-line `ConfigError` (`SpaceError` for the space) for a pruned search that cannot
    prune: a static field in the space (a refill changes values inside one program), no trial
    left to refill a slot with, or a first rung at or past the program's last chunk."""
    traced = set(config.traced_names())
    for name in space:
        if name not in traced:
            raise SpaceError(f"search space {name}: a pruned search refills slots inside one "
                             f"program, so it tunes traced hyperparameters only, and {name} is "
                             f"static (it shapes the program)")
    if trials <= batch:
        raise ConfigError(f"prune needs more trials than a batch's slots (trials={trials}, "
                          f"batch={batch}): a pruned trial's slot goes to a new trial")
    if pruning.rung >= chunks:
        raise ConfigError(f"prune rung={pruning.rung}: a trial's first rung is after "
                          f"{pruning.rung} chunks, but the program has {chunks} chunk(s) of "
                          f"{chunk_updates} updates (--max-chunk-updates sets a chunk)")


def rung_at(budget: int, pruning: Pruning) -> int | None:
    """The rung ``k`` a trial that trained ``budget`` chunks has just reached (``budget ==
    rung * eta**k``), or None."""
    k, at = 0, pruning.rung
    while at < budget:
        k, at = k + 1, at * pruning.eta
    return k if at == budget else None


def _rank_key(trial: int, value: float) -> tuple:
    """Sort key, best first: higher values, NaN last, the lower trial number on ties."""
    return (math.isnan(value), -value if not math.isnan(value) else 0.0, trial)


def losers(arrivals: Mapping[int, tuple[int, float]], earlier: Mapping[int, list],
           eta: int) -> list[int]:
    """The trials arriving now that lost their rung, worst value first. ``arrivals``: ``{trial:
    (rung, value)}``; ``earlier``: ``{rung: [(trial, value), ...]}`` of the trials that reached
    each rung at an earlier boundary."""
    lost = []
    for k in sorted({r for r, _ in arrivals.values()}):
        now = [(t, v) for t, (r, v) in arrivals.items() if r == k]
        field = sorted([*earlier.get(k, []), *now], key=lambda tv: _rank_key(*tv))
        top = {t for t, _ in field[:max(1, len(field) // eta)]}
        lost += [(t, v) for t, v in now if t not in top]
    return [t for t, v in sorted(lost, key=lambda tv: _rank_key(*tv), reverse=True)]


def occupants(initial: list[int], refills: list[tuple[int, dict]]) -> list[list[tuple]]:
    """Per slot, its trials in order as ``(trial, first chunk)``: ``initial[i]`` from chunk 0,
    then each boundary's ``refills`` (``(chunk, {slot: trial})``, the chunk after which the
    slot was refilled), in chunk order."""
    slots = [[(t, 0)] for t in initial]
    for chunk, filled in sorted(refills, key=lambda cf: cf[0]):
        for slot, trial in filled.items():
            slots[int(slot)].append((int(trial), chunk + 1))
    return slots


def segments(initial: list[int], refills: list[tuple[int, dict]], chunks: int) -> list[dict]:
    """``[{"trial", "slot", "first_chunk", "end_chunk"}]``: which chunks ``[first, end)`` of
    which slot each trial trained, for a program of ``chunks`` chunks."""
    out = []
    for slot, held in enumerate(occupants(initial, refills)):
        ends = [start for _, start in held[1:]] + [chunks]
        out += [{"trial": t, "slot": slot, "first_chunk": start, "end_chunk": end}
                for (t, start), end in zip(held, ends)]
    return sorted(out, key=lambda s: s["trial"])

"""Population-based training's exploit and explore on the host (numpy only): which member of a
population copies which, and the hyperparameters it goes on with (Jaderberg et al. 2017,
truncation selection).

A population is ``P`` slots (configs) run for ``S`` seeds: seed ``j``'s slots are one population,
independent of the other seeds' (``S`` replicate runs of PBT in one program). At each exploit,
within each seed's population, the bottom ``fraction`` of slots by score copy a slot drawn
uniformly from the top ``fraction`` (its parameters, optimizer state and statistics), then
explore: each tuned hyperparameter is the source's multiplied by one of ``perturb`` (0.8 or
1.2), or, with probability ``resample_probability``, drawn afresh from the search space; either
way kept inside the space's bounds. Every draw comes from ``numpy.random.default_rng((seed,
chunk))``: the same scores give the same decisions, so a resumed run redoes them exactly.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import optuna.distributions as od


@dataclasses.dataclass(frozen=True)
class Rule:
    """The exploit and explore rule (module docstring); ``interval``: chunks between exploits;
    ``window``: the last updates of a chunk whose mean training return is a slot's score."""

    interval: int = 2
    fraction: float = 0.25
    perturb: tuple[float, ...] = (0.8, 1.2)
    resample_probability: float = 0.25
    window: int = 10

    def check(self, population: int) -> None:
        if not isinstance(self.interval, int) or self.interval < 1:
            raise ValueError(f"interval must be a whole number of chunks >= 1, got "
                             f"{self.interval!r}")
        if not 0 < self.fraction <= 0.5:
            raise ValueError(f"fraction must be in (0, 0.5], got {self.fraction!r}")
        if population < 2:
            raise ValueError(f"a population needs at least 2 slots, got {population}")
        if not 0 <= self.resample_probability <= 1 or not self.perturb or any(
                not (math.isfinite(f) and f > 0) for f in self.perturb):
            raise ValueError("perturb factors must be positive and resample_probability in "
                             "[0, 1]")


def draw(dist: od.BaseDistribution, rng: np.random.Generator):
    """One value of ``dist`` (a float, whole-number or categorical Optuna distribution)."""
    if isinstance(dist, od.CategoricalDistribution):
        return dist.choices[int(rng.integers(len(dist.choices)))]
    low, high = float(dist.low), float(dist.high)
    x = math.exp(rng.uniform(math.log(low), math.log(high))) if dist.log else rng.uniform(low, high)
    return round(x) if isinstance(dist, od.IntDistribution) else float(x)


def initial_population(dists: dict, population: int, seed: int) -> list[dict]:
    """``population`` slots' starting values, each field drawn from its distribution."""
    rng = np.random.default_rng((int(seed), 0xB7))
    return [{name: draw(d, rng) for name, d in dists.items()} for _ in range(population)]


def sources(scores: np.ndarray, fraction: float, rng: np.random.Generator) -> np.ndarray:
    """``[P, S]`` the slot each slot copies (itself when kept), from ``scores [P, S]`` (NaN: the
    worst): per seed, the bottom ``fraction`` copy slots drawn from the top ``fraction``."""
    slots, seeds = scores.shape
    n = max(1, int(slots * fraction))
    src = np.tile(np.arange(slots)[:, None], (1, seeds))
    for j in range(seeds):
        order = np.argsort(np.where(np.isnan(scores[:, j]), -np.inf, scores[:, j]), kind="stable")
        src[order[:n], j] = rng.choice(order[-n:], size=n)
    return src


def explore(values: dict[str, np.ndarray], src: np.ndarray, dists: dict, rule: Rule,
            rng: np.random.Generator) -> dict[str, np.ndarray]:
    """The tuned hyperparameters ``{name: [P, S]}`` after an exploit by ``src [P, S]``: a
    replaced slot's are its source's, perturbed or resampled (module docstring)."""
    slots, seeds = src.shape
    out = {name: v.copy() for name, v in values.items()}
    for i in range(slots):
        for j in range(seeds):
            if src[i, j] == i:
                continue
            for name, dist in dists.items():
                if rng.uniform() < rule.resample_probability:
                    out[name][i, j] = draw(dist, rng)
                else:
                    factor = rule.perturb[int(rng.integers(len(rule.perturb)))]
                    out[name][i, j] = np.clip(values[name][src[i, j], j] * factor,
                                              dist.low, dist.high)
    return out

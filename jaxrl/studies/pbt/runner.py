"""Population-based training (Jaderberg et al. 2017) with the whole population in one program.

    slots  = P configs drawn from the search space (traced hyperparameters only)
    program = P slots x S seeds as members of one vmapped, chunked run  (`jaxrl.engine.loop`)
    every `interval` chunks, between two chunks:                        (`BetweenChunks`)
        score each member (its mean training return over the chunk's last updates)
        per seed: the bottom fraction copy members of the top fraction (`schedule.sources`)
        and perturb or resample their hyperparameters                    (`schedule.explore`)
        one compiled exploit program applies it on the device            (`program`)

Seed ``j`` of every slot is one population (S independent replicate runs of PBT). Every slot
is a stored run (its metrics are the slot's, whichever member it copied); the lineage (each
exploit's scores, sources and hyperparameters) is kept in ``<root>/pbt/<pbt_id>/``
(`jaxrl.studies.pbt.store`). A run checkpointed (``checkpoint_every``) and stopped resumes with
``resume=PBT_ID``: its exploits depend only on the metrics and the chunk, so it goes on as an
uninterrupted run would.
"""

from __future__ import annotations

import dataclasses
import warnings
from collections.abc import Mapping
from typing import Any

import jax
import numpy as np
import optuna.distributions as od
import pandas as pd

from jaxrl import algos
from jaxrl.config import ConfigError
from jaxrl.engine.loop import BetweenChunks
from jaxrl.engine.recorded import new_group_runs, run_recorded
from jaxrl.engine.spec import ENGINE_OPTIONS, GroupSpec, group_spec, resolve_group
from jaxrl.runs.run_lock import held
from jaxrl.runs.store import RunStore
from jaxrl.studies.pbt import store as pbt_store
from jaxrl.studies.pbt.program import apply_exploit
from jaxrl.studies.pbt.schedule import Rule, explore, initial_population, sources
from jaxrl.studies.search.space import SpaceError, parse_space


@dataclasses.dataclass
class PBTResult:
    """``results[i]``: slot ``i``'s `TrainResult` (its seeds); ``lineage``: each exploit's
    record (`jaxrl.studies.pbt.store`); ``final``: per seed, the slot with the best final
    training score and its final evaluation return (what the population delivers)."""

    pbt_id: str
    results: list
    lineage: dict
    final: pd.DataFrame


def traced_space(space: Mapping[str, Any], config) -> dict:
    """The space's Optuna distributions: each field a traced hyperparameter of ``config`` with
    a float range (`SpaceError` otherwise: PBT changes values inside one program)."""
    dists = parse_space(space, config)
    traced = set(config.traced_names())
    for name, dist in dists.items():
        if name not in traced:
            raise SpaceError(f"search space {name}: population-based training tunes traced "
                             f"hyperparameters only, and {name} is static (it shapes the "
                             f"program)")
        if not isinstance(dist, od.FloatDistribution):
            raise SpaceError(f"search space {name}: population-based training perturbs float "
                             f"ranges (loguniform or uniform)")
    return dists


def scores_of(metrics: dict, window: int, shape: tuple[int, int]) -> np.ndarray:
    """``[P, S]`` each member's mean training return over the chunk's last ``window`` updates
    (NaN where no episode ended)."""
    recent = np.asarray(metrics["episode_return_mean"], dtype=np.float64)[:, -window:]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(recent, axis=1).reshape(shape)


def exploiter(dists: dict, rule: Rule, seed: int, shape: tuple[int, int], resolved, record):
    """The `BetweenChunks.apply` of a population of ``shape`` ``(P, S)``; ``record(chunk,
    entry)`` keeps each exploit's lineage entry."""
    slots, seeds = shape

    def apply(state, metrics: dict, chunk: int, placed):
        rng = np.random.default_rng((int(seed), chunk + 1))
        scores = scores_of(metrics, rule.window, shape)
        src = sources(scores, rule.fraction, rng)
        hp = jax.device_get(state.hparams)
        values = {n: np.asarray(getattr(hp, n), np.float64)[:slots * seeds].reshape(shape)
                  for n in dists}
        new = explore(values, src, dists, rule, rng)
        record(chunk, {"scores": scores.tolist(), "sources": src.tolist(),
                       "hparams": {n: v.tolist() for n, v in new.items()}})
        member_source = (src * seeds + np.arange(seeds)[None, :]).reshape(-1)
        return apply_exploit(state, member_source, {n: v.reshape(-1) for n, v in new.items()},
                             placed, resolved)

    return apply


def pbt(algo: str, env: str = "CartPole-v1", space: Mapping[str, Any] | None = None,
        population: int = 8, seeds: int = 8, total_steps: int = 100_000,
        rule: Rule | None = None, seed: int = 0, runs_dir: str | None = None,
        resume: str | None = None, progress: bool = True, command: list[str] | None = None,
        **kwargs) -> PBTResult:
    """Population-based training of ``algo`` on ``env``: ``population`` slots drawn from
    ``space`` (traced hyperparameters), each run for ``seeds`` seeds and ``total_steps`` env
    steps a seed, all in one program, exploiting and exploring by ``rule`` (`Rule`) between
    chunks; see the module docstring. Other keyword arguments: engine options
    (``checkpoint_every``, ``max_chunk_updates``, ``eval_episodes``, ...) and fixed config
    overrides. ``resume``: a stored run's ``pbt_id``, continued from its newest checkpoint."""
    rule = rule or Rule()
    try:
        rule.check(population)
    except ValueError as err:
        raise ConfigError(str(err)) from None
    dists = traced_space(space or {}, algos.get(algo).default_config(env))
    options = {k: kwargs.pop(k) for k in ENGINE_OPTIONS if k in kwargs and k != "seed"}
    store = RunStore(runs_dir)
    request = {"algo": algo, "env": env, "space": {k: repr(v) for k, v in dists.items()},
               "population": population, "seeds": seeds, "total_steps": total_steps,
               "rule": dataclasses.asdict(rule), "seed": seed, "fixed": dict(kwargs),
               "options": options}
    if resume is None:
        configs = [{**kwargs, **slot} for slot in initial_population(dists, population, seed)]
        spec = group_spec(algo, env, seeds, total_steps, configs, seed, **options)
        resolved = resolve_group(spec)
        pbt_id = pbt_store.new_id(algo, env)
        runs = new_group_runs(store, spec, resolved, command,
                              [{"pbt_id": pbt_id, "pbt_slot": i} for i in range(population)])
        pbt_store.write_request(store.root, pbt_id, request, [r.run_id for r in runs], configs)
        return _run(store, pbt_id, spec, resolved, runs, dists, rule, seed, progress, False)
    run_ids = pbt_store.check_request(store.root, resume, request)
    first = store.open(run_ids[0])
    with held(first.folder, run_ids[0]):
        runs = [store.open(rid) for rid in run_ids]
        spec = GroupSpec.from_dict(first.meta["group"]["spec"])
        resolved = resolve_group(spec)
        for run in runs:
            run.reopen()
        return _run(store, resume, spec, resolved, runs, dists, rule, seed, progress, True)


def _run(store, pbt_id: str, spec, resolved, runs, dists, rule: Rule, seed: int,
         progress: bool, restore: bool) -> PBTResult:
    """Train the population's group (``restore``: from its newest checkpoint) and read back
    what it did."""
    shape = (len(resolved.configs), spec.seeds)
    record = lambda chunk, entry: pbt_store.record_exploit(store.root, pbt_id, chunk, entry)
    between = BetweenChunks(rule.interval, exploiter(dists, rule, seed, shape, resolved,
                                                     record))
    results = run_recorded(spec, resolved, runs, progress=progress, restore=restore,
                           stop_on_non_finite=False, between=between)
    return PBTResult(pbt_id, results, pbt_store.lineage(store.root, pbt_id),
                     final_table(results, rule.window))


def final_table(results: list, window: int) -> pd.DataFrame:
    """Per seed: the slot whose training return over the last ``window`` updates is best, that
    score and the slot's final evaluation return (chosen by training, so the evaluation is not
    a maximum over slots)."""
    with warnings.catch_warnings():  # a seed that ended no episode: NaN, ranked last
        warnings.simplefilter("ignore", RuntimeWarning)
        scores = np.stack([[np.nanmean(rows["episode_return_mean"].to_numpy(float)[-window:])
                            for _, rows in r.metrics.sort_values("update").groupby("seed")]
                           for r in results])  # [P, S]
    scores = np.where(np.isnan(scores), -np.inf, scores)
    best = scores.argmax(axis=0)
    return pd.DataFrame({"seed": np.arange(scores.shape[1]), "slot": best,
                         "train_score": scores[best, np.arange(scores.shape[1])],
                         "final_eval_return": [float(results[i].final_eval_return[j])
                                               for j, i in enumerate(best)]})

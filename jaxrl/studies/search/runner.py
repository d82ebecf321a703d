"""Hyperparameter search with Optuna's samplers, a batch of trials trained as one program.

    for each batch:                                        # until `trials` are done
        ask B trials of the sampler (seeded per batch)     # TPE (constant liar), CMA-ES, random
        sweep(configs = their params, seeds = S)           # one program per static group:
                                                           # traced values never recompile
        tell each trial its objective                      # IQM over seeds of the final eval

The study lives in the run store, ``<root>/searches/<search_id>/`` (`jaxrl.studies.search.store`):
Optuna's journal beside the request, and every trial's runs are ordinary stored runs of the
batch's sweep. The sampler is seeded anew for each batch from ``(seed, batch)``, so what a
batch asks depends only on the trials told before it: a killed search resumed
(``resume=SEARCH_ID``) re-runs its unfinished batch (the sweep's own resume: finished groups
are kept) and then asks what an uninterrupted search would have asked.

With ``prune`` (`jaxrl.studies.search.pruning`), a batch's trials are the slots of one program
instead: every ``rung`` chunks the trials at a rung report their value, the losers of
successive halving are pruned and their slots refilled by newly asked trials, fresh parameters
and their own hyperparameters, in the same program (`jaxrl.studies.search.pruned`); batches
follow until ``trials`` are asked.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import optuna
import pandas as pd

from jaxrl import algos
from jaxrl.config import ConfigError
from jaxrl.engine.loop import chunk_length
from jaxrl.engine.spec import ENGINE_OPTIONS, MAX_CHUNK_UPDATES, group_spec, resolve_group
from jaxrl.runs.demos import with_demos_found
from jaxrl.runs.store import RunStore
from jaxrl.studies.search import store as search_store
from jaxrl.studies.search.pruned import PrunedSearch, run_pruned
from jaxrl.studies.search.pruning import check_setting, parse_prune
from jaxrl.studies.search.space import parse_space
from jaxrl.studies.sweep.runner import sweep

SAMPLERS = ("tpe", "cmaes", "random")
OBJECTIVES = ("final_eval_iqm", "final_eval_mean")


@dataclasses.dataclass
class SearchResult:
    """``table``: one row per trial (number, batch, params, objective, state, run id; pruned:
    its slot and budget, the env steps per seed it trained), best first; ``best``: the best
    trial's params; ``study``: the Optuna study (its plots, `optuna.visualization`)."""

    search_id: str
    algo: str
    env: str
    table: pd.DataFrame
    best: dict
    best_value: float
    study: Any


def make_sampler(name: str, seed: int) -> optuna.samplers.BaseSampler:
    """Optuna's sampler ``name`` (`SAMPLERS`) seeded with ``seed``."""
    if name == "tpe":
        return optuna.samplers.TPESampler(seed=seed, constant_liar=True, multivariate=True)
    if name == "cmaes":
        return optuna.samplers.CmaEsSampler(seed=seed)
    if name == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    raise ConfigError(f"unknown sampler {name!r}; use one of {', '.join(SAMPLERS)}")


def batch_seed(seed: int, batch: int) -> int:
    """The sampler's seed for batch ``batch`` of a search seeded ``seed``."""
    return (int(seed) * 1_000_003 + int(batch)) % (2**32)


def check_request(trials: int, batch: int, sampler: str, objective: str) -> None:
    """One-line `ConfigError` for a search request that cannot run."""
    for name, value in (("trials", trials), ("batch", batch)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ConfigError(f"{name} must be a whole number >= 1, got {value!r}")
    if sampler not in SAMPLERS:
        raise ConfigError(f"unknown sampler {sampler!r}; use one of {', '.join(SAMPLERS)}")
    if objective not in OBJECTIVES:
        raise ConfigError(f"unknown objective {objective!r}; use one of "
                          f"{', '.join(OBJECTIVES)}")


def search(algo: str, env: str = "CartPole-v1", space: Mapping[str, Any] | None = None,
           trials: int = 64, batch: int = 16, seeds: int = 4, total_steps: int = 100_000,
           sampler: str = "tpe", seed: int = 0, objective: str = "final_eval_iqm",
           runs_dir: str | None = None, resume: str | None = None, progress: bool = True,
           command: list[str] | None = None, prune: Any = None, **kwargs) -> SearchResult:
    """Search ``space`` (`jaxrl.studies.search.space`) for ``algo`` on ``env``: ``trials``
    trials in batches of ``batch``, each trained for ``seeds`` seeds and ``total_steps`` env
    steps a seed and scored by ``objective`` (the IQM or mean over seeds of the final
    evaluation return); see the module docstring. Other keyword arguments: engine options and
    fixed config overrides, as `jaxrl.sweep` takes them. ``resume``: a stored search's id,
    continued where it stopped (the same request). ``prune``: successive halving with refills
    (`jaxrl.studies.search.pruning.parse_prune`: True, ``"rung=1,eta=3,window=10"``, a mapping
    or a `Pruning`)."""
    check_request(trials, batch, sampler, objective)
    pruning = parse_prune(prune)
    root = RunStore(runs_dir).root
    config = algos.get(algo).default_config(env)
    dists = parse_space(space or {}, config)
    options = {k: kwargs[k] for k in ENGINE_OPTIONS if k in kwargs and k != "seed"}
    fixed = with_demos_found({k: v for k, v in kwargs.items() if k not in options}, runs_dir)
    group = dict(algo=algo, env=env, seeds=seeds, total_steps=total_steps, seed=seed, **options)
    if pruning is not None:  # one line before anything is stored or trained
        resolved = resolve_group(group_spec(configs=[fixed], **group))
        k = chunk_length(resolved.num_updates,
                         options.get("max_chunk_updates", MAX_CHUNK_UPDATES))
        check_setting(pruning, config, dists, trials, batch, resolved.num_updates // k, k)
    request = {"algo": algo, "env": env, "space": {k: repr(v) for k, v in dists.items()},
               "trials": trials, "batch": batch, "seeds": seeds, "total_steps": total_steps,
               "sampler": sampler, "seed": seed, "objective": objective,
               "fixed": {k: v for k, v in kwargs.items()},
               "prune": dataclasses.asdict(pruning) if pruning is not None else None}
    search_id = search_store.open_search(root, request, resume)
    study = optuna.create_study(storage=search_store.journal(root, search_id),
                                study_name=search_id, direction="maximize", load_if_exists=True)
    if pruning is not None:
        run_pruned(PrunedSearch(study, dists, pruning, root, search_id, trials, batch,
                                lambda s: make_sampler(sampler, s), seed, objective, group,
                                fixed, command, progress))
        return result_of(study, root, search_id, algo, env)
    sweep_args = dict(algo=algo, env=env, seeds=seeds, total_steps=total_steps, seed=seed,
                      runs_dir=runs_dir, progress=progress, command=command, **kwargs)
    for b in range(math.ceil(trials / batch)):
        size = min(batch, trials - b * batch)
        asked = search_store.batch_trials(study, b)
        if len(asked) == size and all(t.state.is_finished() for t in asked):
            continue  # told before the search was stopped
        study.sampler = make_sampler(sampler, batch_seed(seed, b))
        for _ in range(size - len(asked)):
            study.ask(dists).set_user_attr("batch", b)
        run_batch(study, search_store.batch_trials(study, b), objective, sweep_args,
                  lambda record, b=b: search_store.record_batch(root, search_id, b, record))
    return result_of(study, root, search_id, algo, env)


def result_of(study, root, search_id: str, algo: str, env: str) -> SearchResult:
    """The `SearchResult` of a stored search's study."""
    table = trial_table(study, search_store.batch_records(root, search_id))
    done = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
    best = max(done, key=lambda t: t.value) if done else None
    return SearchResult(search_id, algo, env, table, dict(best.params) if best else {},
                        best.value if best else float("nan"), study)


def run_batch(study, trials: list, objective: str, sweep_args: dict, record) -> None:
    """Train a batch's ``trials`` (frozen, in order) as one sweep (resumed where it was stored
    before: its finished groups are kept), ``record`` its sweep and runs, and tell each trial
    not yet told its ``objective`` (a trial with no finite value fails)."""
    result = sweep(configs=[dict(t.params) for t in trials], resume=True, keep_results=False,
                   **sweep_args)
    column = "iqm" if objective == "final_eval_iqm" else "mean"
    rows = result.table.set_index("config")
    record({"sweep_id": result.sweep_id, "trials": [t.number for t in trials],
            "run_ids": [rows.at[i, "run_id"] for i in range(len(trials))]})
    for i, trial in enumerate(trials):
        if trial.state.is_finished():
            continue
        value = float(rows.at[i, column])
        if math.isfinite(value):
            study.tell(trial.number, value)
        else:
            study.tell(trial.number, state=optuna.trial.TrialState.FAIL)


def trial_table(study, batches: dict) -> pd.DataFrame:
    """One row per trial: number, batch, params, objective value (NaN unless complete), state,
    run id (from the ``batches`` records, `search_store.batch_records`; a pruned search's: its
    slot's run, the slot and its budget in env steps per seed); best first."""
    where = {}
    for rec in batches.values():
        for seg in rec.get("segments", []):  # a pruned batch, ended
            where[seg["trial"]] = {"run_id": rec["run_ids"][seg["slot"]], "slot": seg["slot"],
                                   "budget": (seg["end_chunk"] - seg["first_chunk"])
                                   * rec["chunk_steps"]}
        if not rec.get("pruned"):
            where.update({n: {"run_id": r} for n, r in zip(rec["trials"], rec["run_ids"])})
    done = optuna.trial.TrialState.COMPLETE
    rows = [{"trial": t.number, "batch": t.user_attrs.get("batch"), **t.params,
             "value": t.value if t.state == done else np.nan, "state": t.state.name,
             "run_id": None, **where.get(t.number, {})}
            for t in study.get_trials(deepcopy=False)]
    table = pd.DataFrame(rows)
    if table.empty:
        return table
    table = table.sort_values("value", ascending=False, na_position="last", kind="stable")
    table.insert(0, "rank", np.arange(1, len(table) + 1))
    return table.reset_index(drop=True)

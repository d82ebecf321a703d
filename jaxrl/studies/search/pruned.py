"""A pruned search's batches: B slots x S seeds as one program, rungs judged between chunks.

    for each batch, until the search's trials are asked:
        ask B trials; slot i x seed j is one member of one program
        every `rung` chunks, between two chunks:                 (`BetweenChunks`, as PBT's)
            each trial at a rung reports its value there             (`trial.report`)
            the losers are pruned and told so (`pruning`), and each one's slot is refilled by a
            newly asked trial: the group's init program starts its members afresh, with their
            own hyperparameters and fresh keys, and a select program puts them in its place
            (`jaxrl.studies.pbt.program.apply_refill`)
        at the end, each slot's last trial is told its objective (its final evaluation)

Each ask's sampler is seeded from ``(seed, batch, first chunk, slot)``, so what it asks depends
only on the trials asked and told before it.

A refill resets the slot's whole train state: seed ``j`` of a refilled trial ``n`` starts from
``fold_in(seed_key_j, n)`` (a key no other member holds; a first-wave trial starts from
``seed_key_j`` itself, as a sweep's config does), with the init program's fresh parameters,
optimizer state, observation and reward statistics, counters and schedules (its learning-rate
annealing starts again), envs and replay buffer. The other members go on bit for bit.

Every decision is kept in the search's ``rungs.json`` before its refill runs
(`jaxrl.studies.search.store`), and every Optuna call is made so that redoing it changes
nothing (a report at a step already reported, a tell of a finished trial and an ask already
made, found by its batch, slot and first chunk, are skipped). A killed batch resumed (with its
checkpoints, from the newest; without, from its first update) replays the recorded decisions
and decides the next ones from the same values: it ends as an uninterrupted one does.
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import optuna

from jaxrl import stats
from jaxrl.engine.loop import BetweenChunks, chunk_length
from jaxrl.engine.members import seed_keys
from jaxrl.engine.recorded import new_group_runs, run_recorded
from jaxrl.engine.spec import group_spec, resolve_group
from jaxrl.runs.integrity import chunk_files
from jaxrl.runs.run_lock import held
from jaxrl.runs.store import RunStore
from jaxrl.studies.pbt.program import apply_refill
from jaxrl.studies.pbt.runner import scores_of
from jaxrl.studies.search import store as search_store
from jaxrl.studies.search.pruning import Pruning, losers, occupants, rung_at, segments

RUNNING = optuna.trial.TrialState.RUNNING


@dataclasses.dataclass
class PrunedSearch:
    """What the batches of one pruned search share: the study and its space, the rule, the
    store, the budget (``trials`` asked in all) and the program's request."""

    study: Any
    dists: dict
    pruning: Pruning
    root: Path
    search_id: str
    trials: int
    batch: int
    sampler: Any  # (seed) -> an Optuna sampler
    seed: int
    objective: str
    group: dict  # `group_spec`'s arguments but the configs: algo, env, seeds, total_steps, ...
    fixed: dict  # config overrides every trial shares
    command: list | None = None
    progress: bool = True

    def aggregate(self, values) -> float:
        """A trial's value from its seeds' (IQM or mean, as the objective)."""
        return stats.iqm(values) if self.objective == "final_eval_iqm" else stats.mean(values)

    def trial(self, b: int, slot: int, first_chunk: int):
        """The trial asked for ``slot`` of batch ``b`` from ``first_chunk``: found in the study
        (asked before a kill), else asked now of a sampler seeded from ``(seed, b,
        first_chunk, slot)`` (what it asks depends only on the trials told before)."""
        for t in self.study.get_trials(deepcopy=False):
            if (t.user_attrs.get("batch"), t.user_attrs.get("slot"),
                    t.user_attrs.get("first_chunk")) == (b, slot, first_chunk):
                return t
        entropy = (self.seed, b, first_chunk, slot)
        self.study.sampler = self.sampler(int(np.random.SeedSequence(entropy).generate_state(1)[0]))
        asked = self.study.ask(self.dists)
        for name, value in (("batch", b), ("slot", slot), ("first_chunk", first_chunk)):
            asked.set_user_attr(name, value)
        return self.study.get_trials(deepcopy=False)[asked.number]

    def asked_before(self, b: int) -> int:
        return sum(1 for t in self.study.get_trials(deepcopy=False)
                   if t.user_attrs.get("batch", b) < b)


def run_pruned(search: PrunedSearch) -> None:
    """Every batch of the search (`run_batch`) until its trials are asked and told; batches
    a stored search finished are skipped."""
    b = 0
    while True:
        record = search_store.batch_records(search.root, search.search_id).get(str(b))
        if record is None and search.asked_before(b) >= search.trials:
            return
        if record is None or not record.get("finished"):
            run_batch(search, b)
        b += 1


def run_batch(search: PrunedSearch, b: int) -> None:
    """Train batch ``b`` as one program with its rungs between chunks (module docstring),
    resumed where a stored one stopped, then tell each slot's last trial its objective."""
    record = search_store.batch_records(search.root, search.search_id).get(str(b))
    size = (len(record["trials"]) if record else
            min(search.batch, search.trials - search.asked_before(b)))
    initial = [search.trial(b, i, 0) for i in range(size)]
    spec = group_spec(configs=[{**search.fixed, **t.params} for t in initial], **search.group)
    resolved = resolve_group(spec)
    k = chunk_length(resolved.num_updates, spec.max_chunk_updates)
    store, resumed = RunStore(search.root), record is not None
    if record is None:
        runs = new_group_runs(store, spec, resolved, search.command,
                              [{"search_id": search.search_id, "search_batch": b,
                                "search_slot": i} for i in range(size)])
        record = {"pruned": True, "trials": [t.number for t in initial],
                  "run_ids": [r.run_id for r in runs], "chunk_updates": k,
                  "chunk_steps": k * resolved.config.steps_per_update,
                  "chunks": resolved.num_updates // k}
        search_store.record_batch(search.root, search.search_id, b, record)
    else:
        runs = [store.open(rid) for rid in record["run_ids"]]
    if all(ended(run) for run in runs):  # trained to its end, killed before its tells
        finals = [run.meta["final_eval_return"] for run in runs]
    else:
        with held(runs[0].folder, runs[0].run_id):  # one process trains a batch at a time
            restore = reopen(runs) if resumed else False
            finals = train(search, b, spec, resolved, runs, record, restore)
    tell_finals(search, b, record, finals)


def ended(run) -> bool:
    """Whether ``run`` was trained to its end and recorded (its final evaluation stored)."""
    return run.meta.get("status") in ("finished", "failed") and "final_eval_return" in run.meta


def reopen(runs: list) -> bool:
    """Reopen a stopped batch's runs; whether they go on from their newest checkpoint (else
    from their first update, their stale chunks removed)."""
    folder = runs[0].checkpoint_dir
    restore = (folder is not None and folder.is_dir() and any(folder.iterdir())
               and bool(chunk_files(runs[0].folder)))
    for run in runs:
        run.reopen()
        if not restore:
            for chunk in chunk_files(run.folder):
                chunk.unlink()
    return restore


def train(search, b, spec, resolved, runs, record, restore: bool) -> list:
    """Run batch ``b``'s program with its rung hook; each slot's final evaluation returns."""
    hook = BetweenChunks(search.pruning.rung, rung_hook(search, b, record, spec.seeds, resolved))
    results = run_recorded(spec, resolved, runs, progress=search.progress, restore=restore,
                           stop_on_non_finite=False, between=hook)
    return [np.asarray(r.final_eval_return, float).tolist() for r in results]


def refills_of(records: dict, b: int, before: int) -> list[tuple[int, dict]]:
    """``(chunk, {slot: trial})`` of batch ``b``'s boundaries before chunk ``before``."""
    return [(c, rec["refills"]) for (bb, c), rec in records.items() if bb == b and c < before]


def rung_hook(search: PrunedSearch, b: int, record: dict, seeds: int, resolved):
    """The `BetweenChunks.apply` of batch ``b``: decide the boundary (or read its recorded
    decision), make its Optuna calls, record it, refill the pruned trials' slots."""
    initial = record["trials"]
    base = seed_keys(search.seed, seeds)  # [seeds]

    def apply(state, metrics: dict, chunk: int, placed):
        records = search_store.rung_records(search.root, search.search_id)
        slots = occupants(initial, refills_of(records, b, chunk))
        decision = records.get((b, chunk)) or decide(search, b, chunk, slots, metrics, records,
                                                     record, seeds)
        if decision is None:
            return state
        refills = carry_out(search, b, chunk, slots, decision)
        if not refills:
            return state
        trials = {t.number: t for t in search.study.get_trials(deepcopy=False)}
        members = np.array([s * seeds + j for s in sorted(refills) for j in range(seeds)])
        keys = jnp.stack([jax.random.fold_in(base[j], refills[s]) for s in sorted(refills)
                                for j in range(seeds)])
        hparams = [resolved.config.replace(**trials[refills[s]].params).hparams()
                   for s in sorted(refills) for _ in range(seeds)]
        return apply_refill(state, members, keys, hparams, placed, resolved)

    return apply


def decide(search, b, chunk, slots, metrics, records, record, seeds) -> dict | None:
    """The decision after chunk ``chunk`` (`jaxrl.studies.search.pruning`), or None when no
    trial is at a rung: ``{"rungs": {trial: [rung, value, env steps]}, "pruned": [trial]}``."""
    p = search.pruning
    scores = scores_of(metrics, p.window, (len(slots), seeds))
    arrivals, rungs = {}, {}
    for slot, held_by in enumerate(slots):
        trial, first = held_by[-1]
        k = rung_at(chunk + 1 - first, p)
        if k is not None:
            value = search.aggregate(scores[slot])
            arrivals[trial] = (k, value)
            rungs[str(trial)] = [k, None if math.isnan(value) else value,
                                 (chunk + 1 - first) * record["chunk_steps"]]
    if not arrivals:
        return None
    earlier: dict[int, list] = {}
    for key, rec in records.items():
        if key < (b, chunk):
            for t, (k, v, _) in rec["rungs"].items():
                earlier.setdefault(k, []).append((int(t), math.nan if v is None else v))
    asked = (search.asked_before(b) + len(record["trials"])
             + sum(len(f) for _, f in refills_of(records, b, chunk)))
    free = search.trials - asked if record["chunks"] - (chunk + 1) >= p.rung else 0
    return {"rungs": rungs, "pruned": losers(arrivals, earlier, p.eta)[:max(free, 0)]}


def carry_out(search, b, chunk, slots, decision: dict) -> dict[int, int]:
    """Make the decision's Optuna calls (each skipped when already made), record it, and
    return its refills ``{slot: new trial}``."""
    study = search.study
    trials = {t.number: t for t in study.get_trials(deepcopy=False)}
    for t, (_, value, steps) in decision["rungs"].items():
        frozen = trials[int(t)]
        if frozen.state == RUNNING and steps not in frozen.intermediate_values:
            optuna.trial.Trial(study, frozen._trial_id).report(
                math.nan if value is None else value, steps)
    for t in decision["pruned"]:
        if trials[t].state == RUNNING:
            study.tell(t, state=optuna.trial.TrialState.PRUNED)
    slot_of = {held_by[-1][0]: slot for slot, held_by in enumerate(slots)}
    refills = {}
    for t in decision["pruned"]:
        slot = slot_of[t]
        refills[slot] = search.trial(b, slot, chunk + 1).number
    decision = {**decision, "refills": {str(s): t for s, t in refills.items()}}
    search_store.record_rungs(search.root, search.search_id, b, chunk, decision)
    return refills


def tell_finals(search: PrunedSearch, b: int, record: dict, finals: list) -> None:
    """Tell each slot's last trial its objective over ``finals[slot]`` (per seed; a trial with
    no finite value fails), and record the batch's segments: which chunks of which slot each
    trial trained."""
    records = search_store.rung_records(search.root, search.search_id)
    refills = refills_of(records, b, record["chunks"])
    trials = {t.number: t for t in search.study.get_trials(deepcopy=False)}
    for slot, held_by in enumerate(occupants(record["trials"], refills)):
        trial = held_by[-1][0]
        if trials[trial].state != RUNNING:
            continue
        value = search.aggregate(np.array([np.nan if v is None else v for v in finals[slot]]))
        if math.isfinite(value):
            search.study.tell(trial, value)
        else:
            search.study.tell(trial, state=optuna.trial.TrialState.FAIL)
    search_store.record_batch(search.root, search.search_id, b, {
        **record, "segments": segments(record["trials"], refills, record["chunks"]),
        "finished": True})

"""A search in the run store, so that it can be resumed and read back.

::

    <root>/searches/<search_id>/search.json     the request (algorithm, env, space, budget, ...)
    <root>/searches/<search_id>/journal.log     Optuna's journal: every trial asked and told
    <root>/searches/<search_id>/batches.json    per batch: its sweep id, trials and run ids
    <root>/searches/<search_id>/rungs.json      a pruned search: per rung boundary ("B/C":
                                                batch B, after its chunk C), each trial's rung
                                                and value, the trials pruned, the slots refilled

Each trial's runs are the stored runs of its batch's sweep (`jaxrl.studies.sweep`). A pruned
search (`jaxrl.studies.search.pruned`) shares its runs between trials instead: a batch's record
holds one run per *slot* (``run.json``: ``search_id``, ``search_batch``, ``search_slot``), its
first trials, its chunk length and, once it ends, its ``segments``: which chunks ``[first_chunk,
end_chunk)`` of which slot's run each trial trained (`pruning.segments`; until it ends, they
follow from ``rungs.json``). `trial_metrics` reads one trial's updates back.
"""

from __future__ import annotations

import json
from pathlib import Path

import optuna
import pandas as pd
from optuna.storages import JournalStorage
from optuna.storages.journal import JournalFileBackend

from jaxrl.runs.files import (
    StoreError,
    add_json_record,
    atomic_write_text,
    json_default,
    json_records,
    stamped_id,
)
from jaxrl.runs.query import load_metrics
from jaxrl.runs.store import RunStore, valid_run_id

REQUEST, JOURNAL, BATCHES, RUNGS = "search.json", "journal.log", "batches.json", "rungs.json"
# what a resumed search may change: the trial count (a search extended with more trials)
MAY_CHANGE = ("trials",)


def search_dir(root, search_id: str) -> Path:
    """Where search ``search_id`` lives (a name, never a path)."""
    return Path(root) / "searches" / valid_run_id(search_id, "search id")


def open_search(root, request: dict, resume: str | None) -> str:
    """A new search's id (its folder and request written), or ``resume``'s after checking that
    its stored request is this one but for `MAY_CHANGE` (one-line `StoreError` otherwise)."""
    normal = json.loads(json.dumps(request, default=json_default, sort_keys=True))
    if resume is None:
        search_id = f"search-{stamped_id(request['algo'], request['env'])}"
        folder = search_dir(root, search_id)
        folder.mkdir(parents=True)
        atomic_write_text(folder / REQUEST, json.dumps(normal, indent=2))
        return search_id
    folder = search_dir(root, resume)
    try:
        stored = json.loads((folder / REQUEST).read_text())
    except FileNotFoundError:
        raise StoreError(f"no search {resume!r} in {root}") from None
    except (OSError, json.JSONDecodeError) as err:
        raise StoreError(f"search {resume!r}: cannot read its {REQUEST}: {err}") from None
    differ = sorted(k for k in {*stored, *normal} if k not in MAY_CHANGE
                    and stored.get(k) != normal.get(k))
    if differ:
        raise StoreError(f"search {resume!r} was another request ({', '.join(differ)} "
                         f"differ); resume it with the same arguments")
    atomic_write_text(folder / REQUEST, json.dumps(normal, indent=2))
    return resume


def journal(root, search_id: str) -> JournalStorage:
    """The search's Optuna storage: a journal file in its folder."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    path = search_dir(root, search_id) / JOURNAL
    return JournalStorage(JournalFileBackend(str(path)))


def batch_trials(study, b: int) -> list:
    """The trials asked for batch ``b`` (frozen, in the order asked)."""
    return sorted((t for t in study.get_trials(deepcopy=False) if t.user_attrs.get("batch") == b),
                  key=lambda t: t.number)


def batch_records(root, search_id: str) -> dict[str, dict]:
    """``{batch: {"sweep_id", "trials", "run_ids"}}`` of the batches trained so far."""
    return json_records(search_dir(root, search_id) / BATCHES)


def record_batch(root, search_id: str, b: int, record: dict) -> None:
    """Add batch ``b``'s record (`batch_records`)."""
    add_json_record(search_dir(root, search_id) / BATCHES, b, record)


def rung_records(root, search_id: str) -> dict[tuple[int, int], dict]:
    """``{(batch, chunk): record}`` of a pruned search's rung boundaries, in order: each
    ``{"rungs": {trial: [rung, value, env steps]}, "pruned": [trial], "refills": {slot:
    trial}}``."""
    records = json_records(search_dir(root, search_id) / RUNGS)
    keyed = {tuple(int(x) for x in key.split("/")): rec for key, rec in records.items()}
    return dict(sorted(keyed.items()))


def record_rungs(root, search_id: str, b: int, chunk: int, record: dict) -> None:
    """Keep batch ``b``'s decisions after its chunk ``chunk`` (`rung_records`)."""
    add_json_record(search_dir(root, search_id) / RUNGS, f"{b}/{chunk}", record)


def trial_metrics(root, search_id: str, trial: int) -> pd.DataFrame:
    """The metrics of trial ``trial`` of a pruned search: the rows of its slot's run in the
    updates it trained, ``update`` counted from the trial's own first update."""
    for record in batch_records(root, search_id).values():
        for seg in record.get("segments", []):
            if seg["trial"] == trial:
                k = record["chunk_updates"]
                frame = load_metrics(record["run_ids"][seg["slot"]], RunStore(root))
                first, end = seg["first_chunk"] * k, seg["end_chunk"] * k
                rows = frame[(frame["update"] >= first) & (frame["update"] < end)].copy()
                rows["update"] -= first
                return rows.reset_index(drop=True)
    raise StoreError(f"search {search_id!r} holds no finished segment of trial {trial}")

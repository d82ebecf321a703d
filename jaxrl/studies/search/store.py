"""A search in the run store, so that it can be resumed and read back.

::

    <root>/searches/<search_id>/search.json     the request (algorithm, env, space, budget, ...)
    <root>/searches/<search_id>/journal.log     Optuna's journal: every trial asked and told
    <root>/searches/<search_id>/batches.json    per batch: its sweep id, trials and run ids

Each trial's runs are the stored runs of its batch's sweep (`jaxrl.studies.sweep`).
"""

from __future__ import annotations

import json
from pathlib import Path

import optuna
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
from jaxrl.runs.store import valid_run_id

REQUEST, JOURNAL, BATCHES = "search.json", "journal.log", "batches.json"
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

"""A population-based training run in the run store.

::

    <root>/pbt/<pbt_id>/pbt.json        the request, the slots' run ids and starting configs
    <root>/pbt/<pbt_id>/lineage.json    per exploit (keyed by chunk): each member's score, the
                                        slot it copied ([P][S]) and its hyperparameters after

Each slot is an ordinary stored run (``pbt_id`` and ``pbt_slot`` in its ``run.json``).
"""

from __future__ import annotations

import json
from pathlib import Path

from jaxrl.runs.files import (
    StoreError,
    add_json_record,
    atomic_write_text,
    json_default,
    json_records,
    stamped_id,
)
from jaxrl.runs.store import valid_run_id

REQUEST, LINEAGE = "pbt.json", "lineage.json"


def pbt_dir(root, pbt_id: str) -> Path:
    return Path(root) / "pbt" / valid_run_id(pbt_id, "pbt id")


def new_id(algo: str, env: str) -> str:
    return f"pbt-{stamped_id(algo, env)}"


def _normal(request: dict) -> dict:
    return json.loads(json.dumps(request, default=json_default, sort_keys=True))


def write_request(root, pbt_id: str, request: dict, run_ids: list[str], configs: list) -> None:
    folder = pbt_dir(root, pbt_id)
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write_text(folder / REQUEST, json.dumps(
        {"request": _normal(request), "run_ids": run_ids, "configs": configs}, indent=2,
        default=json_default))


def check_request(root, pbt_id: str, request: dict) -> list[str]:
    """The slots' run ids of stored run ``pbt_id``, after checking it was this ``request``
    (one-line `StoreError` otherwise)."""
    try:
        stored = json.loads((pbt_dir(root, pbt_id) / REQUEST).read_text())
    except FileNotFoundError:
        raise StoreError(f"no population-based training {pbt_id!r} in {root}") from None
    except (OSError, json.JSONDecodeError) as err:
        raise StoreError(f"pbt {pbt_id!r}: cannot read its {REQUEST}: {err}") from None
    normal = _normal(request)
    differ = sorted(k for k in {*stored["request"], *normal}
                    if stored["request"].get(k) != normal.get(k))
    if differ:
        raise StoreError(f"pbt {pbt_id!r} was another request ({', '.join(differ)} differ); "
                         f"resume it with the same arguments")
    return list(stored["run_ids"])


def lineage(root, pbt_id: str) -> dict:
    """``{chunk: {"scores", "sources", "hparams"}}`` of the exploits so far."""
    return json_records(pbt_dir(root, pbt_id) / LINEAGE)


def record_exploit(root, pbt_id: str, chunk: int, entry: dict) -> None:
    """Keep the exploit after chunk ``chunk`` (a resumed run redoing it writes the same)."""
    add_json_record(pbt_dir(root, pbt_id) / LINEAGE, chunk, entry)

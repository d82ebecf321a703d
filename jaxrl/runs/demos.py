"""The demonstration sets of a run store (recorded by `jaxrl.trained.demonstrations`)::

    <store>/.demos/<demo_id>/demo.json       the source run and seed, env and its options,
                                             the policy (deterministic or sampled), shapes,
                                             per-episode returns and lengths
    <store>/.demos/<demo_id>/steps.parquet   one row per step, episode-major: episode, t,
                                             obs (flattened), action, reward, terminated,
                                             truncated, episode_return

Host-side only (pyarrow, no JAX), so listing them is quick. ``reward`` is the env's training
reward; ``episode_return`` the true return of the whole episode, as evaluation reports it.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from jaxrl.runs.files import atomic_write_bytes, atomic_write_text, stamped_id, write_error
from jaxrl.runs.layout import store_root
from jaxrl.runs.store import StoreError

DEMOS_DIR = ".demos"
META, STEPS = "demo.json", "steps.parquet"


@dataclasses.dataclass
class Demos:
    """A set of demonstrations as host arrays, ``S`` steps over all episodes, episode-major:
    ``obs [S, *obs_shape]``, ``action [S, *action_shape]`` (env actions), ``reward``,
    ``terminated``, ``truncated``, ``episode``, ``t`` ``[S]``; ``returns [episodes]``."""

    demo_id: str
    obs: np.ndarray
    action: np.ndarray
    reward: np.ndarray
    terminated: np.ndarray
    truncated: np.ndarray
    episode: np.ndarray
    t: np.ndarray
    returns: np.ndarray
    meta: dict

    @property
    def num_steps(self) -> int:
        return int(self.obs.shape[0])


def write_demos(played: dict[str, np.ndarray], kept: np.ndarray, meta: dict,
                runs_dir: str | None = None) -> str:
    """Store the episodes ``kept`` of ``played`` (`jaxrl.trained.demonstrations.play`'s arrays) with
    ``meta`` as a new set; returns its demo id. The steps file is written before ``demo.json``,
    which marks the set complete."""
    demo_id = new_demo_id(meta["env"])
    folder = store_root(runs_dir) / DEMOS_DIR / demo_id
    buffer = pa.BufferOutputStream()
    pq.write_table(steps_table(played, kept), buffer)
    try:
        folder.mkdir(parents=True)
        atomic_write_bytes(folder / STEPS, buffer.getvalue().to_pybytes())
        atomic_write_text(folder / META, json.dumps({"demo_id": demo_id, **meta}, indent=2))
    except BaseException as err:  # a full disk, say: no half-written set left behind
        shutil.rmtree(folder, ignore_errors=True)
        if isinstance(err, OSError):
            raise write_error(folder, err) from None
        raise
    return demo_id


def new_demo_id(env: str) -> str:
    return f"demo-{stamped_id(env)}"


def steps_table(played: dict[str, np.ndarray], kept: np.ndarray) -> pa.Table:
    """The Parquet rows of the episodes ``kept`` (indices into the env axis), episode-major."""
    columns: dict[str, list] = {k: [] for k in ("episode", "t", "obs", "action", "reward",
                                                "terminated", "truncated", "episode_return")}
    for i, e in enumerate(kept):
        steps = np.flatnonzero(played["active"][:, e])
        columns["episode"].append(np.full(steps.size, i, np.int32))
        columns["t"].append(steps.astype(np.int32))
        for name in ("obs", "action", "reward", "terminated", "truncated"):
            columns[name].append(played[name][steps, e])
        columns["episode_return"].append(np.full(steps.size, played["returns"][e], np.float32))
    arrays = {k: np.concatenate(v) for k, v in columns.items()}
    fields = {}
    for name, x in arrays.items():
        fields[name] = (pa.array(x) if x.ndim == 1 else pa.FixedSizeListArray.from_arrays(
            pa.array(x.reshape(-1)), int(np.prod(x.shape[1:]))))
    return pa.table(fields)


def demo_folder(ref: str, runs_dir: str | None = None) -> Path:
    """The folder of demonstration set ``ref``: a demo id in the store (``runs_dir``,
    ``$JAXRL_RUNS_DIR`` or ``./runs``), or the path of a set's folder."""
    path = Path(ref)
    if (path / META).is_file():
        return path
    folder = store_root(runs_dir) / DEMOS_DIR / ref
    if not (folder / META).is_file():
        raise StoreError(f"no demonstrations {ref!r} in {str(store_root(runs_dir))!r} "
                         f"(`jaxrl demos RUN_ID` records some; `jaxrl runs demos` lists them)")
    return folder


def with_demos_found(overrides: dict, runs_dir: str | None) -> dict:
    """``overrides`` with a ``demos`` id looked up in the store ``runs_dir`` and replaced by the
    set's folder (the algorithm itself looks ids up in the default store)."""
    if not overrides.get("demos") or runs_dir is None:
        return overrides
    return {**overrides, "demos": str(demo_folder(overrides["demos"], runs_dir).absolute())}


def load_demos(demo_id: str, runs_dir: str | None = None) -> Demos:
    """The demonstrations ``demo_id`` (an id or a set's folder, `demo_folder`) as a `Demos`.
    A missing or unreadable set raises a one-line `StoreError`."""
    folder = demo_folder(demo_id, runs_dir)
    try:
        meta = json.loads((folder / META).read_text())
        table = pq.read_table(folder / STEPS)
    except (OSError, ValueError, pa.ArrowException) as err:
        raise StoreError(f"demonstrations {demo_id!r} are unreadable: "
                         f"{str(err).splitlines()[0]}") from None

    def column(name: str, shape: list[int] | None = None) -> np.ndarray:
        col = table.column(name).combine_chunks()
        if isinstance(col.type, pa.FixedSizeListType):
            return col.flatten().to_numpy(zero_copy_only=False).reshape(
                -1, *(shape or [col.type.list_size]))
        return col.to_numpy(zero_copy_only=False)

    return Demos(demo_id, column("obs", meta["obs_shape"]),
                 column("action", meta["action_shape"] or None), column("reward"),
                 column("terminated"), column("truncated"), column("episode"), column("t"),
                 np.asarray(meta["returns"], np.float32), meta)


def list_demos(runs_dir: str | None = None) -> list[dict[str, Any]]:
    """``demo.json`` of every readable demonstration set in the store, oldest first."""
    root = store_root(runs_dir) / DEMOS_DIR
    found = []
    for path in sorted(root.glob(f"*/{META}")) if root.is_dir() else []:
        try:
            found.append(json.loads(path.read_text()))
        except (OSError, ValueError):
            continue
    return found

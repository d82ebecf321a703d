"""Trained policies kept in the run store, and brought back to act.

Every run that ends (finished, or failed by the NaN guard) saves the part of its final train
state that acting reads, all seeds, as ``<run>/policy.npz``: `acting_state` drops the replay
buffer, the envs, the rollout memory, the optimizer state, target networks and the PRNG key,
so a DQN run's file holds its Q-network and statistics, not its million transitions.

`jaxrl.api.load_policy(run_id)` rebuilds the run's algorithm, env and config from its
``run.json``, takes the tree structure from an abstract ``init`` (no compile), fills it from
the file (`read_acting_state`), and returns a `StoredPolicy`: ``act(obs, seed=...)`` as
`TrainResult.act`, ``policy`` (the jitted `jaxrl.algos.acting.Policy`) for rollouts, e.g.
`jaxrl.trained.demonstrations`.

File layout: one array per leaf of the acting state in tree order (``leaf_00000``, ...), each
with the seed axis first, and ``paths`` (their key paths, for messages). Written to a temp
file and renamed into place, so a reader never sees half a file.
"""

from __future__ import annotations

import dataclasses
import io
import zipfile
from pathlib import Path
from typing import Any

import jax
import numpy as np

from jaxrl.algos import acting
from jaxrl.config import AlgoConfig
from jaxrl.runs.files import atomic_write_bytes
from jaxrl.runs.store import StoreError
from jaxrl.trained import serving

POLICY_FILE = "policy.npz"
# train-state fields that acting never reads (learning, exploration and env bookkeeping)
NOT_FOR_ACTING = ("buffer", "window", "frames", "carry", "memory", "opt_state", "target_params",
                  "avg_params", "key", "disc")


def acting_state(state):
    """``state`` (any algorithm's train state, batched or not) with the fields in
    `NOT_FOR_ACTING` set to None."""
    names = [f.name for f in dataclasses.fields(state) if f.name in NOT_FOR_ACTING]
    return state.replace(**{n: None for n in names})


def one_seed(state, seed: int):
    """The acting state (`acting_state`) of seed ``seed`` of ``state`` (leaves ``[seeds,
    ...]``), sliced on the host and put on the default device in one transfer: slicing a
    sharded train state leaf by leaf costs a dispatch per leaf (about 0.2 s for PPO's 67)."""
    host = jax.tree.map(lambda x: np.asarray(x)[seed], acting_state(state))
    return jax.device_put(host)


def cached_seed(cache: dict, state, seed: int):
    """`one_seed` of ``state``, made once per seed and kept in ``cache``."""
    if int(seed) not in cache:
        cache[int(seed)] = one_seed(state, int(seed))
    return cache[int(seed)]


def save_policy(folder: Path, state) -> Path:
    """Write the acting state of ``state`` (leaves ``[seeds, ...]``) to ``folder/policy.npz``."""
    path_leaves = jax.tree_util.tree_flatten_with_path(acting_state(state))[0]
    arrays = {f"leaf_{i:05d}": np.asarray(leaf) for i, (_, leaf) in enumerate(path_leaves)}
    arrays["paths"] = np.array([jax.tree_util.keystr(p) for p, _ in path_leaves])
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    target = Path(folder) / POLICY_FILE
    atomic_write_bytes(target, buffer.getvalue())
    return target


@dataclasses.dataclass
class StoredPolicy:
    """A run's trained policy, every seed: ``state`` is its acting state (leaves
    ``[seeds, ...]``), ``policy`` the algorithm's `acting.Policy` with its step jitted."""

    run_id: str
    algo: str
    env_name: str
    env_kwargs: dict | None
    algorithm: Any
    env: Any  # wrapped in EpisodeStatistics, as in training
    env_params: Any
    config: AlgoConfig
    state: Any
    policy: acting.Policy
    _seed_states: dict = dataclasses.field(default_factory=dict, repr=False)
    #: env steps a seed that ``state`` had trained for (None where not known)
    trained_steps: int | None = None
    #: jitted rollout programs of this policy (`jaxrl.trained.demonstrations.play`'s), by key
    programs: dict = dataclasses.field(default_factory=dict, repr=False)

    @property
    def seeds(self) -> int:
        return int(jax.tree.leaves(self.state)[0].shape[0])

    def seed_state(self, seed: int):
        """The acting state of one seed (`one_seed`, made once per seed)."""
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) \
                or not 0 <= seed < self.seeds:
            raise ValueError(f"run {self.run_id} has seeds 0..{self.seeds - 1}; got seed "
                             f"{seed!r}")
        return cached_seed(self._seed_states, self.state, seed)

    def export_policy(self, path, seed: int = 0,
                      platforms: str | tuple[str, ...] = ("cpu", "cuda")):
        """Write seed ``seed``'s deterministic policy to ``path`` as a serialized JAX program
        that runs without jaxrl (`jaxrl.trained.serving.export_policy`), with a checksum that
        `jaxrl.trained.serving.load_exported` checks. ``platforms``: one of 'cpu', 'cuda',
        'rocm', 'tpu' or a sequence of them. Returns the path."""
        space = self.env.observation_space(self.env_params)
        return serving.export_policy(self.policy, self.seed_state(seed),
                                     tuple(space.shape), space.dtype, path, platforms)

    def act(self, obs, key=None, seed: int = 0, deterministic: bool = True, memory=None):
        """As `jaxrl.trained.results.TrainResult.act`."""
        return acting.act_with(self.policy, self.seed_state(seed), obs, key, seed,
                               deterministic, memory,
                               self.env.observation_space(self.env_params).shape)


def read_acting_state(path: Path, like, run_id: str):
    """The acting state in ``path`` (a run's ``policy.npz``), in the structure of ``like``
    (ShapeDtypeStructs). Raises `StoreError` (one line) for a file that does not fit."""
    leaves, treedef = jax.tree_util.tree_flatten(like)
    try:
        with np.load(path) as data:
            stored = [data[f"leaf_{i:05d}"] for i in range(len(data.files) - 1)]
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as err:
        raise StoreError(f"run {run_id!r}: {POLICY_FILE} is unreadable ({err})") from None
    if len(stored) != len(leaves):
        raise StoreError(f"run {run_id!r}: {POLICY_FILE} has {len(stored)} arrays, the "
                         f"run's config needs {len(leaves)}")
    for i, (got, want) in enumerate(zip(stored, leaves)):
        if got.shape != tuple(want.shape) or got.dtype != want.dtype:
            raise StoreError(f"run {run_id!r}: {POLICY_FILE} array {i} is {got.dtype}"
                             f"{list(got.shape)}, the run's config needs {want.dtype}"
                             f"{list(want.shape)}")
    return jax.tree_util.tree_unflatten(treedef, [jax.numpy.asarray(x) for x in stored])

"""Run sweep groups as Ray tasks (``pip install 'jaxrl[ray]'``).

Each static group (one compiled program: its configs x seeds) becomes one task. The worker
runs it unrecorded with the same code path as the local backend (`jaxrl.engine.loop.run_group`) and
returns the outcome as host arrays; the caller records it into its own run store. Ray is the
distributed engine here: scheduling, retries on lost nodes and the cluster itself are its job
(on SLURM, start a Ray head and workers inside the allocation and pass ``--address``).
"""

from __future__ import annotations

import jax
import numpy as np

from jaxrl.config import ConfigError
from jaxrl.engine.loop import run_group
from jaxrl.engine.spec import GroupSpec


def _is_key(x) -> bool:
    return isinstance(x, jax.Array) and jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key)


def to_host(tree):
    """Pytree -> (numpy pytree, key impl or None per leaf): typed PRNG keys become their raw
    key data. (The impls are listed per leaf, not mapped as a tree: a None in the tree, such
    as an unused parameter group, is no leaf and must not get an entry.)"""
    impls = [str(jax.random.key_impl(x)) if _is_key(x) else None for x in jax.tree.leaves(tree)]
    data = jax.tree.map(lambda x: np.asarray(jax.random.key_data(x) if _is_key(x) else x), tree)
    return data, impls


def from_host(data, impls):
    """Inverse of `to_host` (as jax arrays)."""
    leaves, treedef = jax.tree.flatten(data)
    out = [jax.random.wrap_key_data(x, impl=impl) if impl else jax.numpy.asarray(x)
           for x, impl in zip(leaves, impls)]
    return jax.tree.unflatten(treedef, out)


def _remote_group(spec_dict: dict):
    """Runs on a Ray worker: one group, unrecorded; the outcome with its state on the host."""
    outcome = run_group(GroupSpec.from_dict(spec_dict), progress=False, stop_on_non_finite=False)
    outcome.state = to_host(outcome.state)
    return outcome


def run_groups(specs: list, address: str | None = None, num_cpus: float = 1,
               num_gpus: float = 0) -> list:
    """Run every `GroupSpec` as a Ray task (concurrently, as the cluster allows) and return their
    `GroupOutcome`s in order. Uses the running Ray instance, else connects to ``address``
    (``"auto"``, ``"ray://host:10001"``), else starts a local one for the duration."""
    try:
        import ray
    except ImportError:
        raise ConfigError("backend 'ray' needs Ray: pip install 'jaxrl[ray]'") from None
    started = not ray.is_initialized()
    if started:
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    try:
        task = ray.remote(num_cpus=num_cpus, num_gpus=num_gpus, max_retries=1)(_remote_group)
        outcomes = ray.get([task.remote(spec.to_dict()) for spec in specs])
    finally:
        if started:
            ray.shutdown()
    for outcome in outcomes:
        outcome.state = from_host(*outcome.state)
    return outcomes

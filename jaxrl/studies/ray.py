"""Run groups as Ray tasks (``pip install 'jaxrl[ray]'``), handing each back as it finishes.

Each static group (one compiled program: its configs x seeds) becomes one task. The worker
runs it unrecorded with the engine's chunk loop, checkpointing every chunk into the group's
folder on storage the head can reach (`jaxrl.studies.group_dir`), so a task that Ray retries
after losing its node continues from the newest checkpoint there. `stream_groups` yields each
outcome (or the error that stopped its group) as soon as its task ends (``ray.wait``); the
caller records it and lets it go, so the head holds one outcome at a time.

Devices: a task asks Ray for ``num_cpus`` CPUs and ``num_gpus`` GPUs. On a CPU task the engine
gets ``num_cpus`` CPU devices (not one per core of the node: the node's other cores belong to
other tasks); on a GPU task one CPU device, and JAX sees only the GPUs Ray assigned
(``CUDA_VISIBLE_DEVICES``), which the task checks before it compiles. A fractional GPU
(``num_gpus=0.5``: two tasks per GPU) caps JAX's preallocation to that share. The memory
plan (`jaxrl.parts.memory`) runs on the worker, against the worker's device, before compiling.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import jax
import numpy as np

from jaxrl.config import ConfigError
from jaxrl.engine.spec import GroupSpec
from jaxrl.studies import group_dir
from jaxrl.studies.group_dir import run_resumable

MAX_RETRIES = 3  # attempts after a lost worker or node (each resumes from its checkpoint)


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


def task_env(num_cpus: float, num_gpus: float) -> dict[str, str]:
    """Environment variables of a task's worker process: its CPU device count (`num_cpus`
    devices on a CPU task, one on a GPU task), and on a fractional GPU the share of its memory
    JAX may take."""
    if num_gpus < 0 or num_cpus < 0:
        raise ConfigError(f"num_cpus and num_gpus must be >= 0, got {num_cpus}, {num_gpus}")
    env = {"JAXRL_CPU_DEVICES": "1" if num_gpus else str(max(1, int(num_cpus)))}
    if 0 < num_gpus < 1 and "XLA_PYTHON_CLIENT_MEM_FRACTION" not in os.environ:
        env["XLA_PYTHON_CLIENT_MEM_FRACTION"] = f"{0.9 * num_gpus:.3f}"
    return env


def check_assigned_gpus(assigned: list) -> None:
    """On a GPU task: JAX must see exactly the GPUs Ray assigned (a one-line error otherwise,
    e.g. a worker with CPU-only jaxlib)."""
    seen = [d for d in jax.devices() if d.platform == "gpu"]
    if len(seen) != len(assigned):
        raise ConfigError(f"this task was assigned GPU(s) {assigned} by Ray, but JAX sees "
                          f"{len(seen)} GPU(s) on {os.uname().nodename}: install jax[cuda12] "
                          f"(pip install 'jaxrl[cuda]') on every worker")


def _remote_group(spec_dict: dict, folder: str, num_gpus: float):
    """Runs on a Ray worker: one group, unrecorded, resumable from ``folder``; the outcome with
    its state on the host."""
    import ray

    if num_gpus:
        check_assigned_gpus(ray.get_gpu_ids())
    node = ray.get_runtime_context().get_node_id()
    outcome = run_resumable(GroupSpec.from_dict(spec_dict), folder, node=node)
    outcome.state = to_host(outcome.state)
    return outcome


def describe_error(err: BaseException) -> str:
    """One line for what stopped a task: the worker's own exception (``MemoryPlanError:
    ...``) rather than Ray's wrapper and traceback, or Ray's reason (a node lost for good)."""
    cause = getattr(err, "cause", None)
    if isinstance(cause, BaseException) and not isinstance(cause, type(err)):
        err = cause
    text = str(err).strip().splitlines()
    first = next((line for line in text if line.strip()), "")
    return re.sub(r"\s+", " ", f"{type(err).__name__}: {first}").strip()[:400]


@contextlib.contextmanager
def connected(address: str | None):
    """Use the running Ray instance, else connect to ``address`` (``"auto"``,
    ``"ray://host:10001"``), else start a local one for the duration."""
    try:
        import ray
    except ImportError:
        raise ConfigError("backend 'ray' needs Ray: pip install 'jaxrl[ray]'") from None
    started = not ray.is_initialized()
    if started:
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    try:
        yield ray
    finally:
        if started:
            ray.shutdown()


def stream_groups(jobs: list[tuple[GroupSpec, Path]], address: str | None = None,
                  num_cpus: float = 1, num_gpus: float = 0,
                  max_retries: int = MAX_RETRIES) -> Iterator[tuple[int, object, str | None]]:
    """Run each ``(spec, folder)`` of ``jobs`` as a Ray task (concurrently, as the cluster
    allows) and yield ``(job index, GroupOutcome, None)`` or ``(job index, None, error line)``
    for each, in the order they finish. ``folder`` must be reachable from every node."""
    env = task_env(num_cpus, num_gpus)
    if not jobs:  # nothing left (a resumed sweep that had finished): no Ray to start
        return
    with connected(address) as ray:
        task = ray.remote(num_cpus=num_cpus, num_gpus=num_gpus, max_retries=max_retries,
                          runtime_env={"env_vars": env})(_remote_group)
        pending = {task.remote(spec.to_dict(), str(Path(folder).absolute()), num_gpus): i
                   for i, (spec, folder) in enumerate(jobs)}
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            index = pending.pop(done[0])
            try:
                outcome = ray.get(done[0])
            except (ray.exceptions.RayError, ConfigError) as err:
                yield index, None, describe_error(err)
            else:
                outcome.state = from_host(*outcome.state)
                yield index, outcome, None
            del done


def record_as_they_end(jobs: list[tuple[GroupSpec, Path]], record: Callable[..., bool],
                       ray: dict) -> None:
    """Run ``jobs`` as Ray tasks (`stream_groups`, with the ``ray`` options) and record each as
    it ends: ``record(job index, GroupOutcome or None, error line or None) -> bool``, True when
    the group was recorded to its end; then its folder is released (its checkpoints and chunks
    are not needed). Each outcome is dropped before the next arrives (its metrics and state can
    be large). The one consumer of the stream, for sweeps and benches."""
    for j, outcome, error in stream_groups(jobs, **ray):
        if record(j, outcome, error):
            group_dir.release(jobs[j][1])
        del outcome

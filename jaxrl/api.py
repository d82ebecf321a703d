"""The public entry points: `train` (recorded or not), `resume`, and the fused `make_train`;
and the loaders of what a stored run left, by its run id: `load_policy`, `render`, `demos`
(and `load_demos`, by demo id). What they give back lives in `jaxrl.trained`."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import numpy as np

from jaxrl.algos import acting
from jaxrl.config import ConfigError
from jaxrl.engine.checkpoint import Checkpointer, CheckpointError
from jaxrl.engine.loop import run_group
from jaxrl.engine.members import seed_keys
from jaxrl.engine.programs import act_program
from jaxrl.engine.recorded import new_group_runs, resume_group, run_recorded
from jaxrl.engine.spec import plan_memory, resolve, resolve_group, single_spec
from jaxrl.runs.demos import load_demos, with_demos_found
from jaxrl.runs.run_lock import held
from jaxrl.runs.store import RunStore, StoreError, first_chunks_bytes, user_meta
from jaxrl.trained.demonstrations import check_episodes, record_demos
from jaxrl.trained.policies import POLICY_FILE, StoredPolicy, acting_state, read_acting_state
from jaxrl.trained.results import NonFiniteMetricError, TrainResult
from jaxrl.trained.video import Video, render_policy

__all__ = ["demos", "load_demos", "load_policy", "make_train", "render", "resume", "train"]


def train(
    algo: str,
    env: str = "CartPole-v1",
    seeds: int = 1,
    total_steps: int = 100_000,
    store: bool = True,
    runs_dir: str | None = None,
    command: list[str] | None = None,
    on_chunk: Callable[[dict], None] | None = None,
    progress: bool = True,
    meta: dict | None = None,
    **kwargs,
) -> TrainResult:
    """Train ``algo`` on ``env`` for ``total_steps`` env steps per seed, ``seeds`` seeds at once
    (one compiled program), and archive the run in the run store (``runs_dir``,
    ``$JAXRL_RUNS_DIR`` or ``./runs``; ``store=False`` to keep it in memory only).

    Keyword arguments: engine options ``seed`` (root seed), ``eval_every`` (chunks; default
    about 10 evaluations per run), ``eval_episodes``, ``eval_sample`` (evaluate the policy's
    sampled actions, as Navix's and rejax's baselines do, instead of its mode; default off),
    ``shard_seeds`` (split the seeds over all
    local devices; default on), ``max_chunk_updates``, ``env_kwargs``, ``memory_check``,
    ``checkpoint_every=N`` (checkpoint every N chunks into the run folder; `resume`
    continues); everything else is a config field (``learning_rate=1e-3``).
    ``on_chunk(record)`` is called on the host after each chunk with that chunk's metrics
    (``{name: [seeds, K]}``). ``meta``: extra JSON fields for the run's ``run.json``.

    A recorded run's folder gets metrics chunk by chunk as training goes; the run ends
    ``finished``, ``failed`` (NaN guard or an error) or ``interrupted`` (Ctrl-C), keeping what
    it wrote; ``result.run_id`` / ``result.run_dir`` name it. Raises `NonFiniteMetricError`
    (with the partial result attached) if a metric goes NaN/Inf.
    """
    check_names(algo, env)
    extra = user_meta(meta)
    spec = single_spec(algo, env, seeds, total_steps, **with_demos_found(kwargs, runs_dir))
    if not store:
        if spec.checkpoint_every:
            raise ConfigError("checkpoint_every needs the run store (store=True)")
        resolved = resolve_group(spec)
        outcome = run_group(spec, resolved, progress=progress, on_chunk=on_chunk)
        result = outcome.config_result(0, resolved.algorithm.name, env, act_program(resolved),
                                       (resolved.env, resolved.env_params))
        if outcome.failures:
            raise NonFiniteMetricError(outcome.failures[0], result)
        return result
    run_store = RunStore(runs_dir)
    run_store.ensure_writable(first_chunks_bytes(1, spec.seeds, spec.max_chunk_updates))
    resolved = resolve_group(spec)
    plan_memory(spec, resolved)  # refuse before a run is recorded
    run, = new_group_runs(run_store, spec, resolved, command, [extra])
    lock = held(run.folder, run.run_id) if spec.checkpoint_every else contextlib.nullcontext()
    with lock:  # a checkpointed run: no `resume` of it while it trains
        return run_recorded(spec, resolved, [run], progress=progress, on_chunk=on_chunk)[0]


def check_names(algo, env) -> None:
    """A one-line `ConfigError` unless ``algo`` and ``env`` are names (strings)."""
    for what, value, example in (("algo", algo, "'ppo'"), ("env", env, "'CartPole-v1'")):
        if not isinstance(value, str):
            raise ConfigError(f"{what} must be a name (a string such as {example}), got "
                              f"{type(value).__name__} {value!r}"[:200])


def resume(run_id: str, runs_dir: str | None = None, progress: bool = True) -> list:
    """Continue an interrupted, checkpointed run (or every run of its sweep group) from its
    newest valid checkpoint, in the same run folders. Returns one `TrainResult` per config of
    the group (one for a plain `train` run)."""
    return resume_group(RunStore(runs_dir), run_id, progress=progress)


def make_train(algo: str, env: str, total_steps: int, env_kwargs=None, **overrides):
    """The fully fused form: ``train(key) -> (state, metrics)`` runs init and every update in one
    program (no host loop, no eval). ``jax.jit(jax.vmap(train))(keys)`` trains many seeds;
    keys equal to `jaxrl.seed_keys` give the same final params as `train`."""
    algorithm, wrapped, env_params, config, num_updates = resolve(
        algo, env, total_steps, 1, env_kwargs, **overrides)

    static = config.static()

    def fused(key):
        state = algorithm.init(key, wrapped, env_params, config)
        step = lambda s, _: algorithm.train_step(s, static, wrapped, env_params)
        return jax.lax.scan(step, state, None, length=num_updates)

    return fused


def load_policy(run_id: str, runs_dir: str | None = None,
                checkpoint: str | Path | None = None) -> StoredPolicy:
    """The trained policy of run ``run_id`` (`jaxrl.trained.policies`): its final one, or with
    ``checkpoint`` (a checkpoints folder of the run, e.g. ``<run>/checkpoints`` or one a bench
    committed) the policy of that folder's newest checkpoint, which a run that kept no final
    policy has too; ``trained_steps`` says how far it had trained. Raises `StoreError` (one
    line) for an unknown run, a run that kept no policy, a file or checkpoint that does not
    fit."""
    store = RunStore(runs_dir)
    meta = store.load(run_id)
    path = store.root / run_id / POLICY_FILE
    if checkpoint is None and not path.is_file():
        raise StoreError(f"run {run_id!r} kept no policy ({POLICY_FILE} is missing: the run "
                         f"is {meta.get('status')}, or older than saved policies)")
    spec = (meta.get("group") or {}).get("spec") or {}
    env_kwargs = spec.get("env_kwargs")
    overrides = {k: v for k, v in meta["config"].items() if k != "total_steps"}
    algorithm, env, env_params, config, _ = resolve(
        meta["algo"], meta["env"], meta["total_steps_per_seed"], meta["seeds"], env_kwargs,
        **overrides)
    init = lambda k: algorithm.init(k, env, env_params, config)
    like = jax.eval_shape(jax.vmap(init), seed_keys(0, int(meta["seeds"])))
    if checkpoint is None:
        state = read_acting_state(path, acting_state(like), run_id)
        steps = int(meta["total_steps_per_seed"])
    else:
        state, steps = _checkpoint_acting_state(Path(checkpoint), like, run_id)
    jitted = acting.jitted(algorithm.policy(config.static(), env, env_params))
    return StoredPolicy(run_id, meta["algo"], meta["env"], env_kwargs, algorithm, env,
                        env_params, config, state, jitted, trained_steps=steps)


def _checkpoint_acting_state(folder: Path, like, run_id: str) -> tuple[Any, int | None]:
    """The acting state of the newest usable checkpoint in ``folder`` (a run's checkpoints
    folder), in the structure of ``like`` (the whole train state's ShapeDtypeStructs, leaves
    ``[seeds, ...]``), and the env steps a seed it had trained for (its state's ``env_steps``;
    None for a state without them). Raises `StoreError` (one line) where there is none or it
    does not fit."""
    if not folder.is_dir():
        raise StoreError(f"run {run_id!r}: no checkpoints folder {folder}")
    try:
        checkpointer = Checkpointer(folder, read_only=True)
        try:
            found = checkpointer.restore_latest(like)
        finally:
            checkpointer.close()
    except CheckpointError as err:
        raise StoreError(f"run {run_id!r}: {err}") from None
    if found is None:
        raise StoreError(f"run {run_id!r}: no usable checkpoint in {folder}")
    state = found[1]
    steps = getattr(state, "env_steps", None)
    return acting_state(state), None if steps is None else int(np.max(np.asarray(steps)))


def render(run_id: str, seed: int = 0, episodes: int = 1, deterministic: bool = True,
           key_seed: int = 0, height: int = 240, runs_dir: str | None = None,
           checkpoint: str | Path | None = None) -> Video:
    """A `jaxrl.trained.video.Video` of ``episodes`` episodes of stored run ``run_id``'s
    seed-``seed`` policy (`render_policy`): its final one, or its newest checkpoint's in the
    folder ``checkpoint`` (`load_policy`)."""
    return render_policy(load_policy(run_id, runs_dir, checkpoint), seed, episodes,
                         deterministic, key_seed, height)


def demos(run_id: str, seed: int = 0, episodes: int = 10, deterministic: bool = True,
          key_seed: int = 0, runs_dir: str | None = None) -> str:
    """Record ``episodes`` whole episodes of run ``run_id``'s seed-``seed`` policy into the run
    store as a demonstration set (`jaxrl.trained.demonstrations.record_demos`); returns its demo
    id, which `load_demos` reads back."""
    check_episodes(episodes)
    RunStore(runs_dir).ensure_writable()  # they are recorded there: say so before playing
    return record_demos(load_policy(run_id, runs_dir), seed, episodes, deterministic, key_seed,
                        runs_dir)

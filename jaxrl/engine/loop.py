"""`run_group`: one compiled program's chunk loop (see `jaxrl.engine`).

Per chunk: run K updates of every member, bring the metrics to the host, stream them out,
check them (NaN guard), evaluate every ``eval_every`` chunks, checkpoint every
``checkpoint_every`` chunks. Returns a `GroupOutcome` on the host."""

from __future__ import annotations

import dataclasses
import os
import signal
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

import jax
import numpy as np
from tqdm.auto import tqdm

from envs.core import runs_on_host
from jaxrl.diagnostics import first_env_fault, first_non_finite
from jaxrl.engine import programs
from jaxrl.engine.checkpoint import Checkpointer, CheckpointWarning
from jaxrl.engine.members import (
    Members,
    describe_devices,
    member_sharding,
    pad_members,
    take_members,
)
from jaxrl.engine.spec import (
    MAX_CHUNK_UPDATES,
    GroupSpec,
    Resolved,
    may_shard,
    plan_memory,
    resolve_group,
)
from jaxrl.evaluate import eval_horizon
from jaxrl.runs.frames import eval_frame, finished_mean, metrics_frame
from jaxrl.runs.store import package_versions
from jaxrl.trained.results import TrainResult


def chunk_length(num_updates: int, max_chunk: int = MAX_CHUNK_UPDATES) -> int:
    """Updates per chunk, all chunks the same length (one compile): the length ``k`` in
    ``[max_chunk/4, max_chunk]`` that leaves the fewest trailing updates ``num_updates % k``
    undone, the longest of those; so the largest divisor when there is one. The updates left
    undone (with ``max_chunk`` 50, at most 10 for any run of up to 3M updates; 2441 updates in
    chunks of 40 leave 1, where 49 x 49 left 40) are reported in the result's
    ``total_steps_per_seed``."""
    if num_updates <= max_chunk:
        return num_updates
    lengths = range(max(1, max_chunk // 4), max_chunk + 1)
    return min(lengths, key=lambda k: (num_updates % k, -k))


@dataclasses.dataclass
class GroupOutcome:
    """What one program produced, on the host (leading axis = member, see `Members`)."""

    members: Members
    chunks: list  # [{name: [members, K]}]
    evals: list  # [(updates done, [members, episodes])]
    state: Any  # [members] final train state
    compile_seconds: float
    run_seconds: float
    failures: dict  # {config index: message} for configs whose metrics went non-finite
    steps_per_update: int
    devices: str = "1 x cpu"  # e.g. "2 x cpu": the devices the member axis was sharded over
    compile_source: str = "compiled"  # see `compile_source`
    resumed_from_chunk: int = 0  # chunks restored from a checkpoint, not recomputed

    def done_updates(self) -> int:
        return sum(m["env_steps"].shape[1] for m in self.chunks)

    def config_result(self, i: int, algo: str, env: str, act=None, acting_env=None
                      ) -> TrainResult:
        """Config ``i``'s `TrainResult` (its seeds' metrics, evaluations and state); ``act``
        and ``acting_env`` (``(env, env_params)``) let it act and render."""
        m = self.members
        chunks = [m.of_config(c, i) for c in self.chunks]
        evals = [(u, m.of_config(r, i)) for u, r in self.evals]
        done = self.done_updates()
        return TrainResult(
            algo=algo, env=env, config=m.configs[i], seeds=m.seeds,
            total_steps_per_seed=done * self.steps_per_update,
            metrics=metrics_frame(chunks), evaluations=eval_frame(evals, self.steps_per_update),
            final_eval_return=(finished_mean(evals[-1][1], axis=1) if evals
                               else np.full(m.seeds, np.nan)),
            state=m.of_config(self.state, i), compile_seconds=self.compile_seconds,
            run_seconds=self.run_seconds,
            env_steps_per_second=m.seeds * done * self.steps_per_update / max(self.run_seconds, 1e-9),
            _act=act, _acting_env=acting_env, devices=self.devices, compile_source=self.compile_source,
        )


def restored_state(fresh, restored, env):
    """The state to continue from: the checkpoint's, except that envs stepping host emulators
    (`envs.core.runs_on_host`, Atari) keep this process's fresh ``carry``. A checkpointed
    emulator handle points into the process that wrote it (reading it segfaults), so those envs
    start new episodes on resume; the learner, its statistics, keys and counters are restored."""
    if not runs_on_host(env):
        return restored
    return dataclasses.replace(restored, carry=fresh.carry)


def run_group(spec: GroupSpec, resolved: Resolved | None = None, *, progress: bool = True,
              on_chunk: Callable[[dict], None] | None = None, stop_on_non_finite: bool = True,
              checkpoint_dir=None, restore: bool = False,
              prior_chunks: list | None = None) -> GroupOutcome:
    """Run one program: every config x seed of ``spec`` as members of one vmapped, chunked,
    jitted training loop.

    ``on_chunk({"chunk", "metrics": {name: [members, K]}, "first_update"})`` streams each chunk
    out. A config whose metrics go non-finite is recorded in ``failures``; with
    ``stop_on_non_finite`` the run stops there (single runs), otherwise the other configs go on
    (sweeps). With ``checkpoint_dir`` and ``spec.checkpoint_every`` the state is checkpointed
    every that many chunks; ``restore`` continues from the newest valid checkpoint there
    (``prior_chunks``: the metrics of the chunks it covers, for the result).
    """
    r = resolved or resolve_group(spec)
    algorithm, env, env_params, config = r.algorithm, r.env, r.env_params, r.config
    members = Members(r.configs, spec.seeds, spec.seed)
    k = chunk_length(r.num_updates, spec.max_chunk_updates)
    num_chunks = r.num_updates // k
    eval_every = spec.eval_every or max(1, num_chunks // 10)
    plan_memory(spec, r)
    sharding, padded = member_sharding(members.size, may_shard(spec, r))
    place = (lambda x: jax.device_put(x, sharding)) if sharding else (lambda x: x)
    keys = place(pad_members(members.keys(), padded))
    eval_keys = place(pad_members(members.eval_keys(), padded))
    hparams = place(pad_members(members.hparams(), padded))
    chunk_index = lambda c: place(np.full(padded, c, np.int32))  # [members], for eval keys

    build = lambda tag, builder, *args, **kw: programs.compiled(
        tag, algorithm, config, env, env_params, builder, *args, sharding=sharding, **kw)
    init_fn, t_init, disk_init = build(("init",), programs.init_program(
        algorithm, config, env, env_params, padded), keys, hparams, runs_once=True)
    state = init_fn(keys, hparams)
    chunk_fn, t_chunk, disk_chunk = build(("chunk", k), programs.chunk_program(
        algorithm, config, env, env_params, k, padded), state, donate_first=True)
    horizon = eval_horizon(env_params)
    eval_fn, t_eval, disk_eval = None, 0.0, False  # eval_episodes=0: no evaluation program
    if spec.eval_episodes:
        eval_fn, t_eval, disk_eval = build(("eval", spec.eval_episodes, horizon),
                                           programs.eval_program(algorithm, config, env,
                                                                 env_params, spec.eval_episodes,
                                                                 horizon, padded),
                                           state, eval_keys, chunk_index(0))

    checkpointer = Checkpointer(checkpoint_dir) if checkpoint_dir is not None else None
    first, evals, run_seconds, failures = 0, [], 0.0, {}
    chunks = list(prior_chunks or [])
    if restore:
        restored = checkpointer.restore_latest(take_members(state, members.size))
        if restored is not None:
            first, saved, meta = restored
            state = restored_state(state, place(pad_members(saved, padded)), env)
            evals = [(u, np.asarray(v, dtype=np.float64)) for u, v in meta["evals"]]
            run_seconds = meta["run_seconds"]
            failures = {int(i): m for i, m in meta["failures"].items()}
            chunks = chunks[:first]
        else:
            warnings.warn(f"no usable checkpoint in {checkpoint_dir}; the run starts again from "
                          f"its first update", CheckpointWarning, stacklevel=2)
            chunks = []
    if len(chunks) != first:
        raise ValueError(f"resume needs the metrics of the {first} chunks the checkpoint covers; "
                         f"got {len(chunks)}")

    steps_per_chunk = k * config.steps_per_update
    bar = progress_bar(progress, num_chunks * steps_per_chunk,
                       f"{spec.algo} {spec.env} x{members.size}", initial=first * steps_per_chunk)
    try:
        for c in range(first, num_chunks):
            start = time.perf_counter()
            state, metrics = chunk_fn(state)
            metrics = take_members(jax.device_get(metrics), members.size)
            elapsed = time.perf_counter() - start
            run_seconds += elapsed
            metrics["env_steps_per_second"] = np.full_like(
                metrics["env_steps"], members.size * steps_per_chunk / max(elapsed, 1e-9))
            chunks.append(metrics)
            if on_chunk is not None:  # stream the chunk out first: a bad chunk is kept
                on_chunk({"chunk": c, "metrics": metrics, "first_update": c * k})
            note_failures(failures, members, metrics, c * k, config.steps_per_update, spec.env)
            if failures and (stop_on_non_finite or len(failures) == len(r.configs)):
                break
            if eval_fn is not None and ((c + 1) % eval_every == 0 or c + 1 == num_chunks):
                t0 = time.perf_counter()
                returns = take_members(np.asarray(eval_fn(state, eval_keys, chunk_index(c))),
                                       members.size)
                run_seconds += time.perf_counter() - t0
                evals.append(((c + 1) * k, returns))
            if checkpointer is not None and spec.checkpoint_every and (
                    (c + 1) % spec.checkpoint_every == 0 or c + 1 == num_chunks):
                t0 = time.perf_counter()  # the blocking part of a save counts as run time
                checkpointer.save(c + 1, take_members(state, members.size), {
                    "chunks_done": c + 1, "run_seconds": run_seconds,
                    "evals": [(u, json_floats(v)) for u, v in evals],
                    "failures": {str(i): m for i, m in failures.items()},
                    "spec": spec.to_dict(), "versions": package_versions(spec.env)})
                run_seconds += time.perf_counter() - t0
                fault_injection(c + 1, checkpointer)
            if bar is not None:
                bar.update(steps_per_chunk)
                returns = metrics.get("episode_return_mean")  # none for BC: no env steps
                bar.set_postfix_str(
                    f"{members.size * steps_per_chunk / max(elapsed, 1e-9):,.0f} env-steps/s "
                    f"over {members.size} members" + (
                        "" if returns is None else f", return {np.nanmean(returns[:, -1]):.1f}"))
    finally:
        if bar is not None:
            bar.close()
        if checkpointer is not None:
            checkpointer.close()  # waits for a pending asynchronous save
    return GroupOutcome(members, chunks, evals, take_members(state, members.size),
                        t_init + t_chunk + t_eval, run_seconds, failures, config.steps_per_update,
                        describe_devices(sharding),
                        compile_source([(t_init, disk_init), (t_chunk, disk_chunk)]
                                       + ([(t_eval, disk_eval)] if eval_fn else [])), first)


def compile_source(programs_built: list[tuple[float, bool]]) -> str:
    """Where a group's programs came from: ``"compiled"`` (all compiled now), ``"cache"`` (all
    loaded from the persistent cache or already in this process) or ``"partly cached"``."""
    fresh = [seconds > 0 and not from_disk for seconds, from_disk in programs_built]
    return "compiled" if all(fresh) else "cache" if not any(fresh) else "partly cached"


def note_failures(failures: dict, members: Members, metrics: dict, first_update: int,
                  steps_per_update: int, env_name: str = "the env") -> None:
    """Record in ``failures`` each config whose metrics in this chunk went non-finite first, or
    whose env reported a non-finite physics state (``env_nonfinite_steps``: named as the env's
    fault, since the NaN it feeds the agent would otherwise be reported as a loss's)."""
    for i in range(len(members.configs)):
        if i in failures:
            continue
        of_config = members.of_config(metrics, i)
        fault = first_env_fault(of_config)
        bad = first_non_finite(of_config)
        if fault is not None and (bad is None or (fault[1], fault[0]) <= (bad[2], bad[1])):
            bad_seed, update = fault
            failures[i] = (f"stopped: the physics state of {env_name} became non-finite for "
                           f"seed {bad_seed} at update {first_update + update} (env step "
                           f"{(first_update + update + 1) * steps_per_update}); the run's "
                           "versions (run.json) name the physics and its release")
        elif bad is not None:
            name, bad_seed, update = bad
            failures[i] = (f"stopped: metric {name!r} became non-finite for seed {bad_seed} at "
                           f"update {first_update + update} (env step "
                           f"{(first_update + update + 1) * steps_per_update})")


def json_floats(x) -> list:
    """NaN-safe JSON list of lists (NaN -> None)."""
    return [[None if not np.isfinite(v) else float(v) for v in row] for row in np.asarray(x)]


def fault_injection(chunks_done: int, checkpointer) -> None:
    """Test hook: ``JAXRL_KILL_AFTER_CHUNK=N`` SIGKILLs this process right after the checkpoint of
    chunk N is on disk (a real, unclean kill, for the exact-resume tests)."""
    target = os.environ.get("JAXRL_KILL_AFTER_CHUNK")
    if target is not None and int(target) == chunks_done:
        checkpointer.wait()
        os.kill(os.getpid(), signal.SIGKILL)


# one rate on the bar: env steps per second over all members (the postfix), while the bar counts
# one seed's steps; tqdm's own per-seed rate is left out
BAR_FORMAT = ("{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} steps per seed "
              "[{elapsed}<{remaining}{postfix}]")


def progress_bar(enabled: bool, total: int, desc: str, initial: int = 0):
    """A tqdm bar on stderr counting one seed's env steps, or None. ``tqdm.auto`` draws a
    notebook widget in Jupyter."""
    if not enabled:
        return None
    return tqdm(total=total, desc=desc, unit="step", unit_scale=True, file=sys.stderr,
                dynamic_ncols=True, initial=initial, bar_format=BAR_FORMAT)

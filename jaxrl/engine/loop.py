"""`run_group`: one compiled program's chunk loop (see `jaxrl.engine`).

Per chunk: run K updates of every member, bring the metrics to the host, stream them out,
check them (NaN guard), evaluate every ``eval_every`` chunks, checkpoint every
``checkpoint_every`` chunks. Returns a `GroupOutcome` on the host."""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Callable
from typing import Any

import jax
import numpy as np
from tqdm.auto import tqdm

from jaxrl.engine import build_ledger, programs
from jaxrl.engine.checkpoint import Checkpointer
from jaxrl.engine.group_programs import Programs, compile_source
from jaxrl.engine.members import (
    Members,
    Placed,
    describe_devices,
    member_sharding,
    pad_members,
    take_members,
)
from jaxrl.engine.resumption import (
    Progress,
    restore_progress,
    resumed_chunk_length,
    save_checkpoint,
    state_snapshot,
)
from jaxrl.engine.spec import (
    MAX_CHUNK_UPDATES,
    GroupSpec,
    Resolved,
    may_shard,
    plan_memory,
    resolve_group,
)
from jaxrl.parts.diagnostics import first_env_fault, first_non_finite
from jaxrl.parts.evaluate import eval_horizon
from jaxrl.runs.frames import eval_frame, finished_mean, metrics_frame
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
    compile_parts: dict = dataclasses.field(default_factory=dict)  # seconds per program
    compile_phases: dict = dataclasses.field(default_factory=dict)  # per program: trace, ...

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
            compile_parts=self.compile_parts, compile_phases=self.compile_phases,
        )


@dataclasses.dataclass(frozen=True)
class BetweenChunks:
    """A change to a group's state between chunks (population-based training's exploit and
    explore, `jaxrl.studies.pbt`): after every ``every`` chunks but the last, ``apply(state
    [padded members], metrics {name: [members, K]} of the chunk, chunk index, placed) ->
    state``, before the chunk's evaluation and checkpoint (so a resumed run goes on from the
    changed state). It must depend on nothing but its arguments: a resume redoes it exactly."""

    every: int
    apply: Callable[[Any, dict, int, Placed], Any]


def place_members(spec: GroupSpec, r: Resolved) -> Placed:
    """The members of ``spec`` (configs x seeds) padded to the device count and placed."""
    members = Members(r.configs, spec.seeds, spec.seed)
    plan_memory(spec, r)
    sharding, padded = member_sharding(members.size, may_shard(spec, r))
    placed = Placed(members, padded, sharding, None, None, None)
    placed.keys = placed.place(pad_members(members.keys(), padded))
    placed.eval_keys = placed.place(pad_members(members.eval_keys(), padded))
    placed.hparams = placed.place(pad_members(members.hparams(), padded))
    return placed


def build_programs(spec: GroupSpec, r: Resolved, placed: Placed, k: int,
                   say: Callable[[str], None] | None = None):
    """Compile (or load) the init and chunk (``k`` updates) programs side by side
    (`programs.compile_lowered`: the chunk program is lowered for the state init will return,
    before it has compiled), then build the evaluation program behind them (`programs.
    build_behind`: the first chunks run while it is traced, lowered and compiled); returns them
    and the initial state ``[padded members]``. Before the compile, ``say`` is told which of
    init and chunk the persistent cache will serve and about how long a cold compile of the env
    family takes here (`build_ledger`); the ledger notes the build once every program is
    built, the evaluation program's digest added when it is lowered."""
    lower = lambda tag, builder, *args, **kw: programs.lower(
        tag, r.algorithm, r.config, r.env, r.env_params, builder, *args,
        sharding=placed.sharding, **kw)
    start = time.perf_counter()
    init = lower(("init",), programs.init_program(
        r.algorithm, r.config, r.env, r.env_params, placed.padded), placed.keys, placed.hparams,
        runs_once=True)
    state = (init.program(placed.keys, placed.hparams) if isinstance(init, programs.Built)
             else programs.abstract_outputs(init, placed.sharding))
    pending = {"init": init, "chunk": lower(("chunk", k), programs.chunk_program(
        r.algorithm, r.config, r.env, r.env_params, k, placed.padded), state, donate_first=True)}
    ledger = build_ledger.foretell(pending, spec, r, say)
    built = programs.compile_lowered(pending)
    # after them, not beside: on a machine of few cores it would slow the first chunk's wait
    behind = None
    if spec.eval_episodes:  # eval_episodes=0: no evaluation program
        horizon = eval_horizon(r.env_params)
        sampled = ("sampled",) if spec.eval_sample else ()
        shapes, index = programs.abstract(state), placed.chunk_index(0)  # state is donated next

        def evaluation():
            program = lower(("eval", spec.eval_episodes, horizon, *sampled), programs.eval_program(
                r.algorithm, r.config, r.env, r.env_params, spec.eval_episodes, horizon,
                placed.padded, not spec.eval_sample), shapes, placed.eval_keys, index)
            build_ledger.add(ledger, "eval", program)
            return program
        behind = programs.build_behind(evaluation)
    wall = time.perf_counter() - start
    note = lambda every: build_ledger.note(ledger, every, spec, r, placed.members.size, wall,
                                           compile_source(every))
    progs = Programs(built["init"].program, built["chunk"].program, built, wall,
                     eval_behind=behind, all_built=note)
    if behind is None:
        note(built)
    if not isinstance(init, programs.Built):
        state = built["init"].program(placed.keys, placed.hparams)
    return progs, state


def run_group(spec: GroupSpec, resolved: Resolved | None = None, *, progress: bool = True,
              on_chunk: Callable[[dict], None] | None = None, stop_on_non_finite: bool = True,
              checkpoint_dir=None, restore: bool = False,
              prior_chunks: list | None = None,
              between: BetweenChunks | None = None) -> GroupOutcome:
    """Run one program: every config x seed of ``spec`` as members of one vmapped, chunked,
    jitted training loop: place the members (`place_members`), build the programs
    (`build_programs`), restore a checkpoint if asked (`restore_progress`), run the chunks
    (`run_chunks`) and return what it produced.

    ``on_chunk({"chunk", "metrics": {name: [members, K]}, "first_update"})`` streams each chunk
    out. A config whose metrics go non-finite is recorded in ``failures``; with
    ``stop_on_non_finite`` the run stops there (single runs), otherwise the other configs go on
    (sweeps). With ``checkpoint_dir`` and ``spec.checkpoint_every`` the state is checkpointed
    every that many chunks; ``restore`` continues from the newest valid checkpoint there
    (``prior_chunks``: the metrics of the chunks it covers, for the result), in their chunk
    length (`resumed_chunk_length`). ``between`` changes the state between chunks
    (`BetweenChunks`: population-based training).
    """
    r = resolved or resolve_group(spec)
    k = resumed_chunk_length(prior_chunks if restore else [],
                             chunk_length(r.num_updates, spec.max_chunk_updates))
    placed = place_members(spec, r)
    # the persistent cache's warnings as one line each, the evaluation's too: it compiles
    # behind the first chunks, on another thread (`programs.cache_warnings`)
    with programs.cache_warnings():
        progs, state = build_programs(spec, r, placed, k, say_to_user if progress else None)
        checkpointer = Checkpointer(checkpoint_dir) if checkpoint_dir is not None else None
        done = Progress(chunks=list(prior_chunks or []))
        if restore:
            state, done = restore_progress(checkpointer, state, placed, r.env,
                                           prior_chunks or [], checkpoint_dir, k)
        if len(done.chunks) != done.first:
            raise ValueError(f"resume needs the metrics of the {done.first} chunks the checkpoint "
                             f"covers; got {len(done.chunks)}")
        try:
            state = run_chunks(spec, r, placed, progs, state, done, k, checkpointer, on_chunk,
                               stop_on_non_finite, progress, between)
            progs.settle()
        finally:
            if checkpointer is not None:
                checkpointer.close()  # waits for a pending asynchronous save
    return GroupOutcome(placed.members, done.chunks, done.evals,
                        take_members(state, placed.members.size), progs.compile_seconds,
                        done.run_seconds, done.failures, r.config.steps_per_update,
                        describe_devices(placed.sharding), compile_source(progs.built),
                        done.first, progs.compile_parts, progs.compile_phases)


def say_to_user(text: str) -> None:
    """A line for the user on stderr, before the progress bar."""
    print(f"jaxrl: {text}", file=sys.stderr, flush=True)


def run_chunks(spec: GroupSpec, r: Resolved, placed: Placed, progs: Programs, state,
               done: Progress, k: int, checkpointer: Checkpointer | None,
               on_chunk: Callable[[dict], None] | None, stop_on_non_finite: bool,
               progress: bool, between: BetweenChunks | None = None):
    """From chunk ``done.first`` to the last: run it, bring its metrics to the host, stream
    them out (``on_chunk``), check them (NaN guard), evaluate every ``eval_every`` chunks and
    checkpoint every ``checkpoint_every``, adding to ``done``; ``between`` changes the state
    after its chunks (before their evaluation and checkpoint). Returns the final state.

    The next chunk is started before the host handles this one's metrics (store writes, the NaN
    guard, the progress bar: 5 ms a chunk at 16 seeds, 0.2 s at 2,048 on a CPU), so the device
    does not wait for the host; after a chunk that is evaluated, the next is started right
    behind the evaluation (which reads the state before the chunk takes it over) and the host
    reads the returns after; after a chunk that is checkpointed, once the state is copied to
    the host (`state_snapshot`), its digests and write following while the next chunk runs;
    not after a chunk that is changed (`between`), whose state the host replaces, nor after
    the last. ``run_seconds`` counts, per
    chunk, from its start, or from the previous chunk's metrics (or evaluation returns)
    reaching the host when it was started ahead, to its own metrics on the host; and each
    evaluation from its dispatch to its returns on the host. These windows do not overlap, so
    a checkpoint's host copy and the blocking part of its save count once: inside the window
    they fall in, or on their own when no chunk follows. When the NaN guard stops the run, the chunk started ahead has run: the
    state returned is after it (its metrics are dropped)."""
    members = placed.members
    num_chunks = r.num_updates // k
    eval_every = spec.eval_every or max(1, num_chunks // 10)
    steps_per_chunk = k * r.config.steps_per_update
    bar = progress_bar(progress, num_chunks * steps_per_chunk,
                       f"{spec.algo} {spec.env} x{members.size}",
                       initial=done.first * steps_per_chunk)
    ahead, ready = None, 0.0  # the chunk started ahead (state, metrics), and when it started
    try:
        for c in range(done.first, num_chunks):
            if ahead is None:
                start = time.perf_counter()
                state, metrics = progs.chunk_fn(state)
            else:
                start, (state, metrics), ahead = ready, ahead, None
            last = c + 1 == num_chunks
            evaluate = progs.evaluates and ((c + 1) % eval_every == 0 or last)
            checkpoint = checkpointer is not None and spec.checkpoint_every and (
                (c + 1) % spec.checkpoint_every == 0 or last)
            change = between is not None and not last and (c + 1) % between.every == 0
            stall = last or change  # the host changes the state first, or there is no next
            snap = None  # a checkpoint's host copy, taken before the next chunk takes the state
            if not (stall or evaluate):
                if checkpoint:
                    snap = state_snapshot(state, members)
                ahead = progs.chunk_fn(state)  # donates ``state``: not read again below
            metrics = take_members(jax.device_get(metrics), members.size)
            ready = time.perf_counter()
            elapsed = ready - start
            done.run_seconds += elapsed
            metrics["env_steps_per_second"] = np.full_like(
                metrics["env_steps"], members.size * steps_per_chunk / max(elapsed, 1e-9))
            check_same_metrics(done.chunks, metrics)
            done.chunks.append(metrics)
            if on_chunk is not None:  # stream the chunk out first: a bad chunk is kept
                on_chunk({"chunk": c, "metrics": metrics, "first_update": c * k})
            note_failures(done.failures, members, metrics, c * k, r.config.steps_per_update,
                          spec.env)
            if done.failures and (stop_on_non_finite or len(done.failures) == len(r.configs)):
                if ahead is not None:
                    state = ahead[0]
                break
            if change:
                t0 = time.perf_counter()
                state = between.apply(state, metrics, c, placed)
                done.run_seconds += time.perf_counter() - t0
            if evaluate:
                evaluation = progs.eval_fn  # the first time, waits for what is left of its compile
                t0 = time.perf_counter()
                pending = evaluation(state, placed.eval_keys, placed.chunk_index(c))
                if not stall:  # queued behind the evaluation: no host round trip between them
                    if checkpoint:
                        snap = state_snapshot(state, members)
                    ahead = progs.chunk_fn(state)
                returns = take_members(np.asarray(pending), members.size)
                ready = time.perf_counter()  # the next chunk's clock starts after the evaluation
                done.run_seconds += ready - t0
                done.evals.append(((c + 1) * k, returns))
            if checkpoint:
                t0 = time.perf_counter()
                save_checkpoint(checkpointer, spec, state if snap is None else snap, members,
                                done, c + 1, k)
                if ahead is None:  # no chunk window follows (the last, or one changed): count it
                    done.run_seconds += time.perf_counter() - t0
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
    return state


def check_same_metrics(chunks: list, metrics: dict) -> None:
    """Refuse (one-line `ValueError`) a chunk whose metric names differ from the earlier
    chunks' (``chunks``: a resumed run's are read from its store, which may have been edited):
    the run could not be put together from them."""
    if chunks and set(metrics) != set(chunks[0]):
        missing, extra = sorted(set(chunks[0]) - set(metrics)), sorted(set(metrics) - set(chunks[0]))
        raise ValueError(f"the run's earlier chunks do not hold the metrics this program writes "
                         f"(earlier chunks have {', '.join(missing) or 'nothing more'}, lack "
                         f"{', '.join(extra) or 'nothing'}): they are not this run's metrics")


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

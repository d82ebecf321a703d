"""The multi-seed training driver.

    state = jit(vmap(init))(member_keys, member_hparams)       # one program, all members
    for chunk in chunks:                                       # host loop: progress, eval, NaN guard
        state, metrics = jit(vmap(scan(train_step, K)))(state) # K updates, all members
        metrics -> host (np arrays [members, K]), checked, streamed to the run store
        every N chunks: checkpoint (orbax, async write)

A *member* is one (config, seed) pair: a plain run has one config, a sweep group several
configs that share their static fields (`GroupSpec`, `run_group`). Compiled programs are cached
by (algorithm, static config fields, env, shapes): traced hyperparameters live in
``state.hparams`` (one row per member), so changing only e.g. the learning rate reuses the
compiled program and configs vmap like seeds. Compile time is measured apart from run time
(ahead-of-time ``lower().compile()``). The member axis is sharded over the local devices when
there are several (``jax.sharding``). A memory plan (`jaxrl.memory`) runs before compiling.
`make_train` gives the fully fused ``train(key)`` (init + all updates in one program).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import signal
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

import envs
from envs.wrappers import EpisodeStatistics
from jaxrl import algos
from jaxrl.config import AlgoConfig, ConfigError, check_run_args
from jaxrl.diagnostics import first_non_finite
from jaxrl.networks import resolve_torso
from jaxrl.rollout import flatten_obs

MAX_CHUNK_UPDATES = 50


class NonFiniteMetricError(FloatingPointError):
    """A metric went NaN/Inf. ``.result`` holds everything trained up to the chunk before."""

    def __init__(self, message: str, result: TrainResult):
        super().__init__(message)
        self.result = result


@dataclasses.dataclass
class TrainResult:
    """What `train` returns. ``metrics``: one row per (seed, update); ``state``: the final train
    state batched over seeds (leading axis = seed)."""

    algo: str
    env: str
    config: AlgoConfig
    seeds: int
    total_steps_per_seed: int
    metrics: pd.DataFrame
    evaluations: pd.DataFrame
    final_eval_return: np.ndarray  # [seeds] mean return of the final evaluation episodes
    state: Any
    compile_seconds: float
    run_seconds: float
    env_steps_per_second: float
    _act: Callable = dataclasses.field(repr=False, default=None)
    devices: str = "1 x cpu"  # what the program ran on, e.g. "2 x cpu" (members sharded)
    run_id: str | None = None
    run_dir: str | None = None

    def act(self, obs, key=None, seed: int = 0, deterministic: bool = True):
        """The trained policy of one seed: raw env obs ``[..., *obs_shape]`` -> env action.
        Stochastic actions (``deterministic=False``) need a ``key``."""
        if key is None:
            if not deterministic:
                raise ValueError("act(deterministic=False) needs a PRNG key")
            key = jax.random.key(seed)  # unused by the deterministic policy
        state = jax.tree.map(lambda x: x[seed], self.state)
        return self._act(state, obs, key, deterministic)

    def summary(self) -> dict:
        from jaxrl import stats  # local: keeps import light

        r = self.final_eval_return
        return {"algo": self.algo, "env": self.env, "seeds": self.seeds,
                "total_steps_per_seed": self.total_steps_per_seed,
                "final_eval_return_mean": float(np.mean(r)), "final_eval_return_iqm": stats.iqm(r),
                "compile_seconds": self.compile_seconds, "run_seconds": self.run_seconds,
                "env_steps_per_second": self.env_steps_per_second, "devices": self.devices}


# -- setup ------------------------------------------------------------------------------------
def resolve(algo: str, env: str, total_steps: int, seeds: int, env_kwargs=None, **overrides):
    """Validate the request and build ``(algorithm, env, env_params, config, num_updates)``.
    Every bad input raises a `ValueError` subclass with a one-line message."""
    algorithm = algos.get(algo)
    check_run_args(seeds=seeds, total_steps=total_steps)
    if int(seeds) < 1:
        raise ConfigError(f"seeds must be >= 1, got {seeds}")
    base_env, env_params = envs.make(env, **(env_kwargs or {}))
    space = base_env.action_space(env_params)
    kind = "discrete" if isinstance(space, envs.Discrete) else "continuous"
    if kind not in algorithm.action_kinds:
        raise ConfigError(f"{algorithm.name} handles {' and '.join(algorithm.action_kinds)} "
                          f"actions; {env} has {kind} actions")
    config = algorithm.default_config(env).replace(**overrides, total_steps=float(total_steps))
    obs_shape = base_env.observation_space(env_params).shape
    config = config.replace(torso=resolve_torso(config.torso, obs_shape))  # "auto" -> concrete
    num_updates = int(total_steps) // config.steps_per_update
    if num_updates < 1:
        raise ConfigError(
            f"total_steps={total_steps} is too small for one update "
            f"({config.steps_per_update} env steps per update per seed)"
        )
    return algorithm, EpisodeStatistics(base_env), env_params, config, num_updates


def chunk_length(num_updates: int, max_chunk: int = MAX_CHUNK_UPDATES) -> int:
    """Updates per chunk: the largest divisor of ``num_updates`` in ``[max_chunk/4, max_chunk]``
    so every chunk has the same length (one compile); if there is none, ``n // ceil(n / max)``,
    which drops fewer than ``ceil(n / max_chunk)`` trailing updates (reported in the result's
    ``total_steps_per_seed``)."""
    if num_updates <= max_chunk:
        return num_updates
    for k in range(max_chunk, max(1, max_chunk // 4) - 1, -1):
        if num_updates % k == 0:
            return k
    return num_updates // -(-num_updates // max_chunk)


def _params_digest(env_params) -> str:
    h = hashlib.sha1()
    for leaf in jax.tree.leaves(env_params):
        h.update(np.asarray(leaf).tobytes())
    return h.hexdigest()


_PROGRAMS: dict[tuple, Any] = {}


def _compiled(tag: tuple, algorithm, config, env, env_params, build: Callable, *example_args,
              sharding=None):
    """AOT-compile ``jit(build())`` for these args once per static key; returns
    ``(executable, compile_seconds)`` (0 s on a cache hit). ``tag`` names the program and every
    Python value its builder closes over (chunk length, eval episodes, ...), which are part of
    the cache key alongside the static config and the argument shapes. With a seed ``sharding`` every
    input and output leaf is pinned to it (leading axis = seed), so chunk outputs can be fed
    straight back in."""
    shapes = jax.tree.map(lambda x: (x.shape, str(x.dtype), getattr(x, "sharding", None)),
                          example_args)
    key = (tag, algorithm.name, config.static_key(), env, _params_digest(env_params),
           str(jax.tree.structure(example_args)), str(shapes))
    if key in _PROGRAMS:
        return _PROGRAMS[key], 0.0
    start = time.perf_counter()
    kw = {} if sharding is None else {"in_shardings": sharding, "out_shardings": sharding}
    compiled = jax.jit(build(), **kw).lower(*example_args).compile()
    _PROGRAMS[key] = compiled
    return compiled, time.perf_counter() - start


def member_sharding(count: int, shard: bool):
    """``(sharding, padded_count)`` for a program of ``count`` members: with several local
    devices (and ``shard``) the member axis is split over ``min(devices, count)`` of them,
    padded up to a multiple of that (the padding repeats the last member and is dropped from
    results). One member stays on one device: splitting it would only add padding work."""
    devices = jax.local_devices()[:count]
    if not shard or len(devices) < 2:
        return None, count
    mesh = jax.sharding.Mesh(np.array(devices), ("members",))
    padded = -(-count // len(devices)) * len(devices)
    return jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("members")), padded


def describe_devices(sharding) -> str:
    """``"N x platform"`` for the devices a program's members run on."""
    if sharding is None:
        return f"1 x {jax.local_devices()[0].platform}"
    devices = sorted(sharding.device_set, key=lambda d: d.id)
    return f"{len(devices)} x {devices[0].platform}"


def pad_members(tree, count: int):
    """Grow the leading (member) axis of every leaf to ``count`` by repeating the last member."""
    def pad(x):
        extra = count - x.shape[0]
        return x if extra == 0 else jnp.concatenate([x, jnp.repeat(x[-1:], extra, axis=0)])

    return jax.tree.map(pad, tree)


def take_members(tree, count: int):
    """Drop the padding members (no copy when there is none)."""
    return jax.tree.map(lambda x: x if x.shape[0] == count else x[:count], tree)


@dataclasses.dataclass(frozen=True)
class Members:
    """The leading axis of one compiled program: ``len(configs) x seeds`` members, config-major
    (member ``i * seeds + j`` is config ``i``, seed ``j``). All configs share their static
    fields; seed ``j`` of every config gets key ``j`` of `seed_keys(seed, seeds)`, so config
    ``i``'s results are those of a separate `train` run with the same root seed."""

    configs: tuple
    seeds: int
    seed: int = 0

    @property
    def size(self) -> int:
        return len(self.configs) * self.seeds

    def keys(self) -> jax.Array:  # [members]
        return jnp.concatenate([seed_keys(self.seed, self.seeds)] * len(self.configs))

    def eval_keys(self) -> jax.Array:  # [members]
        keys = jax.random.split(jax.random.fold_in(jax.random.key(self.seed), 1), self.seeds)
        return jnp.concatenate([keys] * len(self.configs))

    def hparams(self) -> dict:  # {name: [members]}
        per_config = [c.hparams() for c in self.configs]
        return {n: jnp.repeat(jnp.stack([h[n] for h in per_config]), self.seeds)
                for n in per_config[0]}

    def of_config(self, tree, i: int):
        """Config ``i``'s slice ``[seeds, ...]`` of a member-batched pytree."""
        return jax.tree.map(lambda x: x[i * self.seeds:(i + 1) * self.seeds], tree)


# -- programs ---------------------------------------------------------------------------------
def over_members(fn: Callable, members: int) -> Callable:
    """``fn`` mapped over the leading member axis of every argument and result.

    Several members are vmapped. A single member runs unbatched, with the axis taken off the
    arguments and put back on the results: XLA's CPU program for a size-1 batch axis is
    about 7% slower per PPO update than the plain one (measured in-process, interleaved)."""
    if members > 1:
        return jax.vmap(fn)

    def single(*args):
        out = fn(*jax.tree.map(lambda x: x[0], args))
        return jax.tree.map(lambda x: x[None], out)

    return single


def _init_program(algorithm, config, env, env_params, members: int):
    def build():
        def init_all(keys, hparams):
            init = lambda k: algorithm.init(k, env, env_params, config)
            states = over_members(init, members)(keys)
            return states.replace(hparams=hparams)  # hparams [seeds] come in as arguments

        return init_all

    return build


def _chunk_program(algorithm, config, env, env_params, length: int, members: int):
    def build():
        def one_seed(state):
            step = lambda s, _: algorithm.train_step(s, config, env, env_params)
            return jax.lax.scan(step, state, None, length=length)

        return over_members(one_seed, members)

    return build


def _eval_program(algorithm, config, env, env_params, episodes: int, max_steps: int,
                  members: int):
    act = algorithm.make_act(config, env, env_params)

    def build():
        def one_seed(state, key, chunk):  # the eval key of chunk c is fold_in(key, c)
            key = jax.random.fold_in(key, chunk)
            return evaluate(state, key, act, env, env_params, episodes, max_steps)

        return over_members(one_seed, members)

    return build


def evaluate(state, key, act, env, env_params, episodes: int, max_steps: int) -> jax.Array:
    """Undiscounted return of the first episode of ``episodes`` envs under the deterministic
    policy (``[episodes]``); NaN for an env that did not finish within ``max_steps``."""
    reset_key, key = jax.random.split(key)
    obs, env_state = jax.vmap(env.reset, in_axes=(0, None))(
        jax.random.split(reset_key, episodes), env_params)
    vstep = jax.vmap(env.step, in_axes=(0, 0, 0, None))

    def cond(c):
        return jnp.logical_and(c[0] < max_steps, ~jnp.all(c[4]))

    def body(c):
        t, k, obs, env_state, done, ret = c
        k, act_key, step_key = jax.random.split(k, 3)
        action = act(state, obs, act_key, True)
        obs, env_state, _, _, _, info = vstep(jax.random.split(step_key, episodes), env_state,
                                              action, env_params)
        first = info["episode_done"] & ~done
        return (t + 1, k, obs, env_state, done | info["episode_done"],
                jnp.where(first, info["episode_return"], ret))

    init = (jnp.int32(0), key, obs, env_state, jnp.zeros(episodes, bool),
            jnp.full(episodes, jnp.nan))
    *_, done, ret = jax.lax.while_loop(cond, body, init)
    return jnp.where(done, ret, jnp.nan)


def eval_horizon(env_params) -> int:
    for name in ("max_steps_in_episode", "episode_length", "time_limit"):
        if hasattr(env_params, name):
            return int(min(int(getattr(env_params, name)), 100_000))
    return 10_000


# -- one program: a group of members -----------------------------------------------------------
@dataclasses.dataclass
class GroupSpec:
    """Everything needed to (re)build and run one compiled program: ``algo`` on ``env`` for
    ``total_steps`` env steps per seed, ``seeds`` seeds of each config in ``configs`` (override
    dicts, or full config dicts when resuming). JSON-able, so it is stored with the runs it
    produces (for `resume`) and shipped to remote workers (Ray)."""

    algo: str
    env: str
    total_steps: int
    seeds: int
    seed: int = 0
    configs: list = dataclasses.field(default_factory=lambda: [{}])
    env_kwargs: dict | None = None
    eval_every: int | None = None
    eval_episodes: int = 16
    max_chunk_updates: int = MAX_CHUNK_UPDATES
    shard: bool = True
    checkpoint_every: int | None = None
    memory_check: bool = True

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict) -> GroupSpec:
        return cls(**{f.name: d[f.name] for f in dataclasses.fields(cls) if f.name in d})


@dataclasses.dataclass
class Resolved:
    """A validated `GroupSpec`: algorithm, wrapped env, env params, the configs, update count."""

    algorithm: Any
    env: Any
    env_params: Any
    configs: tuple
    num_updates: int
    memory_checked: bool = False

    @property
    def config(self) -> AlgoConfig:
        return self.configs[0]


def plan_memory(spec: GroupSpec, r: Resolved):
    """The memory plan (`jaxrl.memory`) for this program on the local devices: raises
    `MemoryPlanError` (with the estimate and the largest seed count that fits) before anything
    compiles or is recorded. No-op when ``spec.memory_check`` is off or it already ran."""
    if not spec.memory_check or r.memory_checked:
        return None
    from jaxrl import memory

    sharding, padded = member_sharding(spec.seeds * len(r.configs), spec.shard)
    devices = len(sharding.device_set) if sharding is not None else 1
    estimate = memory.check(r.algorithm, r.config, r.env, r.env_params, padded, devices,
                            seeds_per_config=spec.seeds if len(r.configs) > 1 else None)
    r.memory_checked = True
    return estimate


def resolve_group(spec: GroupSpec) -> Resolved:
    """Validate every config of ``spec`` (one-line `ConfigError`s) and check they share their
    static fields (one program)."""
    resolved = [resolve(spec.algo, spec.env, spec.total_steps, spec.seeds, spec.env_kwargs,
                        **overrides) for overrides in spec.configs]
    algorithm, env, env_params, _, num_updates = resolved[0]
    configs = tuple(r[3] for r in resolved)
    for c in configs[1:]:
        if c.static_key() != configs[0].static_key():
            raise ConfigError("configs of one group must share every static field "
                              f"(got {_static_diff(configs[0], c)})")
    return Resolved(algorithm, env, env_params, configs, num_updates)


def _static_diff(a: AlgoConfig, b: AlgoConfig) -> str:
    diffs = [f"{k}={va!r} vs {vb!r}" for (k, va), (_, vb) in zip(a.static_key()[1:],
                                                                 b.static_key()[1:]) if va != vb]
    return ", ".join(diffs)


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

    def done_updates(self) -> int:
        return sum(m["env_steps"].shape[1] for m in self.chunks)

    def config_result(self, i: int, algo: str, env: str, act=None) -> TrainResult:
        """Config ``i``'s `TrainResult` (its seeds' metrics, evaluations and state)."""
        m = self.members
        chunks = [m.of_config(c, i) for c in self.chunks]
        evals = [(u, m.of_config(r, i)) for u, r in self.evals]
        done = self.done_updates()
        return TrainResult(
            algo=algo, env=env, config=m.configs[i], seeds=m.seeds,
            total_steps_per_seed=done * self.steps_per_update,
            metrics=metrics_frame(chunks), evaluations=eval_frame(evals, self.steps_per_update),
            final_eval_return=(np.nanmean(evals[-1][1], axis=1) if evals
                               else np.full(m.seeds, np.nan)),
            state=m.of_config(self.state, i), compile_seconds=self.compile_seconds,
            run_seconds=self.run_seconds,
            env_steps_per_second=m.seeds * done * self.steps_per_update / max(self.run_seconds, 1e-9),
            _act=act, devices=self.devices,
        )


def run_group(spec: GroupSpec, resolved: Resolved | None = None, *, progress: bool = True,
              on_chunk: Callable[[dict], None] | None = None, stop_on_non_finite: bool = True,
              checkpoint_dir=None, restore: bool = False,
              prior_chunks: list | None = None) -> GroupOutcome:
    """Run one program: every config x seed of ``spec`` as members of one vmapped, chunked,
    jitted training loop (see the module docstring).

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
    sharding, padded = member_sharding(members.size, spec.shard)
    place = (lambda x: jax.device_put(x, sharding)) if sharding else (lambda x: x)
    keys = place(pad_members(members.keys(), padded))
    eval_keys = place(pad_members(members.eval_keys(), padded))
    hparams = place(pad_members(members.hparams(), padded))
    chunk_index = lambda c: place(np.full(padded, c, np.int32))  # [members], for eval keys

    init_fn, t_init = _compiled(("init",), algorithm, config, env, env_params,
                                _init_program(algorithm, config, env, env_params, padded),
                                keys, hparams, sharding=sharding)
    state = init_fn(keys, hparams)
    chunk_fn, t_chunk = _compiled(("chunk", k), algorithm, config, env, env_params,
                                  _chunk_program(algorithm, config, env, env_params, k, padded),
                                  state, sharding=sharding)
    horizon = eval_horizon(env_params)
    eval_fn, t_eval = _compiled(("eval", spec.eval_episodes, horizon), algorithm, config, env,
                                env_params, _eval_program(algorithm, config, env, env_params,
                                                          spec.eval_episodes, horizon, padded),
                                state, eval_keys, chunk_index(0), sharding=sharding)

    checkpointer, first, evals, run_seconds, failures = None, 0, [], 0.0, {}
    chunks = list(prior_chunks or [])
    if checkpoint_dir is not None:
        from jaxrl.checkpoint import Checkpointer

        checkpointer = Checkpointer(checkpoint_dir)
    if restore:
        restored = checkpointer.restore_latest(take_members(state, members.size))
        if restored is not None:
            first, saved, meta = restored
            state = place(pad_members(saved, padded))
            evals = [(u, np.asarray(v, dtype=np.float64)) for u, v in meta["evals"]]
            run_seconds, failures = meta["run_seconds"], {int(i): m for i, m in meta["failures"].items()}
            chunks = chunks[:first]
        else:
            from jaxrl.checkpoint import CheckpointWarning

            warnings.warn(f"no usable checkpoint in {checkpoint_dir}; the run starts again from "
                          f"its first update", CheckpointWarning, stacklevel=2)
            chunks = []
    if len(chunks) != first:
        raise ValueError(f"resume needs the metrics of the {first} chunks the checkpoint covers; "
                         f"got {len(chunks)}")

    steps_per_chunk = k * config.steps_per_update
    bar = _progress_bar(progress, num_chunks * steps_per_chunk,
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
            _note_failures(failures, members, metrics, c * k, config.steps_per_update)
            if failures and (stop_on_non_finite or len(failures) == len(r.configs)):
                break
            if (c + 1) % eval_every == 0 or c + 1 == num_chunks:
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
                    "evals": [(u, _json_floats(v)) for u, v in evals],
                    "failures": {str(i): m for i, m in failures.items()},
                    "spec": spec.to_dict(), "versions": _versions()})
                run_seconds += time.perf_counter() - t0
                _fault_injection(c + 1, checkpointer)
            if bar is not None:
                bar.update(steps_per_chunk)
                bar.set_postfix_str(
                    f"{members.size * steps_per_chunk / max(elapsed, 1e-9):,.0f} env-steps/s "
                    f"return {np.nanmean(metrics['episode_return_mean'][:, -1]):.1f}")
    finally:
        if bar is not None:
            bar.close()
        if checkpointer is not None:
            checkpointer.close()  # waits for a pending asynchronous save
    return GroupOutcome(members, chunks, evals, take_members(state, members.size),
                        t_init + t_chunk + t_eval, run_seconds, failures, config.steps_per_update,
                        describe_devices(sharding))


def _note_failures(failures: dict, members: Members, metrics: dict, first_update: int,
                   steps_per_update: int) -> None:
    for i in range(len(members.configs)):
        if i in failures:
            continue
        bad = first_non_finite(members.of_config(metrics, i))
        if bad is not None:
            name, bad_seed, update = bad
            failures[i] = (f"stopped: metric {name!r} became non-finite for seed {bad_seed} at "
                           f"update {first_update + update} (env step "
                           f"{(first_update + update + 1) * steps_per_update})")


def _json_floats(x) -> list:
    """NaN-safe JSON list (NaN -> None)."""
    return [[None if not np.isfinite(v) else float(v) for v in row] for row in np.asarray(x)]


def _versions() -> dict:
    from jaxrl.runs.store import package_versions

    return package_versions()


def _fault_injection(chunks_done: int, checkpointer) -> None:
    """Test hook: ``JAXRL_KILL_AFTER_CHUNK=N`` SIGKILLs this process right after the checkpoint of
    chunk N is on disk (a real, unclean kill, for the exact-resume tests)."""
    target = os.environ.get("JAXRL_KILL_AFTER_CHUNK")
    if target is not None and int(target) == chunks_done:
        checkpointer.wait()
        os.kill(os.getpid(), signal.SIGKILL)


# -- the driver -------------------------------------------------------------------------------
_DRIVER_ARGS = {"seed", "eval_every", "eval_episodes", "progress", "shard_seeds",
                "max_chunk_updates", "env_kwargs", "checkpoint_every", "memory_check"}


def _spec(algo, env, seeds, total_steps, seed=0, eval_every=None, eval_episodes=16,
          shard_seeds=True, max_chunk_updates=MAX_CHUNK_UPDATES, env_kwargs=None,
          checkpoint_every=None, memory_check=True, **overrides) -> GroupSpec:
    check_run_args(seeds=seeds, total_steps=total_steps, seed=seed)  # before int() truncates
    return GroupSpec(algo=algo, env=env, total_steps=int(total_steps), seeds=int(seeds),
                     seed=int(seed), configs=[overrides], env_kwargs=env_kwargs,
                     eval_every=eval_every, eval_episodes=int(eval_episodes),
                     max_chunk_updates=int(max_chunk_updates), shard=bool(shard_seeds),
                     checkpoint_every=checkpoint_every, memory_check=bool(memory_check))


def _act_fn(r: Resolved):
    return jax.jit(r.algorithm.make_act(r.config, r.env, r.env_params), static_argnums=3)


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
    """Train ``algo`` on ``env`` for ``total_steps`` env steps per seed, ``seeds`` seeds at once,
    and archive the run in the run store (``runs_dir``, ``$JAXRL_RUNS_DIR`` or ``./runs``;
    ``store=False`` to skip). ``meta``: extra JSON fields for the run's ``run.json`` (e.g. the
    bench id). Other keyword arguments: see `train_unrecorded` and the config;
    ``checkpoint_every=N`` checkpoints every N chunks into the run folder (`resume` continues).

    The run folder gets metrics chunk by chunk as training goes; the run ends ``finished``,
    ``failed`` (NaN guard or an error) or ``interrupted`` (Ctrl-C), keeping what it wrote.
    ``result.run_id`` / ``result.run_dir`` name the folder.
    """
    if not store:
        return train_unrecorded(algo, env, seeds, total_steps, on_chunk=on_chunk,
                                progress=progress, **kwargs)
    from jaxrl.runs.store import RunStore

    run_store = RunStore(runs_dir)
    run_store.ensure_writable()
    spec = _spec(algo, env, seeds, total_steps, **kwargs)
    resolved = resolve_group(spec)
    plan_memory(spec, resolved)  # refuse before a run is recorded
    run = run_store.new_run(resolved.algorithm.name, env, resolved.config.to_dict(), seeds,
                            total_steps, command)
    run.meta.update(meta or {})
    run.set_group(spec, [run.run_id], run.folder / "checkpoints" if spec.checkpoint_every else None)
    return _run_recorded(spec, resolved, [run], progress=progress, on_chunk=on_chunk)[0]


def _run_recorded(spec: GroupSpec, resolved: Resolved, runs: list, *, progress: bool = True,
                  on_chunk=None, restore: bool = False, stop_on_non_finite: bool = True,
                  outcome: GroupOutcome | None = None) -> list:
    """Run one group, streaming each config's chunks into its run folder, and finish every run
    (``finished`` / ``failed`` / ``interrupted``). With ``outcome`` (a group already run
    elsewhere, e.g. a Ray worker) only record it. Returns one `TrainResult` per config; raises
    `NonFiniteMetricError` for a single run whose metrics went non-finite."""
    members = Members(resolved.configs, spec.seeds, spec.seed)

    def record(chunk: dict) -> None:
        for i, run in enumerate(runs):
            run.write_chunk(chunk["chunk"], members.of_config(chunk["metrics"], i),
                            chunk["first_update"])
        if on_chunk is not None:
            on_chunk(chunk)

    prior = None
    if restore:
        per_run = [run.read_chunks() for run in runs]
        prior = [{n: np.concatenate([p[c][n] for p in per_run]) for n in per_run[0][c]}
                 for c in range(min(len(p) for p in per_run))]
    checkpoint_dir = runs[0].checkpoint_dir
    try:
        if outcome is None:
            outcome = run_group(spec, resolved, progress=progress, on_chunk=record,
                                stop_on_non_finite=stop_on_non_finite,
                                checkpoint_dir=checkpoint_dir, restore=restore, prior_chunks=prior)
        else:
            first_update = 0
            for c, metrics in enumerate(outcome.chunks):
                record({"chunk": c, "metrics": metrics, "first_update": first_update})
                first_update += metrics["env_steps"].shape[1]
    except KeyboardInterrupt:
        for run in runs:
            run.finish("interrupted", message="interrupted by the user")
        raise
    except BaseException as err:
        for run in runs:
            run.finish("failed", message=f"{type(err).__name__}: {err}")
        raise
    act = _act_fn(resolved)
    results = []
    for i, run in enumerate(runs):
        result = outcome.config_result(i, resolved.algorithm.name, spec.env, act)
        result.run_id, result.run_dir = run.run_id, str(run.folder)
        failure = outcome.failures.get(i)
        run.finish("failed" if failure else "finished", result, message=failure)
        results.append(result)
    if stop_on_non_finite and outcome.failures:
        raise NonFiniteMetricError(outcome.failures[0], results[0])
    return results


def resume(run_id: str, runs_dir: str | None = None, progress: bool = True) -> list:
    """Continue an interrupted run (or every run of its sweep group) from its newest valid
    checkpoint, writing into the same run folders. Returns the `TrainResult` of each config of
    the group (one for a plain `train` run)."""
    from jaxrl.runs.store import RunStore, StoreError

    run_store = RunStore(runs_dir)
    meta = run_store.load(run_id)
    group = meta.get("group")
    if not group or not group.get("checkpoint_dir"):
        raise StoreError(f"run {run_id!r} was not checkpointed (train with --checkpoint-every)")
    runs = [run_store.open(rid) for rid in group["runs"]]
    statuses = {run.meta["status"] for run in runs}
    if "running" in statuses:
        raise StoreError(f"run {run_id!r} is still running (pid {meta.get('pid')} on "
                         f"{meta.get('host')})")
    if statuses == {"finished"}:
        raise StoreError(f"run {run_id!r} already finished; nothing to resume")
    spec = GroupSpec.from_dict(group["spec"])
    spec.configs = [{k: v for k, v in run.meta["config"].items() if k != "total_steps"}
                    for run in runs]  # the exact configs that ran
    resolved = resolve_group(spec)
    for run in runs:
        run.reopen()
    return _run_recorded(spec, resolved, runs, progress=progress, restore=True,
                         stop_on_non_finite=len(runs) == 1)


def train_unrecorded(
    algo: str,
    env: str = "CartPole-v1",
    seeds: int = 1,
    total_steps: int = 100_000,
    progress: bool = True,
    on_chunk: Callable[[dict], None] | None = None,
    **kwargs,
) -> TrainResult:
    """Train ``algo`` on ``env`` for ``total_steps`` env steps per seed, ``seeds`` seeds at once.

    Keyword arguments: driver options ``seed`` (root seed), ``eval_every`` (chunks; default
    about 10 evaluations per run), ``eval_episodes``, ``shard_seeds`` (split the seeds over all
    local devices; default on), ``max_chunk_updates``, ``env_kwargs``; everything else is a
    config field (``learning_rate=1e-3``). ``on_chunk(record)`` is called on the host after each
    chunk with that chunk's metrics (``{name: [seeds, K]}``).
    Raises `NonFiniteMetricError` (with the partial result attached) if a metric goes NaN/Inf.
    """
    spec = _spec(algo, env, seeds, total_steps, **kwargs)
    resolved = resolve_group(spec)
    outcome = run_group(spec, resolved, progress=progress, on_chunk=on_chunk)
    result = outcome.config_result(0, resolved.algorithm.name, env, _act_fn(resolved))
    if outcome.failures:
        raise NonFiniteMetricError(outcome.failures[0], result)
    return result


def _progress_bar(enabled: bool, total: int, desc: str, initial: int = 0):
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="step", unit_scale=True, file=sys.stderr,
                dynamic_ncols=True, initial=initial)


def metrics_frame(chunks: list[dict]) -> pd.DataFrame:
    """``[{name: [seeds, K]}]`` -> long DataFrame with columns seed, update, <metrics>."""
    if not chunks:
        return pd.DataFrame(columns=["seed", "update"])
    names = list(chunks[0])
    stacked = {n: np.concatenate([np.asarray(c[n], dtype=np.float64) for c in chunks], axis=1)
               for n in names}
    seeds, updates = stacked[names[0]].shape
    frame = {"seed": np.repeat(np.arange(seeds), updates),
             "update": np.tile(np.arange(updates), seeds)}
    frame.update({n: v.reshape(-1) for n, v in stacked.items()})
    return pd.DataFrame(frame)


def eval_frame(evals: list, steps_per_update: int) -> pd.DataFrame:
    rows = []
    for updates, returns in evals:
        for s, per_seed in enumerate(returns):
            rows.append({"seed": s, "update": updates - 1, "env_steps": updates * steps_per_update,
                         "eval_return": float(np.nanmean(per_seed)),
                         "eval_return_std": float(np.nanstd(per_seed))})
    return pd.DataFrame(rows, columns=["seed", "update", "env_steps", "eval_return",
                                       "eval_return_std"])


def make_train(algo: str, env: str, total_steps: int, env_kwargs=None, **overrides):
    """The fully fused form: ``train(key) -> (state, metrics)`` runs init and every update in one
    program (no host loop, no eval). ``jax.jit(jax.vmap(train))(keys)`` trains many seeds;
    keys equal to `train`'s seed keys give the same final params as the chunked driver."""
    algorithm, wrapped, env_params, config, num_updates = resolve(
        algo, env, total_steps, 1, env_kwargs, **overrides)

    def fused(key):
        state = algorithm.init(key, wrapped, env_params, config)
        step = lambda s, _: algorithm.train_step(s, config, wrapped, env_params)
        return jax.lax.scan(step, state, None, length=num_updates)

    return fused


def seed_keys(seed: int, seeds: int) -> jax.Array:
    """The per-seed keys `train` uses for ``seed`` (to reproduce a seed with `make_train`)."""
    return jax.random.split(jax.random.fold_in(jax.random.key(seed), 0), seeds)


__all__ = [
    "NonFiniteMetricError",
    "TrainResult",
    "evaluate",
    "flatten_obs",
    "make_train",
    "seed_keys",
    "train",
]

"""The multi-seed training driver.

    state = jit(vmap(init))(seed_keys)                       # one program, all seeds
    for chunk in chunks:                                     # host loop: progress, eval, NaN guard
        state, metrics = jit(vmap(scan(train_step, K)))(state)   # K updates, all seeds
        metrics -> host (np arrays [seeds, K]), checked, appended

Compiled programs are cached by (algorithm, static config fields, env, shapes): traced
hyperparameters live in ``state.hparams``, so changing only e.g. the learning rate reuses the
compiled program. Compile time is measured apart from run time (ahead-of-time ``lower().compile()``).
The seed axis is sharded over the local devices when there are several (``jax.sharding``).
`make_train` gives the fully fused ``train(key)`` (init + all updates in one program).
"""

from __future__ import annotations

import dataclasses
import hashlib
import sys
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pandas as pd

import envs
from envs.wrappers import EpisodeStatistics
from jaxrl import algos
from jaxrl.config import AlgoConfig, ConfigError
from jaxrl.diagnostics import first_non_finite
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
                "env_steps_per_second": self.env_steps_per_second}


# -- setup ------------------------------------------------------------------------------------
def resolve(algo: str, env: str, total_steps: int, seeds: int, env_kwargs=None, **overrides):
    """Validate the request and build ``(algorithm, env, env_params, config, num_updates)``.
    Every bad input raises a `ValueError` subclass with a one-line message."""
    algorithm = algos.get(algo)
    if int(seeds) < 1:
        raise ConfigError(f"seeds must be >= 1, got {seeds}")
    base_env, env_params = envs.make(env, **(env_kwargs or {}))
    space = base_env.action_space(env_params)
    kind = "discrete" if isinstance(space, envs.Discrete) else "continuous"
    if kind not in algorithm.action_kinds:
        raise ConfigError(f"{algorithm.name} handles {' and '.join(algorithm.action_kinds)} "
                          f"actions; {env} has {kind} actions")
    config = algorithm.default_config(env).replace(**overrides, total_steps=float(total_steps))
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


def _seed_sharding(num_seeds: int, shard: bool):
    devices = jax.local_devices()
    if not shard or len(devices) < 2 or num_seeds % len(devices):
        return None
    mesh = jax.sharding.Mesh(np.array(devices), ("seeds",))
    return jax.sharding.NamedSharding(mesh, jax.sharding.PartitionSpec("seeds"))


# -- programs ---------------------------------------------------------------------------------
def _init_program(algorithm, config, env, env_params):
    def build():
        def init_all(keys, hparams):
            states = jax.vmap(lambda k: algorithm.init(k, env, env_params, config))(keys)
            return states.replace(hparams=hparams)  # hparams [seeds] come in as arguments

        return init_all

    return build


def _chunk_program(algorithm, config, env, env_params, length: int):
    def build():
        def one_seed(state):
            step = lambda s, _: algorithm.train_step(s, config, env, env_params)
            return jax.lax.scan(step, state, None, length=length)

        return jax.vmap(one_seed)

    return build


def _eval_program(algorithm, config, env, env_params, episodes: int, max_steps: int):
    act = algorithm.make_act(config, env, env_params)

    def build():
        def one_seed(state, key):
            return evaluate(state, key, act, env, env_params, episodes, max_steps)

        return jax.vmap(one_seed)

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


# -- the driver -------------------------------------------------------------------------------
def train(
    algo: str,
    env: str = "CartPole-v1",
    seeds: int = 1,
    total_steps: int = 100_000,
    store: bool = True,
    runs_dir: str | None = None,
    command: list[str] | None = None,
    on_chunk: Callable[[dict], None] | None = None,
    **kwargs,
) -> TrainResult:
    """Train ``algo`` on ``env`` for ``total_steps`` env steps per seed, ``seeds`` seeds at once,
    and archive the run in the run store (``runs_dir``, ``$JAXRL_RUNS_DIR`` or ``./runs``;
    ``store=False`` to skip). Other keyword arguments: see `train_unrecorded` and the config.

    The run folder gets metrics chunk by chunk as training goes; the run ends ``finished``,
    ``failed`` (NaN guard or an error) or ``interrupted`` (Ctrl-C), keeping what it wrote.
    ``result.run_id`` / ``result.run_dir`` name the folder.
    """
    if not store:
        return train_unrecorded(algo, env, seeds, total_steps, on_chunk=on_chunk, **kwargs)
    from jaxrl.runs.store import RunStore

    run_store = RunStore(runs_dir)
    run_store.ensure_writable()
    overrides = {k: v for k, v in kwargs.items() if k not in _DRIVER_ARGS}
    resolved = resolve(algo, env, total_steps, seeds, kwargs.get("env_kwargs"), **overrides)
    algorithm, config = resolved[0], resolved[3]
    run = run_store.new_run(algorithm.name, env, config.to_dict(), seeds, total_steps, command)

    def record(chunk: dict) -> None:
        run.write_chunk(chunk["chunk"], chunk["metrics"], chunk["first_update"])
        if on_chunk is not None:
            on_chunk(chunk)

    try:
        result = train_unrecorded(algo, env, seeds, total_steps, on_chunk=record,
                                  _resolved=resolved, **kwargs)
    except NonFiniteMetricError as err:
        err.result.run_id, err.result.run_dir = run.run_id, str(run.folder)
        run.finish("failed", err.result, message=str(err))
        raise
    except KeyboardInterrupt:
        run.finish("interrupted", message="interrupted by the user")
        raise
    except BaseException as err:
        run.finish("failed", message=f"{type(err).__name__}: {err}")
        raise
    result.run_id, result.run_dir = run.run_id, str(run.folder)
    run.finish("finished", result)
    return result


_DRIVER_ARGS = {"seed", "eval_every", "eval_episodes", "progress", "shard_seeds",
                "max_chunk_updates", "env_kwargs"}


def train_unrecorded(
    algo: str,
    env: str = "CartPole-v1",
    seeds: int = 1,
    total_steps: int = 100_000,
    seed: int = 0,
    eval_every: int | None = None,
    eval_episodes: int = 16,
    progress: bool = True,
    shard_seeds: bool = True,
    max_chunk_updates: int = MAX_CHUNK_UPDATES,
    env_kwargs: dict | None = None,
    on_chunk: Callable[[dict], None] | None = None,
    _resolved: tuple | None = None,
    **overrides,
) -> TrainResult:
    """Train ``algo`` on ``env`` for ``total_steps`` env steps per seed, ``seeds`` seeds at once.

    ``overrides`` are config fields (``learning_rate=1e-3``); ``eval_every`` is in chunks
    (default: about 10 evaluations per run); ``on_chunk(record)`` is called on the host after
    each chunk with that chunk's metrics (``{name: [seeds, K]}``) for streaming to a store.
    Raises `NonFiniteMetricError` (with the partial result attached) if a metric goes NaN/Inf.
    """
    algorithm, wrapped, env_params, config, num_updates = _resolved or resolve(
        algo, env, total_steps, seeds, env_kwargs, **overrides)  # `train` resolves once for both
    k = chunk_length(num_updates, max_chunk_updates)
    num_chunks = num_updates // k
    eval_every = eval_every or max(1, num_chunks // 10)
    sharding = _seed_sharding(seeds, shard_seeds)
    place = (lambda x: jax.device_put(x, sharding)) if sharding else (lambda x: x)

    root = jax.random.key(seed)
    seed_keys = place(jax.random.split(jax.random.fold_in(root, 0), seeds))
    eval_keys = jax.random.split(jax.random.fold_in(root, 1), seeds)
    hparams = place(jax.tree.map(lambda v: jnp.broadcast_to(v, (seeds,)), config.hparams()))

    init_fn, t_init = _compiled(("init",), algorithm, config, wrapped, env_params,
                                _init_program(algorithm, config, wrapped, env_params),
                                seed_keys, hparams, sharding=sharding)
    state = init_fn(seed_keys, hparams)
    chunk_fn, t_chunk = _compiled(("chunk", k), algorithm, config, wrapped, env_params,
                                  _chunk_program(algorithm, config, wrapped, env_params, k), state,
                                  sharding=sharding)
    horizon = eval_horizon(env_params)
    eval_fn, t_eval = _compiled(("eval", eval_episodes, horizon), algorithm, config, wrapped, env_params,
                                _eval_program(algorithm, config, wrapped, env_params,
                                              eval_episodes, horizon), state, place(eval_keys),
                                sharding=sharding)
    compile_seconds = t_init + t_chunk + t_eval

    steps_per_chunk = k * config.steps_per_update
    bar = _progress_bar(progress, num_chunks * steps_per_chunk, f"{algo} {env} x{seeds}")
    chunks, evals = [], []
    run_seconds = 0.0
    error = None
    for c in range(num_chunks):
        start = time.perf_counter()
        state, metrics = chunk_fn(state)
        metrics = jax.device_get(metrics)
        elapsed = time.perf_counter() - start
        run_seconds += elapsed
        metrics["env_steps_per_second"] = np.full_like(
            metrics["env_steps"], seeds * steps_per_chunk / max(elapsed, 1e-9))
        chunks.append(metrics)
        if on_chunk is not None:  # stream the chunk out first: a bad chunk is kept for debugging
            on_chunk({"chunk": c, "metrics": metrics, "first_update": c * k})
        bad = first_non_finite(metrics)
        if bad is not None:
            name, bad_seed, update = bad
            error = (f"stopped: metric {name!r} became non-finite for seed {bad_seed} at update "
                     f"{c * k + update} (env step {(c * k + update + 1) * config.steps_per_update})")
            break
        if (c + 1) % eval_every == 0 or c + 1 == num_chunks:
            t0 = time.perf_counter()
            keys = place(jax.vmap(jax.random.fold_in, (0, None))(eval_keys, c))
            returns = np.asarray(eval_fn(state, keys))
            run_seconds += time.perf_counter() - t0
            evals.append(((c + 1) * k, returns))
        if bar is not None:
            bar.update(steps_per_chunk)
            bar.set_postfix_str(f"{seeds * steps_per_chunk / max(elapsed, 1e-9):,.0f} env-steps/s "
                                f"return {np.nanmean(metrics['episode_return_mean'][:, -1]):.1f}")
    if bar is not None:
        bar.close()

    done_updates = sum(m["env_steps"].shape[1] for m in chunks)
    result = TrainResult(
        algo=algorithm.name, env=env, config=config, seeds=seeds,
        total_steps_per_seed=done_updates * config.steps_per_update,
        metrics=metrics_frame(chunks), evaluations=eval_frame(evals, config.steps_per_update),
        final_eval_return=(np.nanmean(evals[-1][1], axis=1) if evals else np.full(seeds, np.nan)),
        state=state, compile_seconds=compile_seconds, run_seconds=run_seconds,
        env_steps_per_second=seeds * done_updates * config.steps_per_update / max(run_seconds, 1e-9),
        _act=jax.jit(algorithm.make_act(config, wrapped, env_params), static_argnums=3),
    )
    if error is not None:
        raise NonFiniteMetricError(error, result)
    return result


def _progress_bar(enabled: bool, total: int, desc: str):
    if not enabled:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="step", unit_scale=True, file=sys.stderr,
                dynamic_ncols=True)


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

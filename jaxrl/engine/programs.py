"""The compiled programs of a group, and their cache.

Each program is compiled ahead of time (``jit(...).lower(...).compile()``), so compile time is
measured apart from run time, and cached by (program tag, algorithm, static config fields, env,
env params, argument shapes and shardings): a change of a traced hyperparameter reuses it. The
algorithm's functions are handed the config's static view (``config.static()``), so no traced
value can be baked into a cached program: those come in with ``state.hparams``.

The cache keeps the `MAX_PROGRAMS` most recently used programs. Each XLA:CPU executable holds
about a thousand memory mappings (a brax program several thousand), and Linux allows a process
65,530 (``vm.max_map_count``): a bench that kept every entry's programs died in LLVM with
"Cannot allocate memory" after 18 brax entries. A program dropped here and needed again comes
back from the persistent compilation cache (`jaxrl.compile_cache`)."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import sys
import threading
import time
import warnings
from collections import Counter, OrderedDict
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, NamedTuple

import jax
import numpy as np

from envs.core import wrapped_attr
from jaxrl import compile_cache, platform
from jaxrl.algos import acting
from jaxrl.engine.members import over_members
from jaxrl.ops.cpu_linalg import use_xla_linear_algebra
from jaxrl.parts.evaluate import evaluate

use_xla_linear_algebra()  # no LAPACK custom call in a CPU program: they can deadlock (its module)


class Built(NamedTuple):
    """A compiled program and how it came: ``seconds`` in all (0 for one this process held),
    ``from_disk`` when the persistent cache served it, and ``phases``: seconds of tracing
    (Python to jaxpr), lowering (to StableHLO) and compiling (XLA, or loading from the cache),
    ``{}`` for one this process held."""

    program: Any
    seconds: float
    from_disk: bool
    phases: dict


MAX_PROGRAMS = 24  # compiled programs kept in this process (a few runs' init, chunk, eval)
PROGRAMS: OrderedDict[tuple, Any] = OrderedDict()  # the compile cache of this process, LRU
COMPILED: Counter = Counter()  # programs compiled in this process (not in-process hits), by tag
_HELD = threading.Lock()  # guards `PROGRAMS` and `COMPILED`: a program may compile behind a run
_BEHIND = ThreadPoolExecutor(1, thread_name_prefix="jaxrl-compile-behind")  # `build_behind`


def params_digest(env_params) -> str:
    """A digest of the env params' values (part of the cache key: they are baked in)."""
    h = hashlib.sha1()
    for leaf in jax.tree.leaves(env_params):
        h.update(np.asarray(leaf).tobytes())
    return h.hexdigest()


class Lowered(NamedTuple):
    """A program traced and lowered, its XLA compile still to come (`compile_lowered`):
    ``out_info`` the shapes and dtypes of its outputs, ``phases`` its trace and lower
    seconds, ``options`` the XLA compiler options it compiles with."""

    key: tuple
    tag: tuple
    lowered: Any
    out_info: Any
    phases: dict
    options: dict


def lower(tag: tuple, algorithm, config, env, env_params, build: Callable, *example_args,
          sharding=None, runs_once: bool = False, donate_first: bool = False) -> Built | Lowered:
    """The program ``jit(build())`` for these args: a `Built` of 0 s for one this process
    holds, else traced and lowered (`Lowered`), for `compile_lowered` to compile. Cached once
    per key: ``tag`` names the program and every Python value its builder closes over (chunk
    length, eval episodes, ...), which are part of the key alongside the static config and the
    argument shapes (arrays or `jax.ShapeDtypeStruct`). With a seed ``sharding`` every input
    and output leaf is pinned to it (leading axis = member), so chunk outputs can be fed
    straight back in. On the CPU, programs compile at `jaxrl.platform.cpu_opt_level` (LLVM -O2
    unless chosen or the env's ``cpu_opt_level`` asks for another), and a program that
    ``runs_once`` (init) at -O0. With ``donate_first`` the program takes over the buffers of
    its first argument (the train state a chunk replaces), which must not be used again after
    the call: the state then lives once in memory, not twice."""
    shapes = jax.tree.map(lambda x: (x.shape, str(x.dtype), getattr(x, "sharding", None)),
                          example_args)
    devices = sharding.device_set if sharding is not None else {jax.devices()[0]}
    options = platform.compiler_options(next(iter(devices)).platform, runs_once,
                                        wrapped_attr(env, "cpu_opt_level", None))
    key = (tag, algorithm.name, config.static_key(), env, params_digest(env_params),
           str(jax.tree.structure(example_args)), str(shapes), tuple(sorted(options.items())),
           donate_first)
    with _HELD:
        if key in PROGRAMS:
            PROGRAMS.move_to_end(key)
            return Built(PROGRAMS[key], 0.0, False, {})
    compile_cache.configure()
    kw = {} if sharding is None else {"in_shardings": sharding, "out_shardings": sharding}
    kw["compiler_options"] = options
    if donate_first:
        kw["donate_argnums"] = 0
    with _main_thread_warnings():
        start = time.perf_counter()
        traced = jax.jit(named(build(), str(tag[0])), **kw).trace(*example_args)
        t_traced = time.perf_counter()
        lowered = traced.lower()
    phases = {"trace": t_traced - start, "lower": time.perf_counter() - t_traced}
    return Lowered(key, tag, lowered, traced.out_info, phases, options)


def compile_lowered(programs: dict[str, Built | Lowered]) -> dict[str, Built]:
    """Compile every `Lowered` of ``programs`` ({name: program}) side by side, one thread each
    (XLA's compile releases the GIL: a group's init, chunk and evaluation programs compile in
    the time of the longest where the cores allow), and keep them in this process's cache.
    Returns a `Built` per name: its seconds are its own trace, lower and compile (which
    overlap with the others'), ``from_disk`` when the persistent cache served it."""
    todo = {name: p for name, p in programs.items() if isinstance(p, Lowered)}

    def compile_one(p: Lowered) -> tuple[Any, float, bool]:
        hits, start = compile_cache.thread_hits(), time.perf_counter()
        program = p.lowered.compile()
        return program, time.perf_counter() - start, compile_cache.thread_hits() > hits

    with _main_thread_warnings():
        if len(todo) > 1:
            with ThreadPoolExecutor(len(todo), thread_name_prefix="jaxrl-compile") as pool:
                done = dict(zip(todo, pool.map(compile_one, todo.values()), strict=True))
        else:
            done = {name: compile_one(p) for name, p in todo.items()}
    out = {}
    with _HELD:
        for name, p in programs.items():
            if isinstance(p, Built):
                out[name] = p
                continue
            program, seconds, from_disk = done[name]
            phases = {**p.phases, "compile": seconds}
            PROGRAMS[p.key] = program
            COMPILED[p.tag[0]] += 1
            out[name] = Built(program, sum(phases.values()), from_disk, phases)
        while len(PROGRAMS) > MAX_PROGRAMS:
            PROGRAMS.popitem(last=False)
    return out


def build_behind(make: Callable[[], Built | Lowered]) -> Future:
    """The program ``make()`` lowers (`lower`), traced, lowered and compiled on a thread of its
    own while the caller goes on (`compile_lowered`, looked up when it runs): a `Future` of its
    `Built`. The engine builds a group's evaluation program so, behind its first chunks: the
    run waits for it only if its first evaluation comes before the build ends. ``make`` must
    not read arrays the caller may donate meanwhile (give it `abstract` shapes)."""
    return _BEHIND.submit(lambda: compile_lowered({"p": make()})["p"])  # as patched then


def abstract(tree) -> Any:
    """``tree``'s arrays as `jax.ShapeDtypeStruct` leaves with their shardings (leaves that
    already are stay): what a program is lowered for, readable after the arrays are donated."""
    return jax.tree.map(lambda x: x if isinstance(x, jax.ShapeDtypeStruct) else
                        jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=x.sharding,
                                             weak_type=getattr(x, "weak_type", False)), tree)


def _main_thread_warnings():
    """`cache_warnings` on the main thread, nothing elsewhere: the warnings filters are the
    process's, and only the main thread changes them (a run holds them for the build behind
    its first chunks, `jaxrl.engine.loop.run_group`)."""
    return (cache_warnings() if threading.current_thread() is threading.main_thread()
            else contextlib.nullcontext())


def compiled(tag: tuple, algorithm, config, env, env_params, build: Callable, *example_args,
             sharding=None, runs_once: bool = False, donate_first: bool = False) -> Built:
    """One program `lower`ed and compiled (`compile_lowered`): 0 s on a hit of this process's
    cache, ``from_disk`` when JAX loaded the executable from the persistent cache
    (`jaxrl.compile_cache`) instead of compiling it, and the seconds of each phase."""
    return compile_lowered({"program": lower(
        tag, algorithm, config, env, env_params, build, *example_args, sharding=sharding,
        runs_once=runs_once, donate_first=donate_first)})["program"]


def abstract_outputs(program: Lowered, sharding) -> Any:
    """``program``'s outputs as `jax.ShapeDtypeStruct` leaves on ``sharding`` (or the default
    device), what the arrays it returns will be: another program can be lowered for them
    before this one has compiled or run."""
    where = sharding if sharding is not None else jax.sharding.SingleDeviceSharding(
        jax.devices()[0])
    return jax.tree.map(lambda o: jax.ShapeDtypeStruct(o.shape, o.dtype, sharding=where,
                                                       weak_type=o.weak_type),
                        program.out_info)


@contextlib.contextmanager
def cache_warnings():
    """The persistent cache's warnings as one line each (`_on_compile_warning`), for every
    thread compiling meanwhile (the filters are the process's); restored on exit."""
    with warnings.catch_warnings():
        warnings.filterwarnings("always", message=".*persistent compilation cache")
        warnings.showwarning = functools.partial(_on_compile_warning, warnings.showwarning)
        yield


def named(fn: Callable, name: str) -> Callable:
    """``fn`` under ``name``, the name its XLA module carries (``jit_chunk``, ``jit_eval``): each
    program is told apart in profiles and compile logs."""

    @functools.wraps(fn)
    def program(*args):
        return fn(*args)

    program.__name__ = program.__qualname__ = name
    return program


def forget() -> None:
    """Drop every compiled program this process holds, and JAX's own caches (a bench between
    entries, whose programs are not used again): their memory and mappings are released."""
    PROGRAMS.clear()
    jax.clear_caches()


def _on_compile_warning(show: Callable, message, category, filename, lineno, file=None,
                        line=None) -> None:
    """A persistent-cache warning becomes one line on stderr; other warnings are shown as
    usual. A bad entry (JAX skips it and compiles afresh) is dropped at once, so the fresh
    executable is written in its place; a failed write (the program ran, uncached) heals the
    folder's access-time files so that the next write succeeds."""
    text = str(message)
    if "persistent compilation cache" not in text:
        show(message, category, filename, lineno, file, line)
        return
    if text.startswith("Error writing"):
        compile_cache.heal()
        print(f"jaxrl: warning: {text.splitlines()[0]} (the program was compiled; it is not "
              f"cached this time)", file=sys.stderr)
        return
    module = text.split("'")[1] if text.count("'") >= 2 else ""
    dropped = compile_cache.drop_unreadable(module) if module else 0
    print(f"jaxrl: warning: {text.splitlines()[0]} (compiled afresh"
          f"{'; the bad entry was replaced' if dropped else ''})", file=sys.stderr)


def init_program(algorithm, config, env, env_params, members: int) -> Callable:
    """Builder of ``init_all(keys [members], hparams [members]) -> state [members]``: each
    member starts from its own traced values (an initial state may depend on them, e.g. SAC's
    initial temperature), which the program takes as arguments like the keys."""
    static = config.static()

    def build():
        def init_all(keys, hparams):
            init = lambda k, hp: algorithm.init(k, env, env_params, static, hp)
            return over_members(init, members)(keys, hparams)

        return init_all

    return build


def chunk_program(algorithm, config, env, env_params, length: int, members: int) -> Callable:
    """Builder of ``chunk(state [members]) -> (state, metrics {name: [members, length]})``:
    ``length`` train steps scanned."""
    static = config.static()

    def build():
        def one_member(state):
            step = lambda s, _: algorithm.train_step(s, static, env, env_params)
            return jax.lax.scan(step, state, None, length=length)

        return over_members(one_member, members)

    return build


def eval_program(algorithm, config, env, env_params, episodes: int, max_steps: int,
                 members: int, deterministic: bool = True) -> Callable:
    """Builder of ``eval(state, key, chunk) -> returns [members, episodes]`` under the policy's
    mode (``deterministic``) or its sampled actions; the eval key of chunk ``c`` is
    ``fold_in(key, c)``."""
    policy = algorithm.policy(config.static(), env, env_params)

    def build():
        def one_member(state, key, chunk):
            key = jax.random.fold_in(key, chunk)
            with jax.named_scope("evaluation"):
                return evaluate(state, key, policy, env, env_params, episodes, max_steps,
                                deterministic)

        return over_members(one_member, members)

    return build


def act_program(resolved) -> acting.Policy:
    """The policy of a resolved group with its step jitted (`jaxrl.algos.acting.Policy`:
    ``step(state, memory, obs, key, deterministic) -> (memory, action)``)."""
    return acting.jitted(resolved.algorithm.policy(resolved.config.static(), resolved.env,
                                                   resolved.env_params))

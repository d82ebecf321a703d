import collections
import json
import os
from pathlib import Path

from jaxrl.compile_cache import MIN_COMPILE_SECONDS, default_dir, max_bytes
from jaxrl.platform import DEFAULT_CPU_OPT_LEVEL, FAST_COMPILE_XLA_FLAGS

# jaxrl's persistent compilation cache, outside the clone ($JAXRL_CACHE_DIR or the per-user
# cache folder), for every program the tests compile (also those jitted outside the engine):
# the xdist workers and the CLI tests' subprocesses share programs, and a second run of the
# suite on the same machine (or a second CI run) starts warm. With jaxrl's size bound in every
# process, JAX keeps the access-time file its eviction needs beside every entry.
# An offscreen OpenGL for MuJoCo's renderer (brax and Playground frames), whichever test
# imports MuJoCo first: it reads MUJOCO_GL once, at import (envs.brax_adapter.headless_gl).
if not os.environ.get("DISPLAY"):
    os.environ.setdefault("MUJOCO_GL", "egl")
    os.environ.setdefault("PYOPENGL_PLATFORM", os.environ["MUJOCO_GL"])
os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", str(default_dir()))
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", str(MIN_COMPILE_SECONDS))
os.environ.setdefault("JAX_COMPILATION_CACHE_MAX_SIZE", str(max_bytes()))
# Every program the tests compile, the engine's and the small jits around them, at the LLVM
# level the engine uses on the CPU (jaxrl.platform.cpu_opt_level, -O2): a quarter less compile time.
if "xla_backend_optimization_level" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_backend_optimization_level="
                               f"{DEFAULT_CPU_OPT_LEVEL}").strip()
# ... and with XLA:CPU's older fusion emitters (jaxrl.platform.FAST_COMPILE_XLA_FLAGS): the
# suite's programs run a few thousand steps, so compiling a third faster beats running up to
# half as fast (cold suite 14:41 -> 9:48). tests/test_platform.py checks that the
# engine's default code generator trains to the same parameters.
if "xla_cpu_use_fusion_emitters" not in os.environ["XLA_FLAGS"]:
    os.environ["XLA_FLAGS"] += f" {FAST_COMPILE_XLA_FLAGS}"

import pytest


@pytest.fixture(autouse=True, scope="session")
def _isolated_run_store(tmp_path_factory):
    """Runs recorded by tests go to a temporary store, never ./runs."""
    root = tmp_path_factory.mktemp("runs")
    old = os.environ.get("JAXRL_RUNS_DIR")
    os.environ["JAXRL_RUNS_DIR"] = str(root)
    yield root
    if old is None:
        os.environ.pop("JAXRL_RUNS_DIR", None)
    else:
        os.environ["JAXRL_RUNS_DIR"] = old


# JAXRL_COMPILE_AUDIT=FOLDER: per test, the seconds JAX spent tracing, lowering and compiling
# (compiling includes loading from the persistent cache) and the cache's misses and hits, one
# JSON file per xdist worker; what to shrink when the suite's cold time grows.
AUDIT = os.environ.get("JAXRL_COMPILE_AUDIT")
_audit: dict = collections.defaultdict(lambda: collections.defaultdict(float))
_current: list = [None]


def _on_duration(event: str, seconds: float, **_) -> None:
    if _current[0] is not None:
        _audit[_current[0]][event.rsplit("/", 1)[-1]] += seconds


def _on_event(event: str, **_) -> None:
    if _current[0] is not None and event.startswith("/jax/compilation_cache/cache_"):
        _audit[_current[0]][event.rsplit("/", 1)[-1]] += 1


if AUDIT:
    import jax.monitoring

    jax.monitoring.register_event_duration_secs_listener(_on_duration)
    jax.monitoring.register_event_listener(_on_event)


# JAXRL_PROGRAM_LOG=FOLDER: every program the engine builds (`jaxrl.engine.programs.compiled`),
# one JSON line each per xdist worker: the test, the program's tag, algorithm, env, a digest of
# its static config and argument shapes, seconds, and whether it came from a cache. Programs of
# one algorithm and env that differ in a digest are what the persistent cache cannot share.
PROGRAM_LOG = os.environ.get("JAXRL_PROGRAM_LOG")


def _log_programs() -> None:
    import hashlib

    from jaxrl.engine import programs

    inner = programs.compile_lowered  # every engine program passes here (`programs.compiled` too)
    out = Path(PROGRAM_LOG) / f"{os.environ.get('PYTEST_XDIST_WORKER', 'main')}.jsonl"
    out.parent.mkdir(parents=True, exist_ok=True)

    def digest(value) -> str:
        return hashlib.blake2b(repr(value).encode(), digest_size=6).hexdigest()

    def logged(pending):
        built = inner(pending)
        with out.open("a") as f:
            for name, p in pending.items():
                if not isinstance(p, programs.Lowered):
                    continue  # held by this process: nothing was built
                tag, algo, static, env = p.key[:4]
                f.write(json.dumps({
                    "test": _current[0], "tag": repr(tag), "algo": algo,
                    "env": str(getattr(env, "name", type(env).__name__)), "static": digest(static),
                    "shapes": digest(p.key[5:7]), "seconds": round(built[name].seconds, 3),
                    "from_disk": built[name].from_disk}) + "\n")
        return built

    programs.compile_lowered = logged


if PROGRAM_LOG:
    _log_programs()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _current[0] = item.nodeid
    yield
    _current[0] = None


def pytest_sessionfinish(session):
    report = os.environ.get("JAXRL_MODULES_REPORT")
    if report:  # which of the project's modules this worker imported (the fast tier's reach)
        import sys

        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        Path(report).mkdir(parents=True, exist_ok=True)
        names = sorted(m for m in sys.modules if m.split(".")[0] in ("jaxrl", "envs"))
        (Path(report) / f"{worker}.json").write_text(json.dumps(names))
    if AUDIT:
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        Path(AUDIT).mkdir(parents=True, exist_ok=True)
        (Path(AUDIT) / f"{worker}.json").write_text(json.dumps(_audit, indent=1))


FAST_TIER_DURATIONS = "docs/test-times/2026-11-30-417bd8b-cold-durations.txt"
"""The full cold run whose ``--durations=0`` output sets the tiers: ``--fast`` leaves out every
test that took longer than `FAST_TIER_SECONDS` there (setup, call and teardown summed). It is
417bd8b's, not the newer 098a08e's: that run's host was 1.61x slower by the reference workload
(docs/test-times.md), so at the same 2 s it would leave out tests by the host, not by the test."""
FAST_TIER_SECONDS = 2.0
SLOW_MODULES = 21  # the modules `SLOW_FIRST` runs first


def pytest_addoption(parser):
    parser.addoption("--fast", action="store_true",
                     help="the fast tier, for between commits: every test that took at most "
                          f"{FAST_TIER_SECONDS:g} s in the run of {FAST_TIER_DURATIONS}, and "
                          "every test that run did not time (new, or under 5 ms); the full "
                          "suite is what CI runs")


#: Test files moved since `FAST_TIER_DURATIONS` was measured: old path (a file, or a folder
#: ending in "/" for the files of it not named on their own) -> where it is now. The record stays
#: as measured; its node ids are read through this (`current_node`), and
#: tests/test_tiers.py checks that every path it names is a test file that exists.
MOVED_TESTS = {
    "tests/api/test_cli.py": "tests/cli/test_cli.py",
    "tests/api/test_demos.py": "tests/trained/test_demos.py",
    "tests/api/test_render.py": "tests/trained/test_render.py",
    "tests/api/test_serving.py": "tests/trained/test_serving.py",
    "tests/api/test_serving_integrity.py": "tests/trained/test_serving_integrity.py",
    "tests/api/test_pbt.py": "tests/studies/test_pbt.py",
    "tests/api/test_search.py": "tests/studies/test_search.py",
    "tests/api/test_sweep.py": "tests/studies/test_sweep.py",
    "tests/backends/": "tests/studies/",
    "tests/bench/": "tests/studies/bench/",
    "tests/bench/test_adaptive.py": "tests/studies/test_adaptive.py",
    "tests/bench/test_adaptive_inputs.py": "tests/studies/test_adaptive_inputs.py",
    "tests/bench/test_verdict_rule.py": "tests/studies/test_verdict_rule.py",
    "tests/bench/test_intervals.py": "tests/test_intervals.py",
    "tests/bench/test_measures.py": "tests/test_measures.py",
    "tests/bench/test_brax_sac.py": "tests/algos/test_brax_sac.py",
    "tests/bench/test_lease_relay.py": "tests/experiments/test_lease_relay.py",
    "tests/bench/test_minatar_notes.py": "tests/experiments/test_minatar_notes.py",
    "tests/bench/test_navix_notes.py": "tests/experiments/test_navix_notes.py",
    "tests/bench/test_spinningup_readings.py": "tests/experiments/test_spinningup_readings.py",
    "tests/buffers/": "tests/parts/buffers/",
    "tests/networks/": "tests/parts/",
    "tests/algos/test_metric_names.py": "tests/parts/test_metric_names.py",
    "tests/engine/test_memory.py": "tests/parts/test_memory.py",
    "tests/engine/test_compile_cache.py": "tests/test_compile_cache.py",
    "tests/engine/test_platform.py": "tests/test_platform.py",
    "tests/runs/test_stats.py": "tests/test_stats.py",
    "tests/throughput/test_ladder.py": "tests/studies/test_throughput.py",
    "tests/throughput/": "tests/experiments/",
    "tests/test_claims.py": "tests/experiments/test_claims.py",
}


def current_node(node: str) -> str:
    """A recorded node id (or test file path) where the test is now: its file's path through
    `MOVED_TESTS` (a file's own entry before its folder's)."""
    path, sep, rest = node.partition("::")
    for old in sorted(MOVED_TESTS, key=len, reverse=True):
        if path == old or (old.endswith("/") and path.startswith(old)):
            path = MOVED_TESTS[old] + path[len(old):]
            break
    return path + sep + rest


def recorded_seconds(path: str) -> dict[str, float]:
    """``{node id: seconds}`` of a ``--durations=0`` file (its phases summed), each node id where
    its test is now (`current_node`)."""
    import re

    seconds: dict[str, float] = collections.defaultdict(float)
    for line in Path(path).read_text().splitlines():
        match = re.match(r"([\d.]+)s (?:call|setup|teardown)\s+(\S+)", line)
        if match:
            seconds[current_node(match.group(2))] += float(match.group(1))
    return seconds


def _fast_tier(config, items) -> None:
    recorded = recorded_seconds(os.path.join(os.path.dirname(os.path.dirname(__file__)),
                                             FAST_TIER_DURATIONS))
    slow = [i for i in items if recorded.get(i.nodeid, 0.0) > FAST_TIER_SECONDS]
    if slow:
        config.hook.pytest_deselected(items=slow)
        keep = set(map(id, slow))
        items[:] = [i for i in items if id(i) not in keep]


def slowest_modules(path: str, count: int = SLOW_MODULES) -> list[str]:
    """The ``count`` test modules (paths under ``tests/``) whose tests took longest in all in
    the run of ``path`` (`recorded_seconds`), longest first: `SLOW_FIRST`."""
    totals: dict[str, float] = collections.defaultdict(float)
    for node, seconds in recorded_seconds(path).items():
        totals[node.split("::")[0].removeprefix("tests/")] += seconds
    return sorted(totals, key=totals.get, reverse=True)[:count]


# Modules that take longest on a 2-core CPU (compiles dominate), longest first, from the newest
# committed full run (`FAST_TIER_DURATIONS`). They run first so `-n 2 --dist worksteal`
# balances the short ones behind them instead of ending on a long one; a module's tests stay
# together, so its module-scoped fixtures are built once.
SLOW_FIRST = slowest_modules(FAST_TIER_DURATIONS)


def pytest_collection_modifyitems(config, items):
    """Slow modules first (`SLOW_FIRST`), the rest in collection order; with
    ``JAXRL_TEST_SHUFFLE=SEED`` every test in an order drawn from that seed instead, to find a
    test that leans on another having run before it (issue 73)."""
    if config.getoption("--fast"):
        _fast_tier(config, items)
    shuffle = os.environ.get("JAXRL_TEST_SHUFFLE")
    if shuffle:
        import random

        random.Random(shuffle).shuffle(items)
        return
    tests = os.path.dirname(__file__)
    rank = {os.path.join(tests, *name.split("/")): i for i, name in enumerate(SLOW_FIRST)}
    # sorted() is stable: the rest keep their order, after the slow modules
    items[:] = sorted(items, key=lambda item: rank.get(str(item.path), len(rank)))


def make_cartpole_expert(folder: Path):
    """A small recorded PPO CartPole run (2 seeds) in a store under ``folder`` and 8 episodes
    of its seed 0 as demonstrations: ``(result, runs_dir, demo folder)``."""
    import jaxrl
    from jaxrl.runs.demos import demo_folder

    runs = str(folder)
    result = jaxrl.train("ppo", env="CartPole-v1", seeds=2, total_steps=4096, progress=False,
                         runs_dir=runs, num_envs=4, num_steps=64)
    demo_id = jaxrl.demos(result.run_id, seed=0, episodes=8, runs_dir=runs)
    return result, runs, str(demo_folder(demo_id, runs))


@pytest.fixture(scope="session")
def cartpole_expert(tmp_path_factory):
    """`make_cartpole_expert` once per session, for the imitation tests."""
    return make_cartpole_expert(tmp_path_factory.mktemp("expert_runs"))


def host_reference_seconds() -> float:
    """Seconds this host takes for a fixed single-threaded CPU workload (pure Python, as tracing
    is, and a numpy sort), the best of three: the host's speed beside a timing row, since the
    machines of this project are not one host and a cold suite's seconds move with the host as
    much as with the tests (docs/test-times.md)."""
    import time

    import numpy as np

    values = np.random.default_rng(0).standard_normal(2_000_000)

    def work() -> None:
        total = 0
        for i in range(5_000_000):
            total += i * i % 7
        for _ in range(6):
            np.sort(values)

    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def pytest_terminal_summary(terminalreporter, config):
    """The host's reference seconds (`host_reference_seconds`), once per session, from the
    process that reports (under xdist the controller, measured after the tests)."""
    if hasattr(config, "workerinput") or config.getoption("collectonly"):
        return
    terminalreporter.write_line(f"host reference workload: {host_reference_seconds():.3f} s "
                                "(tests/conftest.py: host_reference_seconds)")

"""How jaxrl uses a CPU: one JAX device per core, and LLVM at -O2 for its programs (at -O3 where
the env asks for it).

One JAX CPU device per core, so multi-seed programs use every core of a CPU-only machine.

XLA runs one program on one CPU device with (almost) one thread: the per-seed work of PPO is
a chain of small matrix products that the intra-op pool cannot split profitably. The driver
shards the member axis (configs x seeds) over the local devices, so giving the CPU backend one
device per core turns a 2-core machine into two devices that each train half of the seeds,
concurrently (measured: 1.9-2x env-steps/s for 8 and 32 PPO seeds on 2 cores).

`configure_cpu_devices` runs when `jaxrl` is imported, before JAX creates its backends. It
does nothing when the count is already chosen (``--xla_force_host_platform_device_count`` in
``XLA_FLAGS`` or ``jax_num_cpu_devices`` / ``$JAX_NUM_CPU_DEVICES`` set) or when a backend already exists (JAX was used
before `jaxrl` was imported). ``JAXRL_CPU_DEVICES=N`` picks the count; ``1`` turns it off.
On a GPU machine the extra CPU devices are idle: the default backend is the GPU. A process that
trains one member gains nothing from them, and has lost to them
(`one_device_for_one_member`, which the CLI's ``train`` calls at one seed).

On the CPU, the engine compiles its programs with LLVM at -O2 (`compiler_options`) instead of
XLA's default -O3. Compile time drops by about a quarter and run time does not change beyond
noise, since the heavy lifting (matrix products, convolutions) is library code that the level
does not touch. Measured on 2 cores: chunk programs of PPO CartPole 6.5 -> 5.4 s, SAC Pendulum
8.6 -> 5.9 s, DQN CartPole 6.1 -> 4.9 s; three probe rungs (PPO, SAC, DQN) 50.9 -> 40.3 s of
wall; -O1 compiles no faster than -O2, and -O0 runs PPO 4x slower. Results are not bitwise
those of -O3 (the machine code differs: PPO CartPole's parameters after 20k steps agree to
1e-9 relative); ``JAXRL_CPU_OPT_LEVEL``
(0-3) picks another level, and a level set in ``XLA_FLAGS`` is left alone.

An env whose own step is the heavy, XLA-generated code says so with a ``cpu_opt_level``
attribute (`envs.core.Environment`), and the engine's programs on it compile at that level
unless one of the two settings above chooses. brax's own pipelines and Playground's tasks ask
for -O3: their physics is long elementwise fusions, not library products. brax's MJX hopper
does not (PPO at 1 member: 7.5-7.6k env-steps/s at -O2, 6.8-7.1k at -O3). Measured on 2
cores, each env's path alone (4 x 32 envs of random actions), -O2 against -O3: brax hopper positional 18.6-22.8k against 29.3-30.5k env-steps/s, Playground
CartpoleBalance 421-509k against 731-744k, brax hopper generalized 10.0-10.9k against
11.6-12.0k; MJX hopper, spring and Playground CheetahRun unchanged; PPO on brax hopper
positional with rejax's config, 4 members: 16.8k against 23.7k. The level is not one for
every env: Navix and XLand-MiniGrid step 1.4-1.9x faster at -O2, and gymnax's envs, Craftax
and Jumanji do not differ (benchmarks/throughput-cpu-ab/opt-level.md).

A program that runs once (the engine's init: network initialization, env reset, empty
buffers) compiles at -O0 (`RUN_ONCE_OPT_LEVEL`), whatever the level of the others: its run
time is microseconds at any level, and -O0 takes a third off its compile (PPO CartPole's init
2.7 -> 1.8 s, SAC Pendulum's 3.4 -> 2.3 s).

`FAST_COMPILE_XLA_FLAGS` trades run time for compile time, for work that is nearly all
compiling: XLA:CPU's older fusion emitters instead of its MLIR ones. Measured on 2 cores (4
seeds, cache off, compile / env-steps per second): PPO CartPole 5.6 -> 3.7 s / 309k -> 183k,
SAC Pendulum 7.0 -> 4.7 s / 2.7k -> 2.5k, DQN CartPole 5.1 -> 3.6 s / 34k -> 17k, PPO
Breakout-MinAtar 8.1 -> 5.0 s / 9.9k -> 9.3k. A training run loses by it, so the engine keeps
XLA's default; the test suite (a few thousand steps per program) sets it in ``XLA_FLAGS``
(cold suite 14:41 -> 9:48), and a test checks that both code generators train to the same
parameters (float rounding apart). ``XLA_FLAGS="--xla_cpu_use_fusion_emitters=false"`` does
the same for a user's short runs (a probe ladder, a smoke test).
"""

from __future__ import annotations

import os
import sys
import warnings

ENV_VAR = "JAXRL_CPU_DEVICES"
OPT_LEVEL_VAR = "JAXRL_CPU_OPT_LEVEL"
DEFAULT_CPU_OPT_LEVEL = 2  # XLA's default is 3
RUN_ONCE_OPT_LEVEL = 0  # for programs that run once per run (init)
FAST_COMPILE_XLA_FLAGS = "--xla_cpu_use_fusion_emitters=false"  # compile-bound work (tests)
JAX_VAR = "JAX_NUM_CPU_DEVICES"  # read by JAX when it is imported
MARK_VAR = "JAXRL_SET_JAX_NUM_CPU_DEVICES"  # the value jaxrl itself put in JAX_VAR


def cpu_cores() -> int:
    """Cores this process may run on (its CPU affinity, not the machine's total)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def requested_cpu_devices() -> int:
    """``$JAXRL_CPU_DEVICES`` if set to a positive integer, else the number of cores (a bad
    value is reported with a warning and ignored: the import must not fail over it)."""
    raw = os.environ.get(ENV_VAR, "").strip()
    if not raw:
        return cpu_cores()
    try:
        count = int(raw)
    except ValueError:
        count = 0
    if count < 1:
        warnings.warn(f"ignoring {ENV_VAR}={raw!r} (not a positive integer); using one CPU "
                      f"device per core ({cpu_cores()})", stacklevel=2)
        return cpu_cores()
    return count


def configure_cpu_devices() -> int | None:
    """Give the CPU backend `requested_cpu_devices` devices if nothing has chosen a count yet.
    Returns the count set, or None when it left JAX alone.

    When JAX is not imported yet this sets ``$JAX_NUM_CPU_DEVICES`` (which JAX reads when it is
    imported), so ``import jaxrl`` does not load JAX: `jaxrl runs ls` starts in a fraction of a
    second. ``$JAXRL_SET_JAX_NUM_CPU_DEVICES`` marks the value as jaxrl's own, so a child
    process that inherits it still honours its own ``$JAXRL_CPU_DEVICES``."""
    if "xla_force_host_platform_device_count" in os.environ.get("XLA_FLAGS", ""):
        _forget_inherited_count()  # JAX would let $JAX_NUM_CPU_DEVICES beat the explicit flag
        return None
    if "jax" in sys.modules:
        return _configure_imported_jax()
    chosen = os.environ.get(JAX_VAR)
    if chosen is not None and chosen != os.environ.get(MARK_VAR):
        return None  # the user chose the count
    count = requested_cpu_devices()
    os.environ[JAX_VAR] = os.environ[MARK_VAR] = str(count)
    return count


def one_device_for_one_member(members: int) -> bool:
    """Give JAX one CPU device instead of one per core, for a process that trains ``members``
    = 1 member: its program runs on one device whatever the count, and a second device made
    one-member runs slower (median 0.96x the time with one device over five ladder workloads,
    DQN 0.83-0.94x, SAC 0.86-0.91x; benchmarks/device-count-cpu). Only where jaxrl chose the
    count (``$JAXRL_CPU_DEVICES`` and JAX's own settings unset) and no backend exists yet. The
    ``jaxrl train`` command calls it; ``jaxrl.cli.main([...])`` inside a process, and a Python
    session (which may train many members next), do not.
    Returns whether it changed the count."""
    mark = os.environ.get(MARK_VAR)
    chosen_by_jaxrl = mark is not None and os.environ.get(JAX_VAR) == mark
    if (members != 1 or os.environ.get(ENV_VAR, "").strip() or not chosen_by_jaxrl
            or "xla_force_host_platform_device_count" in os.environ.get("XLA_FLAGS", "")):
        return False
    if "jax" in sys.modules:
        import jax
        from jax._src import xla_bridge

        if xla_bridge.backends_are_initialized():
            return False
        jax.config.update("jax_num_cpu_devices", 1)
    os.environ[JAX_VAR] = os.environ[MARK_VAR] = "1"
    return True


def _forget_inherited_count() -> None:
    """Drop a ``$JAX_NUM_CPU_DEVICES`` that a parent jaxrl process set (not the user)."""
    if MARK_VAR in os.environ and os.environ.get(JAX_VAR) == os.environ[MARK_VAR]:
        del os.environ[JAX_VAR]
    os.environ.pop(MARK_VAR, None)


def _configure_imported_jax() -> int | None:
    """`configure_cpu_devices` when JAX is already imported: through its config, unless a
    backend exists (then the device count is fixed) or the count is already chosen."""
    import jax
    from jax._src import xla_bridge

    if jax.config.jax_num_cpu_devices != -1 or xla_bridge.backends_are_initialized():
        return None
    count = requested_cpu_devices()
    jax.config.update("jax_num_cpu_devices", count)
    return count


def cpu_opt_level(preferred: int | None = None) -> int | None:
    """The LLVM optimization level for jaxrl's CPU programs: ``$JAXRL_CPU_OPT_LEVEL`` (0-3),
    else the env's ``preferred`` level, else `DEFAULT_CPU_OPT_LEVEL`; None when ``XLA_FLAGS``
    already sets one (the user's choice stands). A bad value is reported with a warning and the
    default used."""
    if "xla_backend_optimization_level" in os.environ.get("XLA_FLAGS", ""):
        return None
    raw = os.environ.get(OPT_LEVEL_VAR, "").strip()
    if not raw:
        return DEFAULT_CPU_OPT_LEVEL if preferred is None else preferred
    if raw not in {"0", "1", "2", "3"}:
        warnings.warn(f"ignoring {OPT_LEVEL_VAR}={raw!r} (not 0, 1, 2 or 3); using "
                      f"{DEFAULT_CPU_OPT_LEVEL}", stacklevel=2)
        return DEFAULT_CPU_OPT_LEVEL
    if raw == "0":
        warnings.warn(f"{OPT_LEVEL_VAR}=0 compiles training programs at LLVM -O0, at which SAC on "
                      f"Pendulum-v1 once trained to non-finite values where -O1 and -O2 trained "
                      f"normally (docs/test-times/2026-11-30-levers.md; not seen again at "
                      f"55c9d5d, cause unknown, docs/test-times/2026-11-30-levers-098a08e.md); "
                      f"use it to measure compile time, not to train", stacklevel=2)
    return int(raw)


def compiler_options(platform: str, runs_once: bool = False,
                     preferred: int | None = None) -> dict[str, int]:
    """XLA compile options for a jaxrl program that runs on ``platform`` ("cpu", "gpu",
    ...): the CPU's optimization level (`cpu_opt_level` with the env's ``preferred`` level, or
    `RUN_ONCE_OPT_LEVEL` for a program that ``runs_once``); nothing elsewhere."""
    if platform != "cpu":
        return {}
    level = RUN_ONCE_OPT_LEVEL if runs_once else cpu_opt_level(preferred)
    return {} if level is None else {"xla_backend_optimization_level": level}

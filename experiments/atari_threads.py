"""Emulator threads per Atari pool: ale-py's default against one thread per usable core.

    python experiments/atari_threads.py cpu  [--pairs 3] [--seconds 3] [--out FILE]
    python experiments/atari_threads.py host [--envs 48] [--pairs 2] [--seconds 2] [--out FILE]

ale-py 0.12.1 sizes a pool's worker threads as ``min(num_envs, hardware_concurrency())``
(``src/ale/vector/env_vectorizer.cpp``, lines 67-73), and ``std::thread::hardware_concurrency``
counts the host's *online* processors, not the ones this process may run on. jaxrl's adapter
now passes ``min(num_envs, usable cores)`` instead (``envs.atari.AtariEnv.pool_threads``).
Each measurement is its own process (a fresh pool), "default" (ale-py's count) and "fixed"
(the adapter's) taken in turn, A B A B, and reported pair by pair:

* ``raw``: ale-py's pool alone, its numpy ``step`` with random actions (no JAX).
* ``adapter``: jaxrl's Atari adapter, ``vmap(env.step)`` in a jitted scan with random actions
  (same-step resets included), on JAX's default backend.

Each reports env-steps/s (wall clock), the process's CPU-seconds per second, env-steps per
CPU-second (what the threads cost, whatever else shares the machine) and context switches per
env step (summed over the process's threads).

``cpu`` simulates a many-core host on this one: an ``LD_PRELOAD`` shim (compiled here with
``cc``) makes ``hardware_concurrency()`` answer 256 to ale-py's library only (every other
caller gets the real count), so ale-py's default starts one thread per emulator, as on a GPU
host with hundreds of online processors; ``taskset -c 0`` leaves the process one usable core.
Two last scenarios need no shim: one usable core of this machine's two online processors
(ale-py's default starts 2 threads), and a control where both counts are the same (2 of 2).

``host`` measures the machine it runs on (a lent GPU host: `experiments/gpu_lease.sh threads`):
its processor facts, one emulator on one thread and one per usable core (the per-core speed,
no oversubscription), then the default/fixed pairs at ``--envs`` emulators.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # jaxrl's envs from this checkout
GAME = "Breakout"
SHIM_SOURCE = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>

/* std::thread::hardware_concurrency(): FAKE_ONLINE_CPUS for callers inside ale-py's library,
   the real online count (what libstdc++ answers: get_nprocs) for every other caller. */
unsigned int _ZNSt6thread20hardware_concurrencyEv(void) {
    const char *fake = getenv("FAKE_ONLINE_CPUS");
    Dl_info info;
    if (fake && dladdr(__builtin_return_address(0), &info) && info.dli_fname
            && strstr(info.dli_fname, "_ale_py"))
        return (unsigned int)atoi(fake);
    return (unsigned int)get_nprocs();
}
"""


# -- one measurement (a child process) -------------------------------------------------------------
def _threads() -> int:
    return len(os.listdir("/proc/self/task"))


def _switches() -> int:
    """Voluntary and involuntary context switches so far, summed over this process's threads."""
    total = 0
    for task in os.listdir("/proc/self/task"):
        try:
            text = Path(f"/proc/self/task/{task}/status").read_text()
        except OSError:
            continue
        for line in text.splitlines():
            if line.endswith(tuple("0123456789")) and "ctxt_switches" in line:
                total += int(line.split()[-1])
    return total


def _timed(step, steps_per_call: int, seconds: float) -> dict:
    calls, switches, cpu = 0, _switches(), os.times()
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        step()
        calls += 1
    wall = time.perf_counter() - start
    end = os.times()
    cpu_s = end.user + end.system - cpu.user - cpu.system
    steps = calls * steps_per_call
    return {"env_steps_per_s": round(steps / wall), "cpu_per_s": round(cpu_s / wall, 2),
            "env_steps_per_cpu_s": round(steps / max(cpu_s, 1e-9)),
            "switches_per_env_step": round((_switches() - switches) / steps, 3),
            "wall_s": round(wall, 2)}


def measure(path: str, envs_n: int, threads: str, seconds: float) -> dict:
    """One pool of ``envs_n`` Breakout emulators; ``threads`` "default" (ale-py's own count,
    ``num_threads=0``), "fixed" (the adapter's default) or a number."""
    from envs.atari import rom_name, usable_cores

    kwargs = {} if threads == "fixed" else {"num_threads": 0 if threads == "default" else int(threads)}
    before = _threads()
    if path == "raw":
        import numpy as np
        from ale_py.vector_env import AtariVectorEnv

        count = min(envs_n, usable_cores()) if threads == "fixed" else kwargs["num_threads"]
        pool = AtariVectorEnv(rom_name(GAME), num_envs=envs_n, num_threads=count)
        pool_threads = _threads() - before
        pool.reset(seed=0)
        actions = np.random.default_rng(0).integers(0, pool.single_action_space.n, (256, envs_n))
        position = [0]

        def step():
            pool.step(actions[position[0] % 256])
            position[0] += 1

        for _ in range(20):
            step()
        result = _timed(step, envs_n, seconds)
    else:
        import jax

        import envs

        env, _ = envs.make(f"atari:{GAME}", **kwargs)
        n, k = envs_n, 32
        reset = jax.jit(lambda key: jax.vmap(env.reset)(jax.random.split(key, n))[1])
        state = reset(jax.random.key(0))
        jax.block_until_ready(state)
        pool_threads = None  # the probe pool's thread and XLA's threads blur a count here

        @jax.jit
        def run(state, key):
            def body(s, key):
                a = jax.random.randint(key, (n,), 0, env.action_space().n)
                _, s, reward, *_ = jax.vmap(env.step)(jax.random.split(key, n), s, a)
                return s, reward.sum()
            return jax.lax.scan(body, state, jax.random.split(key, k))

        carry = [state, jax.random.key(1)]

        def step():
            carry[1], key = jax.random.split(carry[1])
            carry[0], rewards = run(carry[0], key)
            jax.block_until_ready(rewards)

        step()  # compile
        result = _timed(step, n * k, seconds)
        result["device"] = str(jax.devices()[0])
    return {"path": path, "envs": envs_n, "threads": threads, "pool_threads": pool_threads,
            "process_threads": _threads(), "usable_cores": usable_cores(),
            "ale_online_cpus": int(os.environ.get("FAKE_ONLINE_CPUS", os.cpu_count() or 0)),
            **result}


# -- the parent: scenarios, pairs in turn ----------------------------------------------------------
def _shim(folder: Path) -> Path:
    if not shutil.which("cc"):
        raise SystemExit("the cpu scenarios need a C compiler (cc) for the LD_PRELOAD shim")
    source, lib = folder / "online_cpus.c", folder / "online_cpus.so"
    source.write_text(SHIM_SOURCE)
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", str(lib), str(source), "-ldl"],
                   check=True)
    return lib


def _child(path: str, envs_n: int, threads: str, seconds: float, cores: str | None,
           fake_online: int | None, shim: Path | None) -> dict:
    env = dict(os.environ)
    if fake_online:
        assert shim is not None
        env["FAKE_ONLINE_CPUS"] = str(fake_online)
        env["LD_PRELOAD"] = f"{shim} {env['LD_PRELOAD']}" if env.get("LD_PRELOAD") else str(shim)
    command = [sys.executable, __file__, "measure", "--path", path, "--envs", str(envs_n),
               "--threads", threads, "--seconds", str(seconds)]
    if cores is not None:
        command = ["taskset", "-c", cores, *command]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr[-3000:]}")
    return json.loads(lines[-1])


def _pairs(label: str, path: str, envs_n: int, pairs: int, seconds: float,
           cores: str | None = None, fake_online: int | None = None,
           shim: Path | None = None) -> dict:
    rows = []
    for i in range(pairs):
        a = _child(path, envs_n, "default", seconds, cores, fake_online, shim)
        b = _child(path, envs_n, "fixed", seconds, cores, fake_online, shim)
        row = {"pair": i + 1, "default": a, "fixed": b,
               "fixed_over_default_rate": round(b["env_steps_per_s"] / a["env_steps_per_s"], 3),
               "fixed_over_default_per_cpu_s":
                   round(b["env_steps_per_cpu_s"] / a["env_steps_per_cpu_s"], 3)}
        rows.append(row)
        print(f"{label} {path} pair {i + 1}: default {a['env_steps_per_s']}/s "
              f"({a['env_steps_per_cpu_s']}/cpu-s, {a['switches_per_env_step']} sw/step, "
              f"{a['pool_threads']} pool threads), fixed {b['env_steps_per_s']}/s "
              f"({b['env_steps_per_cpu_s']}/cpu-s, {b['switches_per_env_step']} sw/step, "
              f"{b['pool_threads']} pool threads): rate x{row['fixed_over_default_rate']}, "
              f"per cpu-s x{row['fixed_over_default_per_cpu_s']}", flush=True)
    return {"scenario": label, "path": path, "envs": envs_n, "cores": cores,
            "simulated_online_cpus": fake_online, "pairs": rows,
            "median_fixed_over_default_rate":
                statistics.median(r["fixed_over_default_rate"] for r in rows),
            "median_fixed_over_default_per_cpu_s":
                statistics.median(r["fixed_over_default_per_cpu_s"] for r in rows)}


def _python_loop_ms() -> float:
    """Best of 5 of a fixed pure-Python integer loop on one thread, no sleeping: the core's
    own speed, to set beside one emulator's (which waits on a semaphore every step)."""
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        total = 0
        for i in range(1_000_000):
            total += i * i % 7
        best = min(best, time.perf_counter() - start)
    return round(best * 1e3, 1)


def _facts() -> dict:
    import ale_py

    from envs.atari import _cgroup_cpu_quota, usable_cores

    model = mhz = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name") and model is None:
                model = line.split(":", 1)[1].strip()
            if line.startswith("cpu MHz") and mhz is None:
                mhz = float(line.split(":", 1)[1])
    except OSError:
        pass
    try:
        siblings = Path("/sys/devices/system/cpu/cpu0/topology/thread_siblings_list").read_text()
    except OSError:
        siblings = None
    cpufreq = Path("/sys/devices/system/cpu/cpu0/cpufreq")
    governor = max_khz = None
    try:
        governor = (cpufreq / "scaling_governor").read_text().strip()
        max_khz = int((cpufreq / "scaling_max_freq").read_text())
    except (OSError, ValueError):
        pass
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                                capture_output=True, text=True).stdout.strip() or None
    except OSError:
        commit = None
    return {"online_cpus": os.cpu_count(), "affinity_cpus": len(os.sched_getaffinity(0)),
            "cgroup_cpu_quota": _cgroup_cpu_quota(Path("/sys/fs/cgroup")),
            "usable_cores": usable_cores(), "cpu_model": model, "cpu_mhz": mhz,
            "cpu0_thread_siblings": siblings.strip() if siblings else None,
            "cpufreq_governor": governor, "cpufreq_max_mhz": max_khz and max_khz // 1000,
            "python_loop_ms": _python_loop_ms(),
            "load_average": os.getloadavg(), "python": platform.python_version(),
            "ale_py": ale_py.__version__, "commit": commit}


def cpu_mode(args) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        shim = _shim(Path(folder))
        scenarios = []
        for path in ("raw", "adapter"):
            scenarios.append(_pairs("ale-py sees 256 online, 2 usable cores", path, 48,
                                    args.pairs, args.seconds, None, 256, shim))
            scenarios.append(_pairs("ale-py sees 256 online, 1 usable core (taskset -c 0)", path,
                                    48, args.pairs, args.seconds, "0", 256, shim))
        scenarios.append(_pairs("no shim: 2 online, 1 usable core (taskset -c 0)", "raw", 16,
                                args.pairs, args.seconds, "0"))
        # the control: both sides start 2 threads (min(48, 2 online) = 2 usable), so what the
        # pairs differ by here is what else ran on the machine meanwhile
        scenarios.append(_pairs("control, no shim: 2 online, 2 usable (same thread count)", "raw",
                                48, args.pairs, args.seconds))
    return {"mode": "cpu", "game": GAME, "seconds_per_measurement": args.seconds,
            "machine": _facts(), "scenarios": scenarios}


def _host_ticks() -> list[int]:
    """/proc/stat's first line: the whole host's CPU time so far (user, nice, system, idle,
    iowait, irq, softirq, steal, ...), in ticks, over every online processor."""
    return [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]


def _host_busy(before: list[int], after: list[int]) -> dict:
    d = [b - a for a, b in zip(before, after)]
    total = max(sum(d[:8]), 1)
    return {"busy": round(1 - (d[3] + d[4]) / total, 3), "steal": round(d[7] / total, 3),
            "online_cpus": os.cpu_count()}


def host_mode(args) -> dict:
    from envs.atari import usable_cores

    ticks = _host_ticks()
    facts = _facts()
    print(json.dumps(facts), flush=True)
    cores = usable_cores()
    one = _child("raw", 1, "1", args.seconds, None, None, None)
    per_core = _child("raw", cores, str(cores), args.seconds, None, None, None)
    print(f"one emulator, one thread: {one['env_steps_per_s']}/s; {cores} emulators on {cores} "
          f"threads: {per_core['env_steps_per_s']}/s "
          f"({round(per_core['env_steps_per_s'] / cores)} per core)", flush=True)
    scenarios = [_pairs("this host", path, args.envs, args.pairs, args.seconds)
                 for path in ("raw", "adapter")]
    # how busy the whole host was meanwhile (other tenants, if the container owns few of its CPUs)
    facts["host_cpu_during_run"] = _host_busy(ticks, _host_ticks())
    return {"mode": "host", "game": GAME, "seconds_per_measurement": args.seconds,
            "machine": facts, "one_emulator_one_thread": one, "one_emulator_per_core": per_core,
            "scenarios": scenarios}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["cpu", "host", "measure"])
    parser.add_argument("--path", choices=["raw", "adapter"], default="raw")
    parser.add_argument("--envs", type=int, default=48)
    parser.add_argument("--threads", default="fixed")
    parser.add_argument("--pairs", type=int, default=None)
    parser.add_argument("--seconds", type=float, default=None)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    if args.mode == "measure":
        print(json.dumps(measure(args.path, args.envs, args.threads, args.seconds or 3)))
        return
    if args.pairs is None:
        args.pairs = 3 if args.mode == "cpu" else 2
    if args.seconds is None:
        args.seconds = 3.0 if args.mode == "cpu" else 2.0
    result = cpu_mode(args) if args.mode == "cpu" else host_mode(args)
    text = json.dumps(result, indent=1)
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        Path(args.out).write_text(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()

"""One rung of the throughput ladder, measured in a process of its own.

    python -c 'import sys; from jaxrl.studies.throughput.point import main; sys.exit(main(sys.argv[1:]))' \
        '{"workload": {...Workload fields...}, "members": 64}'

prints one JSON line (`RESULT_PREFIX` then the object) and exits 0, whatever happened:

* ``status: "ok"``: trained ``members`` members for the workload's steps per member, with
  ``env_steps_per_second`` over all members and the chunks after the first ``warmup_chunks``
  (the run's steady rate; ``env_steps_per_second_all`` counts every chunk; ``chunk_seconds``,
  each chunk's seconds, the first with the init program's run), ``compile_seconds``
  (init and chunk programs, apart from the run; ``compile_source`` says whether the persistent
  cache served them), ``peak_bytes`` and ``peak_kind`` (``"device"``: the accelerator
  allocator's peak; ``"host_rss"``: on the CPU, the process's peak resident memory above what
  it held before the plan, compiling included), ``predicted_bytes`` (the memory plan's figure
  for the busiest device), the devices the members ran on (``devices``) and how many the
  process had (``local_devices``: on a CPU, one per core unless ``$JAXRL_CPU_DEVICES`` says);
* ``status: "refused"``: the memory plan (`jaxrl.parts.memory`) refused the count before compiling;
  ``reason`` is its one-line message and ``predicted_bytes`` its figure;
* ``status: "failed"``: anything else, with a one-line ``reason`` (e.g. the allocator ran out).

``$JAXRL_PROFILE_DIR`` set: the rung is traced with `jax.profiler` into that folder.

A rung of one member runs in a process with one CPU device, as ``jaxrl train`` runs one seed
(`jaxrl.platform.one_device_for_one_member`; ``$JAXRL_CPU_DEVICES`` overrides it).

A process per rung keeps each rung's peak memory its own, keeps a crash (an allocator failure
on a GPU, the OOM killer on a CPU) from taking the ladder down, and gives every rung a fresh
compile. The orchestrating process (`jaxrl.studies.throughput.ladder`) never touches a device, so on a
GPU it holds no memory while a rung runs.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import sys
import time
import traceback

import jax

from jaxrl import algos
from jaxrl.engine.loop import run_group
from jaxrl.engine.members import member_sharding
from jaxrl.engine.spec import plan_memory, resolve_group, single_spec
from jaxrl.parts import memory
from jaxrl.platform import one_device_for_one_member

RESULT_PREFIX = "LADDER-POINT "
PROFILE_VAR = "JAXRL_PROFILE_DIR"
"""Set to a folder: the rung runs under `jax.profiler.trace` into it (the GPU plan's profile)."""


def _rss_bytes() -> int:
    """Resident memory of this process now (Linux ``/proc``; 0 where unavailable)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def _peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


def _device_peak(devices) -> int | None:
    peaks = []
    for d in devices:
        try:
            stats = d.memory_stats() or {}
        except Exception:  # backends without memory statistics
            stats = {}
        if "peak_bytes_in_use" in stats:
            peaks.append(int(stats["peak_bytes_in_use"]))
    return max(peaks) if peaks else None


def steady_rate(chunk_steps: list[int], chunk_seconds: list[float], warmup: int) -> float:
    """Env-steps/s over the chunks after the first ``warmup`` (all of them if too few remain)."""
    if len(chunk_steps) > warmup:
        chunk_steps, chunk_seconds = chunk_steps[warmup:], chunk_seconds[warmup:]
    return sum(chunk_steps) / max(sum(chunk_seconds), 1e-9)


def measure(workload: dict, members: int) -> dict:
    """Train ``members`` members of ``workload`` (a `Workload` as a dict; ``eval_episodes`` in
    it adds the evaluation program, 0 by default); the rung's record."""
    device = jax.local_devices()[0]
    record = {"workload": workload["name"], "members": members, "lib": "jaxrl",
              "steps_per_member_requested": workload["steps_per_member"],
              "device": f"{device.platform}:{device.id}",
              "device_kind": getattr(device, "device_kind", device.platform),
              "backend": jax.default_backend(), "jax": jax.__version__}
    steps = max(workload["steps_per_member"], algos.get(workload["algo"]).default_config(
        workload["env"]).replace(**workload.get("config", {})).steps_per_update)  # >= 1 update
    spec = single_spec(workload["algo"], workload["env"], members, steps,
                       eval_episodes=int(workload.get("eval_episodes", 0)),
                       max_chunk_updates=workload["max_chunk_updates"],
                       env_kwargs=workload.get("env_kwargs") or None,
                       **workload.get("config", {}))
    resolved = resolve_group(spec)
    rss_before = _rss_bytes()
    try:
        estimate = plan_memory(spec, resolved)
    except memory.MemoryPlanError as err:
        return {**record, "status": "refused", "reason": str(err),
                "predicted_bytes": _refused_estimate(resolved, members)}
    record["predicted_bytes"] = int(estimate.per_device()) if estimate else None
    chunk_seconds, chunk_steps = [], []

    def on_chunk(chunk):
        rate = chunk["metrics"]["env_steps_per_second"]
        steps = members * int(chunk["metrics"]["env_steps"].shape[1]) * resolved.config.steps_per_update
        chunk_steps.append(steps)
        chunk_seconds.append(steps / max(float(rate.reshape(-1)[0]), 1e-9))

    start = time.perf_counter()
    with _profiled(os.environ.get(PROFILE_VAR)):
        outcome = run_group(spec, resolved, progress=False, on_chunk=on_chunk)
    wall = time.perf_counter() - start
    done = outcome.done_updates() * outcome.steps_per_update
    peak = _device_peak(jax.local_devices()) if device.platform != "cpu" else None
    return {**record, "status": "ok", "steps_per_member": done,
            "env_steps_per_second": steady_rate(chunk_steps, chunk_seconds,
                                                workload.get("warmup_chunks", 1)),
            "env_steps_per_second_all": members * done / max(outcome.run_seconds, 1e-9),
            "chunks": len(chunk_steps), "warmup_chunks": workload.get("warmup_chunks", 1),
            "chunk_seconds": [round(x, 4) for x in chunk_seconds],
            "compile_seconds": outcome.compile_seconds, "compile_source": outcome.compile_source,
            "compile_parts": outcome.compile_parts, "compile_phases": outcome.compile_phases,
            "run_seconds": outcome.run_seconds, "wall_seconds": wall,
            "devices": outcome.devices, "local_devices": jax.local_device_count(),
            "peak_bytes": peak if peak is not None else max(0, _peak_rss_bytes() - rss_before),
            "peak_kind": "device" if peak is not None else "host_rss",
            "failures": {str(k): v for k, v in outcome.failures.items()}}


def _profiled(folder: str | None):
    """``jax.profiler.trace(folder)`` around the rung's compile and run (TensorBoard's or
    Perfetto's trace viewer reads it), or nothing. Python's own function calls are not traced:
    they were 1M events and 70 MB for one second of a CPU rung, and say nothing of the device."""
    if not folder:
        return contextlib.nullcontext()
    options = jax.profiler.ProfileOptions()
    options.python_tracer_level = 0
    return jax.profiler.trace(folder, profiler_options=options)


def _refused_estimate(resolved, members: int) -> int | None:
    """The plan's bytes for the busiest device at a refused count (for the report)."""
    sharding, padded = member_sharding(members, True)
    devices = len(sharding.device_set) if sharding is not None else 1
    try:
        return int(memory.estimate(resolved.algorithm, resolved.config, resolved.env,
                                   resolved.env_params, padded, devices).per_device())
    except Exception:  # the refusal's message has the figure already
        return None


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split()) or type(err).__name__
    return f"{type(err).__name__}: {text}"[:500]


def main(argv: list[str]) -> int:
    request = json.loads(argv[0])
    workload, members = request["workload"], int(request["members"])
    one_device_for_one_member(members)  # as `jaxrl train` runs one seed
    try:
        record = measure(workload, members)
    except Exception as err:  # an allocator failure, a bad config: the rung failed
        traceback.print_exc(file=sys.stderr)
        record = {"workload": workload.get("name"), "members": members, "lib": "jaxrl",
                  "status": "failed", "reason": _one_line(err)}
    print(RESULT_PREFIX + json.dumps(record), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

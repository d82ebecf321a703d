"""Compile the GPU plan's programs for a GPU this machine does not have (deviceless AOT).

    JAX_PLATFORMS=cpu PYTHONPATH=CUDA_PLUGIN_SITE python experiments/gpu_aot.py \
        [--target h100|h200 ...] [--workload ppo-cartpole --members 2048 ...] [--out DIR]

JAX can lower and compile for a GPU it does not see: a topology from
`jax.experimental.topologies.get_topology_desc` built from the GPU's target configuration
(`TARGETS`: the device facts XLA's GPU compiler reads), and the programs lowered with inputs
placed on that topology's device. The CUDA plugin (``jax-cuda12-plugin`` and
``jax-cuda12-pjrt`` with the CUDA wheels, of the same version as jax) must be importable;
``JAX_PLATFORMS=cpu`` keeps the plugin from probing for a driver this machine lacks. Each of the
ladder workload's programs (init, chunk; the ladder runs no evaluation) is traced as the engine
traces it (`jaxrl.engine.programs`), lowered onto the target device, compiled, and serialized
(`jax.experimental.serialize_executable`); ``results.json`` in ``--out`` records per target and
program the compile seconds and the executable's bytes, or the exact error where a step fails.

What this does not yet do: load the serialized executables on the loan. That needs the loan's
jax, jaxlib and CUDA plugin versions here (the first loan ran jax 0.11.2 on CUDA 13 drivers;
`gpu_plan.py setup` now records the plugin's name and version), and the engine taking a carried
executable in place of compiling (`jaxrl.engine.programs.compiled`).
"""

from __future__ import annotations

import argparse
import json
import time
import traceback
from pathlib import Path

import jax
import numpy as np

_COMMON = """
  threads_per_block_limit: 1024
  threads_per_warp: 32
  shared_memory_per_block: 49152
  shared_memory_per_core: 233472
  threads_per_core_limit: 2048
  core_count: 132
  fpus_per_core: 128
  block_dim_limit_x: 2147483647
  block_dim_limit_y: 65535
  block_dim_limit_z: 65535
  l2_cache_size: 52428800
  clock_rate_ghz: 1.98
  shared_memory_per_block_optin: 232448
  cuda_compute_capability {{ major: 9 }}
  registers_per_core_limit: 65536
  registers_per_block_limit: 65536
  memory_bandwidth: {bandwidth}
  device_memory_size: {memory}
"""
TARGETS = {
    "h100": ("NVIDIA H100 80GB HBM3", 3_352_320_000_000, 84_929_347_584),
    "h200": ("NVIDIA H200", 4_800_000_000_000, 143_771 * 2**20),  # the first loan's nvidia-smi
}
"""``name: (device kind, memory bandwidth B/s, device memory B)``: Hopper parts, 132 SMs,
compute capability 9.0 (NVIDIA's published specifications; the H200's memory as the first loan's
``nvidia-smi`` read it, benchmarks/throughput-gpu/plan.json)."""


def target_config(name: str, cuda: tuple[int, int] = (12, 9), cudnn: tuple[int, int] = (9, 8)
                  ) -> str:
    """XLA's ``GpuTargetConfigProto`` text for ``name`` (`TARGETS`)."""
    kind, bandwidth, memory = TARGETS[name]
    info = _COMMON.format(bandwidth=bandwidth, memory=memory)
    return (f"gpu_device_info {{{info}}}\nplatform_name: \"CUDA\"\n"
            f"dnn_version_info {{ major: {cudnn[0]} minor: {cudnn[1]} }}\n"
            f"runtime_version {{ major: {cuda[0]} minor: {cuda[1]} patch: 0 }}\n"
            f"device_description_str: \"{kind}\"\n")


def target_device(name: str):
    """The one device of a deviceless topology for ``name``."""
    from jax.experimental import topologies

    topology = topologies.get_topology_desc(platform="cuda", topology_name="cuda",
                                            target_config=target_config(name), topology="1x1x1")
    return topology.devices[0]


def _abstract(tree, sharding):
    return jax.tree.map(lambda x: jax.ShapeDtypeStruct(np.shape(x), x.dtype, sharding=sharding),
                        tree)


def lowered_programs(workload, members: int, device) -> dict:
    """``{"init": lower, "chunk": lower}``, each a function of no argument that lowers the
    workload's program for ``members`` members onto ``device`` (a deviceless target), traced as
    the engine traces it. jaxrl is imported here, so that a peer's Python can use this file's
    targets (`experiments/gpu_hlo.py`)."""
    from jaxrl import algos
    from jaxrl.engine import programs
    from jaxrl.engine.members import Members, pad_members
    from jaxrl.engine.spec import resolve_group, single_spec

    config = workload.config or {}
    steps = max(workload.steps_per_member, algos.get(workload.algo).default_config(
        workload.env).replace(**config).steps_per_update)
    spec = single_spec(workload.algo, workload.env, members, steps, eval_episodes=0,
                       max_chunk_updates=workload.max_chunk_updates,
                       env_kwargs=workload.env_kwargs or None, **config)
    r = resolve_group(spec)
    group = Members(r.configs, spec.seeds, spec.seed)
    keys, hparams = pad_members(group.keys(), members), pad_members(group.hparams(), members)
    sharding = jax.sharding.SingleDeviceSharding(device)
    length = min(r.num_updates, spec.max_chunk_updates)
    init_build = programs.init_program(r.algorithm, r.config, r.env, r.env_params, members)
    state_shapes = jax.eval_shape(init_build(), keys, hparams)
    builds = {"init": (init_build, (keys, hparams)),
              "chunk": (programs.chunk_program(r.algorithm, r.config, r.env, r.env_params,
                                               length, members), (state_shapes,))}

    def lower(name):
        build, args = builds[name]
        return jax.jit(programs.named(build(), name), in_shardings=sharding,
                       out_shardings=sharding).lower(*_abstract(args, sharding))

    return {name: (lambda name=name: lower(name)) for name in builds}


def compile_workload(workload, members: int, device) -> list[dict]:
    """The workload's init and chunk programs for ``members`` members, compiled for ``device``
    (a deviceless target): one record per program."""
    records = []
    for name, lower in lowered_programs(workload, members, device).items():
        record = {"program": name, "members": members, "workload": workload.name}
        try:
            start = time.perf_counter()
            lowered = lower()
            record["lower_seconds"] = round(time.perf_counter() - start, 2)
            start = time.perf_counter()
            executable = lowered.compile()
            record["compile_seconds"] = round(time.perf_counter() - start, 2)
            from jax.experimental import serialize_executable

            blob, _, _ = serialize_executable.serialize(executable)
            record.update(status="ok", executable_bytes=len(blob))
        except Exception as err:  # the record says where it failed
            record.update(status="failed", error=f"{type(err).__name__}: {err}"[:2000],
                          where=traceback.format_exc().splitlines()[-3:])
        records.append(record)
        print(json.dumps(record), flush=True)
    return records


def script(path: Path):
    """A script of ``experiments/`` imported as a module by its file (they are no package)."""
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


def plan_workloads() -> dict:
    """`experiments/gpu_plan.py`'s workloads as a loan runs them (the PPO ones at its GPU
    budget, in the engine's default chunks)."""
    return script(Path(__file__).with_name("gpu_plan.py")).workloads(dry=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", action="append", choices=sorted(TARGETS))
    parser.add_argument("--workload", action="append")
    parser.add_argument("--members", action="append", type=int)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/gpu-aot-cpu"))
    parser.add_argument("--plan", action="store_true",
                        help="the workloads as the GPU plan runs them (gpu_plan.workloads)")
    args = parser.parse_args(argv)
    targets = args.target or ["h100", "h200"]
    names = args.workload or ["ppo-cartpole"]
    counts = args.members or [2048] * len(names)
    from jaxrl.studies.throughput import load_ladder

    ladder = plan_workloads() if args.plan else {
        w.name: w for w in load_ladder("throughput").workloads}
    from importlib.metadata import version

    out = {"jax": jax.__version__, "jaxlib": version("jaxlib"),
           "cuda_plugin": version("jax-cuda12-plugin"),
           "written": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "machine": "2-core CPU, no GPU (other work beside it)", "plan_workloads": args.plan,
           "targets": {}}
    for target in targets:
        try:
            device = target_device(target)
        except Exception as err:
            out["targets"][target] = {"status": "failed", "error": f"{type(err).__name__}: {err}"}
            continue
        out["targets"][target] = {"device": str(device), "programs": [
            r for name, count in zip(names, counts)
            for r in compile_workload(ladder[name], count, device)]}
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.json").write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""One program of each library compiled on this CPU for a GPU it does not have, its optimized
HLO kept: what XLA's GPU compiler makes of jaxrl's and rejax's loops, read without a GPU.

    JAX_PLATFORMS=cpu PYTHONPATH=CUDA_PLUGIN_SITE .venv/bin/python experiments/gpu_hlo.py \
        jaxrl sac-brax-hopper 256 --out DIR
    JAX_PLATFORMS=cpu PYTHONPATH=CUDA_PLUGIN_SITE /tmp/rejax-venv/bin/python \
        experiments/gpu_hlo.py rejax sac-brax-hopper 256 --draw-with-replacement --out DIR

The target is `gpu_aot.TARGETS`'s (default the H200 the loans lend), through the deviceless
topology `experiments/gpu_aot.py` builds (the CUDA plugin of the same version as jax must be
importable). jaxrl's program is its chunk as the GPU plan runs the workload (`gpu_plan.workloads`),
rejax's is its users' `jax.jit(jax.vmap(algo.train))` as `experiments/peers/rejax_point.py` builds
it (``--draw-with-replacement``: jaxrl's uniform draw in place of rejax's). Writes
``DIR/LIB-WORKLOAD-MEMBERS.hlo.txt`` (the compiled module's text) and prints one JSON line: the
seconds to lower and compile and the file. `experiments/hlo_loop_kernels.py` counts the kernels
of one iteration of its gradient-step loop.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import gpu_aot  # noqa: E402  (a script beside this one: the deviceless targets, the loader)


def jaxrl_program(workload: str, members: int, device):
    """jaxrl's chunk program for the GPU plan's ``workload``, lowered onto ``device``."""
    return gpu_aot.lowered_programs(gpu_aot.plan_workloads()[workload], members,
                                    device)["chunk"]()


def rejax_program(workload: str, members: int, device, steps: int, draw: bool):
    """rejax's ``jax.jit(jax.vmap(algo.train))`` for ``workload`` (rejax_workloads.yaml) at
    ``steps`` env steps a member, lowered onto ``device``."""
    import functools

    import jax
    import rejax

    point = gpu_aot.script(HERE / "peers" / "rejax_point.py")
    cfg = point.load_workload(HERE / "peers" / "rejax_workloads.yaml", workload)
    if draw:
        from rejax.buffers import ReplayBuffer

        ReplayBuffer.sample = functools.partial(jax.jit, static_argnames=("num",))(
            point.draw_with_replacement)
    cfg.update(total_timesteps=steps, eval_freq=steps, skip_initial_evaluation=True)
    algo = rejax.get_algo(workload.split("-", 1)[0]).create(**cfg)
    algo = algo.replace(eval_callback=lambda a, ts, rng: ())
    sharding = jax.sharding.SingleDeviceSharding(device)
    keys = jax.ShapeDtypeStruct((members, 2), jax.numpy.uint32, sharding=sharding)
    return jax.jit(jax.vmap(algo.train), in_shardings=sharding, out_shardings=sharding).lower(keys)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lib", choices=["jaxrl", "rejax"])
    parser.add_argument("workload")
    parser.add_argument("members", type=int)
    parser.add_argument("--target", default="h200",
                        help="a name of gpu_aot.TARGETS, or cpu: this machine's own CPU")
    parser.add_argument("--steps", type=int, default=20_480,
                        help="rejax's env steps a member (default: the GPU plan's SAC rung)")
    parser.add_argument("--draw-with-replacement", action="store_true")
    parser.add_argument("--out", type=Path, default=Path("/tmp/gpu-hlo"))
    args = parser.parse_args(argv)
    import jax

    device = (jax.devices("cpu")[0] if args.target == "cpu"
              else gpu_aot.target_device(args.target))
    start = time.perf_counter()
    lowered = (jaxrl_program(args.workload, args.members, device) if args.lib == "jaxrl" else
               rejax_program(args.workload, args.members, device, args.steps,
                             args.draw_with_replacement))
    lowered_at = time.perf_counter()
    compiled = lowered.compile()
    done = time.perf_counter()
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / f"{args.lib}-{args.workload}-{args.members}.hlo.txt"
    path.write_text(compiled.as_text())
    print(json.dumps({"lib": args.lib, "workload": args.workload, "members": args.members,
                      "target": args.target, "draw_with_replacement": args.draw_with_replacement,
                      "lower_seconds": round(lowered_at - start, 2),
                      "compile_seconds": round(done - lowered_at, 2), "hlo": str(path)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

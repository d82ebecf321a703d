"""Batched linear algebra on the CPU in XLA's own ops, not LAPACK custom calls: no deadlock.

On the CPU, jaxlib lowers a batched Cholesky factorization, triangular solve or LU
decomposition to a LAPACK custom call that splits the batch over XLA's intra-op thread pool
*from a thread of that same pool* and waits for it (``ParallelBatchMap`` ->
``BlockingCounter::Wait``). When every pool thread is inside such a call at once, none is left
to do the work and the program never returns. A 2-core machine has two pool threads, so two
CPU devices each running a program (jaxrl shards the members over one device per core), or
one program running two independent calls, is enough. MJX's physics (brax's default
pipeline, every Playground task) factors its mass matrix and solves with it every step: PPO
on ``playground:CheetahRun`` at 4 members and 16 evaluation episodes hung on this 2-core CPU
under both 3451df0 and 691ced1 (2026-11-29; gdb: both ``tf_XLAEigen`` threads in
``lapack_spotrf_ffi`` -> ``jax::ParallelBatchMap`` -> ``BlockingCounter::Wait``, every other
thread idle, the host waiting on the chunk's metrics). `jaxrl.ops.init` avoids the same
deadlock in orthogonal initialization (QR) by Gram-Schmidt.

`use_xla_linear_algebra` gives these primitives JAX's platform-independent lowerings on the
CPU too: ``stablehlo.cholesky`` and ``stablehlo.triangular_solve``, which XLA expands into
loops of its own ops, and JAX's blocked LU written in JAX ops. Nothing waits on the pool. The
results are those of the same algorithms in another order of floating-point operations (not
bitwise LAPACK's); a Cholesky factorization that fails gives NaN in its lower triangle
(LAPACK's lowering makes the whole matrix NaN).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jax._src.interpreters import mlir
from jax._src.lax import linalg

# primitive -> its platform-independent lowering (JAX's own, registered for every platform)
_XLA_LOWERINGS: dict[Any, Callable[..., Any]] = {
    linalg.cholesky_p: linalg._cholesky_lowering,
    linalg.triangular_solve_p: linalg._triangular_solve_lowering,
    linalg.lu_p: mlir.lower_fun(linalg._lu_python, multiple_results=True),
}


def use_xla_linear_algebra() -> None:
    """Lower Cholesky, triangular solves and LU on the CPU as on any platform (module
    docstring). Idempotent; it changes how programs lowered after it are compiled, so it runs
    when the engine's program module is imported, before any program is lowered."""
    for primitive, lowering in _XLA_LOWERINGS.items():
        mlir.register_lowering(primitive, lowering, platform="cpu")

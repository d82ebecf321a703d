"""jaxrl: a JAX-accelerated, vectorized reinforcement-learning engine."""

import os as _os

import jax as _jax

# On the CPU backend, jaxlib 0.10.2 very occasionally never signals that an asynchronously
# dispatched computation finished: the host waits forever in a futex while every XLA thread is
# idle (seen about once in a few hundred chunked training runs on 2 cores). The driver reads each
# chunk's metrics right after dispatching it, so asynchronous dispatch buys nothing here;
# synchronous CPU dispatch is the default (set JAXRL_CPU_ASYNC_DISPATCH=1 to keep JAX's default).
if _os.environ.get("JAXRL_CPU_ASYNC_DISPATCH", "0") != "1":
    _jax.config.update("jax_cpu_enable_async_dispatch", False)

from jaxrl.driver import (
    NonFiniteMetricError,
    TrainResult,
    make_train,
    seed_keys,
    train,
    train_unrecorded,
)

__version__ = "0.1.0"
__all__ = ["NonFiniteMetricError", "TrainResult", "make_train", "seed_keys", "train", "train_unrecorded"]

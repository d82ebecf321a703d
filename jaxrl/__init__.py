"""jaxrl: a JAX-accelerated, vectorized reinforcement-learning engine."""

from jaxrl.platform import configure_cpu_devices

configure_cpu_devices()  # one CPU device per core, before anything creates a JAX backend

from jaxrl.driver import (  # noqa: E402
    NonFiniteMetricError,
    TrainResult,
    make_train,
    resume,
    seed_keys,
    train,
    train_unrecorded,
)

__version__ = "0.1.0"
from jaxrl.sweeps import sweep  # noqa: E402
from jaxrl.benchmarks import bench  # noqa: E402

__all__ = ["NonFiniteMetricError", "TrainResult", "bench", "make_train", "resume", "seed_keys",
           "sweep", "train", "train_unrecorded"]

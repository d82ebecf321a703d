"""jaxrl: a JAX-accelerated, vectorized reinforcement-learning engine."""

from jaxrl.driver import (
    NonFiniteMetricError,
    TrainResult,
    make_train,
    resume,
    seed_keys,
    train,
    train_unrecorded,
)

__version__ = "0.1.0"
from jaxrl.sweeps import sweep

__all__ = ["NonFiniteMetricError", "TrainResult", "make_train", "resume", "seed_keys", "sweep",
           "train", "train_unrecorded"]

"""The optimizer every Adam-trained network here uses: global-norm clipping, then Adam."""

from __future__ import annotations

from typing import Protocol

import jax
import optax

__all__ = ["AdamHparams", "clipped_adam"]


class AdamHparams(Protocol):
    """The traced hyperparameters `clipped_adam` reads (float32 scalars ``[]``)."""

    @property
    def max_grad_norm(self) -> float | jax.Array: ...

    @property
    def adam_eps(self) -> float | jax.Array: ...


def clipped_adam(hp: AdamHparams, learning_rate: float | jax.Array) -> optax.GradientTransformation:
    """Clip the gradient by its global norm (``hp.max_grad_norm``), then Adam with an explicit
    epsilon (``hp.adam_eps``, added outside the square root), then scale by
    ``-learning_rate`` (a float32 scalar ``[]``, possibly annealed and traced).

    ``hp`` is an algorithm's traced hyperparameters (``state.hparams`` or
    ``config.hparams()``)."""
    return optax.chain(optax.clip_by_global_norm(hp.max_grad_norm),
                       optax.scale_by_adam(eps=hp.adam_eps), optax.scale(-learning_rate))

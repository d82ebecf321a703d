"""The optimizer every Adam-trained network here uses: global-norm clipping, then Adam."""

from __future__ import annotations

import jax
import optax

__all__ = ["clipped_adam"]


def clipped_adam(hp, learning_rate: float | jax.Array) -> optax.GradientTransformation:
    """Clip the gradient by its global norm (``hp["max_grad_norm"]``), then Adam with an
    explicit epsilon (``hp["adam_eps"]``, added outside the square root), then scale by
    ``-learning_rate`` (a float32 scalar ``[]``, possibly annealed and traced).

    ``hp`` is an algorithm's traced hyperparameters (``state.hparams`` or
    ``config.hparams()``)."""
    return optax.chain(optax.clip_by_global_norm(hp["max_grad_norm"]),
                       optax.scale_by_adam(eps=hp["adam_eps"]), optax.scale(-learning_rate))

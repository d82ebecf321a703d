"""The optimizers the networks here train with, each after global-norm clipping: Adam (or
RAdam, Liu et al. 2020: PQN's) with an explicit epsilon, and RMSProp with an explicit epsilon
convention and optional momentum."""

from __future__ import annotations

from typing import Protocol

import jax
import optax

__all__ = ["OPTIMIZERS", "RMSPROP_STYLES", "AdamHparams", "RMSPropHparams", "clipped_adam",
           "clipped_optimizer", "clipped_rmsprop", "optimizer_problem"]

OPTIMIZERS = ("adam", "radam", "rmsprop")
RMSPROP_STYLES = ("tensorflow", "pytorch")


class AdamHparams(Protocol):
    """The traced hyperparameters `clipped_adam` reads (float32 scalars ``[]``)."""

    @property
    def max_grad_norm(self) -> float | jax.Array: ...

    @property
    def adam_eps(self) -> float | jax.Array: ...


def clipped_adam(hp: AdamHparams, learning_rate: float | jax.Array,
                 rectified: bool = False) -> optax.GradientTransformation:
    """Clip the gradient by its global norm (``hp.max_grad_norm``), then Adam with an explicit
    epsilon (``hp.adam_eps``, added outside the square root), then scale by
    ``-learning_rate`` (a float32 scalar ``[]``, possibly annealed and traced). ``rectified``:
    RAdam instead (``optax.scale_by_radam``: Adam whose early steps, while the second-moment
    estimate is unreliable, are plain momentum steps).

    ``hp`` is an algorithm's traced hyperparameters (``state.hparams`` or
    ``config.hparams()``)."""
    scale = optax.scale_by_radam(eps=hp.adam_eps) if rectified else optax.scale_by_adam(
        eps=hp.adam_eps)
    return optax.chain(optax.clip_by_global_norm(hp.max_grad_norm), scale,
                       optax.scale(-learning_rate))


class RMSPropHparams(Protocol):
    """The traced hyperparameters `clipped_rmsprop` reads (float32 scalars ``[]``)."""

    @property
    def max_grad_norm(self) -> float | jax.Array: ...

    @property
    def rmsprop_decay(self) -> float | jax.Array: ...

    @property
    def rmsprop_eps(self) -> float | jax.Array: ...


def clipped_rmsprop(hp: RMSPropHparams, learning_rate: float | jax.Array, style: str,
                    momentum: float | jax.Array | None = None) -> optax.GradientTransformation:
    """Clip the gradient by its global norm, then RMSProp, then (with ``momentum``) heavy-ball
    momentum on the normalized step, then scale by ``-learning_rate``.

    ``style`` is the epsilon convention, which changes the step by orders of magnitude where
    gradients are small: ``"tensorflow"`` divides by ``sqrt(E[g^2] + eps)`` with the average
    starting at 1 (TF1's RMSPropOptimizer, which OpenAI baselines tuned A2C with);
    ``"pytorch"`` divides by ``sqrt(E[g^2]) + eps`` with the average starting at 0
    (``torch.optim.RMSprop``, whose momentum buffer accumulates the normalized gradient, as
    here). ``momentum=None`` keeps no momentum buffer."""
    tf = style == "tensorflow"
    parts = [optax.clip_by_global_norm(hp.max_grad_norm),
             optax.scale_by_rms(decay=hp.rmsprop_decay, eps=hp.rmsprop_eps,
                                initial_scale=1.0 if tf else 0.0, eps_in_sqrt=tf)]
    if momentum is not None:
        parts.append(optax.trace(decay=momentum))
    return optax.chain(*parts, optax.scale(-learning_rate))


def clipped_optimizer(name: str, hp, learning_rate: float | jax.Array, rmsprop_style: str,
                      momentum: float | jax.Array | None = None) -> optax.GradientTransformation:
    """The config's choice (``name``, one of `OPTIMIZERS`): `clipped_adam` (``radam``: its
    rectified form) or `clipped_rmsprop` (``rmsprop_style``, ``momentum`` as there; Adam
    ignores both)."""
    if name == "rmsprop":
        return clipped_rmsprop(hp, learning_rate, rmsprop_style, momentum)
    return clipped_adam(hp, learning_rate, rectified=name == "radam")


def optimizer_problem(optimizer: str, rmsprop_style: str) -> str | None:
    """What is wrong with an optimizer choice, for a config's one-line error (None: nothing)."""
    if optimizer not in OPTIMIZERS:
        return f"optimizer must be one of {OPTIMIZERS}, got {optimizer!r}"
    if rmsprop_style not in RMSPROP_STYLES:
        return f"rmsprop_style must be one of {RMSPROP_STYLES}, got {rmsprop_style!r}"
    return None

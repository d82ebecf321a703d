"""Shared RL math: returns and advantages, running statistics, Polyak averaging, distributions,
distributional targets and losses (C51's projection, QR-DQN's quantile Huber loss), conjugate
gradient, ACER's trust-region step, PopArt's target statistics (`jaxrl.ops.popart`),
the minibatch shuffle, linear schedules and the clipped Adam optimizer.

Every function is pure and safe under ``jit`` and ``vmap``; rollout arrays are time-major
``[T, B]``. See each module's docstring for the episode-boundary conventions.
"""

from jaxrl.ops import popart
from jaxrl.ops.cg import conjugate_gradient
from jaxrl.ops.distributional import (
    categorical_projection,
    categorical_support,
    huber,
    quantile_huber_loss,
    quantile_midpoints,
)
from jaxrl.ops.distributions import (
    Categorical,
    DiagGaussian,
    TanhGaussian,
    masked,
    uniform_choice,
)
from jaxrl.ops.optim import clipped_adam, clipped_optimizer, clipped_rmsprop, optimizer_problem
from jaxrl.ops.polyak import polyak_update
from jaxrl.ops.returns import (
    discounted_returns,
    gae,
    lambda_returns,
    n_step_targets,
    retrace,
    reverse_discounted_cumsum,
)
from jaxrl.ops.running_stats import (
    RunningMeanStd,
    denormalize,
    normalize,
    running_stats_init,
    running_stats_update,
)
from jaxrl.ops.schedules import linear_schedule
from jaxrl.ops.shuffle import permutation
from jaxrl.ops.trust_region import categorical_kl_gradient, project_kl

__all__ = [
    "Categorical",
    "DiagGaussian",
    "RunningMeanStd",
    "TanhGaussian",
    "categorical_kl_gradient",
    "categorical_projection",
    "categorical_support",
    "clipped_adam",
    "clipped_optimizer",
    "clipped_rmsprop",
    "conjugate_gradient",
    "denormalize",
    "discounted_returns",
    "gae",
    "huber",
    "lambda_returns",
    "linear_schedule",
    "masked",
    "n_step_targets",
    "normalize",
    "optimizer_problem",
    "permutation",
    "polyak_update",
    "popart",
    "project_kl",
    "quantile_huber_loss",
    "quantile_midpoints",
    "retrace",
    "reverse_discounted_cumsum",
    "running_stats_init",
    "running_stats_update",
    "uniform_choice",
]

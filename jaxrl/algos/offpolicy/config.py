"""The off-policy configs: static fields and traced hyperparameters every off-policy algorithm
has, and the exploration-noise switches of the continuous-action learners."""

from __future__ import annotations

import dataclasses

import numpy as np
from flax import struct

from envs.spaces import Box
from jaxrl.algos.network_static import NetworkStatic
from jaxrl.config import (
    NON_NEGATIVE,
    POSITIVE,
    UNIT,
    ConfigError,
    Hparams,
    defaults,
    static,
    traced,
)
from jaxrl.parts.buffers import her


@dataclasses.dataclass(frozen=True)
@defaults(hidden=(256, 256), activation="relu")
class OffPolicyStatic(NetworkStatic):
    """Static fields every off-policy algorithm has (and `NetworkStatic`'s: 256 x 256 ReLU
    networks)."""

    num_envs: int = static(1, "parallel envs per seed")
    buffer_size: int = static(100_000, "replay capacity per seed (transitions)")
    batch_size: int = static(256)
    learning_starts: int = static(1_000, "env steps of uniform random actions before learning",
                                  valid=NON_NEGATIVE)
    gradient_steps: int = static(1, "updates per env-step round (UTD ratio = this / num_envs)")
    log_interval: int = static(50, "env-step rounds per train step (metrics averaged)")
    n_step: int = static(1, "n of the n-step return")
    prioritized: bool = static(False, "proportional prioritized replay")
    frame_replay: bool = static(False, "replay stacked [H, W, S] image observations in [0, 1] "
                                "(Atari's) as uint8 frames kept once: 1/16 of the memory")
    bootstrap_truncation: bool = static(True, "False treats time limits as termination (wrong)")
    her: str = static("none", "hindsight relabelling of replayed goals (goal envs): none | "
                      "future | final")
    her_k: int = static(4, "HER relabels per real transition: a 1 - 1/(1 + k) share of "
                        "sampled transitions gets a hindsight goal")
    action_noise = "white"  # a fresh draw each step; a field of `ActorCriticStatic`
    normalize_obs = False  # raw observations; a field of `q_learner.config.QLearnerStatic`

    @property
    def steps_per_update(self) -> int:
        """Env steps per seed in one train step (what the driver counts as an 'update')."""
        return self.num_envs * self.log_interval

    def validate(self) -> None:
        if self.num_envs > self.buffer_size:
            raise ConfigError(f"buffer_size ({self.buffer_size}) must be >= num_envs")
        super().validate()
        if self.her not in her.STRATEGIES:
            raise ConfigError(f"her must be one of {her.STRATEGIES}, got {self.her!r}")
        if self.her != "none" and (self.n_step != 1 or self.prioritized or self.frame_replay
                                   or not self.bootstrap_truncation):
            raise ConfigError("her relabels one-step transitions of uniform replay: it needs "
                              "n_step=1, prioritized=False, frame_replay=False and "
                              "bootstrap_truncation=True")


@struct.dataclass(frozen=True)
class OffPolicyHparams(Hparams):
    """Traced hyperparameters every off-policy algorithm has."""

    gamma: float = traced(0.99, valid=UNIT)
    max_grad_norm: float = traced(10.0, "global-norm gradient clipping", valid=POSITIVE)
    adam_eps: float = traced(1e-8, valid=POSITIVE)
    per_alpha: float = traced(0.6, "priority exponent", valid=UNIT)
    per_beta: float = traced(0.4, "importance-weight exponent at the start (annealed to 1)",
                             valid=UNIT)
    total_steps: float = traced(0.0, "env steps per seed (set by train; anneal horizon)",
                                valid=NON_NEGATIVE)


#: ``action_noise`` values of the continuous-action learners (DDPG, TD3, SAC)
ACTION_NOISES = ("white", "ou")


def correlated_noise(static) -> bool:
    """Whether exploration draws its noise from the state's OU processes (``action_noise="ou"``,
    `jaxrl.ops.noise`) rather than independently each step."""
    return static.action_noise == "ou"


def check_action_noise(value: str) -> None:
    if value not in ACTION_NOISES:
        raise ConfigError(f"action_noise must be one of {ACTION_NOISES}, got {value!r}")


def warmup_rounds(static: OffPolicyStatic) -> int:
    """Env-step rounds of random actions: enough for the n-step window and one batch."""
    return max(-(-static.learning_starts // static.num_envs), static.n_step)


def action_dim(space) -> int:
    if not isinstance(space, Box):
        raise ConfigError(f"this algorithm needs a continuous (Box) action space, got {space!r}")
    return int(np.prod(space.shape))

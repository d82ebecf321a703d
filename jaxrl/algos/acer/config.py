"""ACER's config (`ACERStatic`, `ACERHparams`, `ACERConfig`) and its defaults per env family."""

from __future__ import annotations

import dataclasses

from flax import struct

from jaxrl.algos.families import family_defaults
from jaxrl.algos.network_static import NetworkStatic
from jaxrl.config import (
    NON_NEGATIVE,
    POSITIVE,
    UNIT,
    UNIT_NO_ONE,
    AlgoConfig,
    ConfigError,
    Hparams,
    defaults,
    static,
    traced,
)
from jaxrl.ops import optimizer_problem

REPLAY_SCHEDULES = ("fixed", "poisson")


@dataclasses.dataclass(frozen=True)
@defaults(activation="relu")
class ACERStatic(NetworkStatic):
    """ACER's static fields (shapes, loop counts, flags)."""

    num_envs: int = static(16, "parallel envs per seed (on-policy segments per update)")
    num_steps: int = static(20, "segment length T")
    buffer_segments: int = static(2_500, "replay capacity per seed, in segments of T steps")
    replay_ratio: int = static(4, "replayed updates per on-policy update (their mean, poisson)")
    replay_schedule: str = static("fixed", "replayed updates per on-policy update: fixed "
                                  "(replay_ratio) | poisson (drawn with mean replay_ratio each "
                                  "time, as vel and baselines)")
    replay_batch: int = static(16, "segments per replayed update")
    replay_start: int = static(100, "segments stored before replay starts (>= 1)")
    trust_region: bool = static(True, "ACER's efficient trust region against the average net")
    uint8_replay: bool = static(False, "replay observations in [0, 1] that are k / 255 (Atari "
                                "frames) as uint8: a quarter of the memory, exact")
    frame_replay: bool = static(False, "replay stacked [H, W, S] image observations (Atari's) "
                                "as uint8 frames kept once per segment: S (1 + segment_restarts)"
                                " + T frames per segment, exact")
    segment_restarts: int = static(1, "frame_replay: episode starts after a segment's first step"
                                   " it has room for; a segment with more is counted in "
                                   "frame_mismatches", valid=NON_NEGATIVE)
    shared_network: bool = static(True, "one torso for the policy and Q heads")
    optimizer: str = static("adam", "adam | radam | rmsprop")
    rmsprop_style: str = static("pytorch", "RMSProp's epsilon convention: tensorflow | pytorch")

    @property
    def steps_per_update(self) -> int:
        return self.num_envs * self.num_steps

    def validate(self) -> None:
        super().validate()
        problem = optimizer_problem(self.optimizer, self.rmsprop_style)
        if problem:
            raise ConfigError(problem)
        if self.replay_schedule not in REPLAY_SCHEDULES:
            raise ConfigError(f"replay_schedule must be one of {REPLAY_SCHEDULES}, got "
                              f"{self.replay_schedule!r}")
        if self.uint8_replay and self.frame_replay:
            raise ConfigError("uint8_replay and frame_replay are two ways to store observations:"
                              " choose one (frame_replay for stacked image observations)")
        if self.buffer_segments < max(self.num_envs, self.replay_start):
            raise ConfigError(f"buffer_segments ({self.buffer_segments}) must be >= num_envs "
                              f"and >= replay_start")


@struct.dataclass(frozen=True)
class ACERHparams(Hparams):
    """ACER's traced hyperparameters (``state.hparams``)."""

    gamma: float = traced(0.99, valid=UNIT)
    learning_rate: float = traced(7e-4, valid=POSITIVE)
    max_grad_norm: float = traced(10.0, "global-norm gradient clipping", valid=POSITIVE)
    adam_eps: float = traced(1e-5, valid=POSITIVE)
    rmsprop_decay: float = traced(0.99, "RMSProp: decay of the squared-gradient average",
                                  valid=UNIT_NO_ONE)
    rmsprop_eps: float = traced(1e-3, "RMSProp: epsilon (see rmsprop_style)", valid=POSITIVE)
    ent_coef: float = traced(0.01, valid=NON_NEGATIVE)
    q_coef: float = traced(0.5, "weight of the Q regression", valid=NON_NEGATIVE)
    c_bar: float = traced(10.0, "importance-weight truncation of the policy gradient",
                          valid=POSITIVE)
    delta: float = traced(1.0, "trust-region radius on the linearized KL from the average",
                          valid=POSITIVE)
    avg_decay: float = traced(0.99, "Polyak decay of the average policy network", valid=UNIT_NO_ONE)
    total_steps: float = traced(0.0, "env steps per seed (set by train)", valid=NON_NEGATIVE)


@dataclasses.dataclass(frozen=True)
class ACERConfig(AlgoConfig, ACERHparams, ACERStatic):
    """ACER's config: the fields of `ACERStatic` and `ACERHparams` as one."""


def default_config(env_name: str) -> ACERConfig:
    """ACER's defaults for ``env_name``'s family (`jaxrl.algos.families`)."""
    return ACERConfig(**family_defaults("acer", env_name))

"""PQN's config (`PQNStatic`, `PQNHparams`, `PQNConfig`) and its defaults per env family."""

from __future__ import annotations

import dataclasses

from flax import struct

from jaxrl.algos import onpolicy
from jaxrl.algos.families import family_defaults
from jaxrl.config import (
    NON_NEGATIVE,
    POSITIVE,
    UNIT,
    AlgoConfig,
    ConfigError,
    Hparams,
    defaults,
    static,
    traced,
)
from jaxrl.parts.user_networks import check_network

OPTIMIZERS = ("radam", "adam")


@dataclasses.dataclass(frozen=True)
@defaults(num_envs=128, num_steps=32, hidden=(128, 128), activation="relu")
class PQNStatic(onpolicy.RolloutStatic):
    """PQN's static fields (shapes, loop counts, flags), beside those of
    `onpolicy.RolloutStatic` at PQN's defaults (128 envs of 32 steps, 128 x 128 ReLU)."""

    update_epochs: int = static(2, "passes over each rollout")
    num_minibatches: int = static(32, "minibatches per pass")
    layer_norm: bool = static(True, "LayerNorm before every activation of the Q-network")
    normalize_obs: bool = static(False, "running mean/var observation normalization (the "
                                 "statistics of every rollout collected; replayed rollouts "
                                 "are kept raw)")
    optimizer: str = static("radam", "radam | adam")
    replay_rollouts: int = static(0, "past rollouts kept and refit with each new one, targets"
                                  " recomputed (0: none, the paper's default)", valid=NON_NEGATIVE)
    network: str = static("default", "your own whole Q-network, a Flax module from a factory "
                          "(package.module:factory, or a name given to register_network) called "
                          "with the number of actions: obs -> Q [..., n]; default: jaxrl's, from "
                          "hidden / torso (jaxrl.parts.user_networks)")

    @property
    def minibatches_per_pass(self) -> int:
        """Minibatches per pass over the new rollout and the replayed ones (their size stays
        ``steps_per_update / num_minibatches``)."""
        return (self.replay_rollouts + 1) * self.num_minibatches

    def validate(self) -> None:
        super().validate()
        check_network(self.network)
        if self.optimizer not in OPTIMIZERS:
            raise ConfigError(f"optimizer must be one of {OPTIMIZERS}, got {self.optimizer!r}")
        if self.steps_per_update % self.num_minibatches:
            raise ConfigError(f"num_envs * num_steps ({self.steps_per_update}) must be divisible "
                              f"by num_minibatches ({self.num_minibatches})")


@struct.dataclass(frozen=True)
class PQNHparams(Hparams):
    """PQN's traced hyperparameters (``state.hparams``)."""

    learning_rate: float = traced(2.5e-4, valid=POSITIVE)
    gamma: float = traced(0.99, valid=UNIT)
    q_lambda: float = traced(0.65, "lambda of the Q(lambda) targets (0: one-step Q-learning)",
                             valid=UNIT)
    max_grad_norm: float = traced(10.0, "global-norm gradient clipping", valid=POSITIVE)
    adam_eps: float = traced(1e-8, "(R)Adam epsilon", valid=POSITIVE)
    eps_start: float = traced(1.0, "epsilon-greedy at the start", valid=UNIT)
    eps_end: float = traced(0.05, "epsilon-greedy after the decay", valid=UNIT)
    eps_decay_fraction: float = traced(0.1, "fraction of total_steps over which eps decays",
                                       valid=UNIT)
    reward_scale: float = traced(1.0, "rewards are multiplied by this before learning",
                                 valid=POSITIVE)
    total_steps: float = traced(0.0, "env steps per seed (set by train; anneal horizon)",
                                valid=NON_NEGATIVE)


@dataclasses.dataclass(frozen=True)
class PQNConfig(AlgoConfig, PQNHparams, PQNStatic):
    """PQN's config: the fields of `PQNStatic` and `PQNHparams` as one."""


def default_config(env_name: str) -> PQNConfig:
    """PQN's defaults for ``env_name``'s family (`jaxrl.algos.families`)."""
    return PQNConfig(**family_defaults("pqn", env_name))

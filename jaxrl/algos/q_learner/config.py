"""The replay Q-learners' config fields (DQN, C51, QR-DQN, IQN): the static ones
(`QLearnerStatic`, and the distributional learners' head, `DistributionalStatic`) and the
traced ones (`QLearnerHparams`, and the quantile learners' `QuantileHparams`)."""

from __future__ import annotations

import dataclasses

from flax import struct

from jaxrl.algos import offpolicy
from jaxrl.config import (
    POSITIVE,
    UNIT,
    UNIT_NO_ONE,
    UNIT_NO_ZERO,
    ConfigError,
    defaults,
    static,
    traced,
)
from jaxrl.ops import optimizer_problem


@dataclasses.dataclass(frozen=True)
@defaults(hidden=(64, 64))
class QLearnerStatic(offpolicy.OffPolicyStatic):
    """The static fields of the replay Q-learners (DQN, C51, QR-DQN, IQN): 64 x 64 ReLU
    networks."""

    double_q: bool = static(True, "select the next action with the online net")
    dueling: bool = static(False, "dueling value/advantage head")
    target_update_period: int = static(500, "gradient updates between target updates")
    anneal_lr: bool = static(False, "linearly anneal the learning rate to 0 over total_steps")
    optimizer: str = static("adam", "adam | radam | rmsprop (with optional momentum: reading "
                            "002's DQN)")
    rmsprop_style: str = static("pytorch", "RMSProp's epsilon convention: tensorflow | pytorch")
    normalize_obs: bool = static(False, "running mean/var observation normalization (the "
                                 "buffer keeps raw observations, normalized when sampled)")

    def validate(self) -> None:
        super().validate()
        problem = optimizer_problem(self.optimizer, self.rmsprop_style)
        if problem:
            raise ConfigError(problem)


@dataclasses.dataclass(frozen=True)
@defaults(double_q=False)
class DistributionalStatic(QLearnerStatic):
    """The static head of the distributional Q-learners (C51, QR-DQN, IQN): ``K`` outputs per
    action (`distribution_size`, from the subclass's own fields), and the target net selecting
    the next action, as in the three papers (``double_q`` off)."""

    @property
    def distribution_size(self) -> int:
        """Outputs per action (the memory model's ``K``)."""
        raise NotImplementedError


@struct.dataclass(frozen=True)
class QLearnerHparams(offpolicy.OffPolicyHparams):
    """The traced hyperparameters of the replay Q-learners (``state.hparams``): DQN's, and
    those C51 and QR-DQN build on."""

    learning_rate: float = traced(2.5e-4, valid=POSITIVE)
    rmsprop_decay: float = traced(0.95, "RMSProp: decay of the squared-gradient average",
                                  valid=UNIT_NO_ONE)
    rmsprop_eps: float = traced(0.01, "RMSProp: epsilon (see rmsprop_style)", valid=POSITIVE)
    rmsprop_momentum: float = traced(0.0, "RMSProp: momentum on the normalized step",
                                     valid=UNIT_NO_ONE)
    tau: float = traced(1.0, "target update weight (1 = copy)", valid=UNIT_NO_ZERO)
    eps_start: float = traced(1.0, "epsilon-greedy at the start", valid=UNIT)
    eps_end: float = traced(0.05, "epsilon-greedy after the decay", valid=UNIT)
    eps_decay_fraction: float = traced(0.5, "fraction of total_steps over which eps decays",
                                       valid=UNIT)


@struct.dataclass(frozen=True)
class QuantileHparams(QLearnerHparams):
    """The traced hyperparameters of the quantile learners (QR-DQN, IQN): DQN's and the
    quantile Huber loss's threshold."""

    kappa: float = traced(1.0, "the quantile Huber loss's threshold", valid=POSITIVE)

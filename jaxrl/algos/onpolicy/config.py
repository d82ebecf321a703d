"""The on-policy configs: static fields and traced hyperparameters every on-policy algorithm has
(`OnPolicyStatic`, `OnPolicyHparams`), and those of the methods that fit their value apart
(`SeparateValueStatic`, `SeparateValueHparams`)."""

from __future__ import annotations

import dataclasses

from flax import struct

from jaxrl.algos.acting import PolicyStatic
from jaxrl.algos.network_static import NetworkStatic
from jaxrl.config import (
    NON_NEGATIVE,
    POSITIVE,
    UNIT,
    UNIT_NO_ZERO,
    ConfigError,
    Hparams,
    static,
    traced,
)
from jaxrl.parts.recurrent import RNNS
from jaxrl.parts.user_networks import check_network, is_own


@dataclasses.dataclass(frozen=True)
class RolloutStatic(NetworkStatic):
    """The base of the configs that learn from rollouts of ``num_envs`` envs x ``num_steps``
    steps (`OnPolicyStatic`, PQN's): the fields the rollout, the batch's loss flags, the
    annealing and the memory model read, declared once (PQN sets its own defaults: 128 envs
    of 32 steps); ``num_minibatches`` is 1 for one that does not declare it (full-batch
    steps)."""

    num_envs: int = static(4, "parallel envs per seed")
    num_steps: int = static(128, "rollout length T per env per update")
    anneal_lr: bool = static(True, "linearly anneal the learning rate(s) to 0 over total_steps")
    bootstrap_truncation: bool = static(True, "False treats time limits as termination (wrong)")
    num_minibatches = 1

    @property
    def steps_per_update(self) -> int:
        return self.num_envs * self.num_steps


@dataclasses.dataclass(frozen=True)
class OnPolicyStatic(RolloutStatic, PolicyStatic):
    """Static fields every on-policy algorithm has (and those of `RolloutStatic` and
    `acting.PolicyStatic`)."""

    normalize_reward: bool = static(False, "scale rewards by the running std of returns")
    popart: bool = static(False, "PopArt: the value head learns targets normalized by running "
                          "statistics, its last layer rescaled to preserve outputs")
    shared_network: bool = static(False, "one torso for policy and value (else two MLPs)")
    head_hidden: tuple[int, ...] = static((), "hidden widths of the policy head and of the "
                                          "value head, each its own, after the shared "
                                          "torso or the recurrent core (else linear heads)")
    asymmetric_critic: bool = static(False, "the value net also sees the env's privileged "
                                     "observation, the policy only its own part (an env that "
                                     "declares one: playground:TASK with env_kwargs critic_key)")
    rnn: str = static("none", "none | gru | lstm: a recurrent core between the torso and the "
                      "heads (PPO, A2C); minibatches are then made of whole envs")
    rnn_size: int = static(128, "units of the recurrent core")
    network: str = static("default", "your own whole actor-critic, a Flax module from a factory "
                          "(package.module:factory, or a name given to register_network) called "
                          "with the action space: obs -> (logits or mean, value); default: "
                          "jaxrl's, from hidden / torso / shared_network (jaxrl.parts.user_networks)")
    normalize_advantages: bool = static(True, "standardize advantages (per minibatch)")

    def validate(self) -> None:
        super().validate()
        if self.rnn not in RNNS:
            raise ConfigError(f"rnn must be one of {RNNS}, got {self.rnn!r}")
        if self.head_hidden and not (self.shared_network or self.recurrent):
            raise ConfigError(f"head_hidden={self.head_hidden} sits after a shared torso or a "
                              "recurrent core: set shared_network=True or rnn, or widen hidden "
                              "(two separate MLPs)")
        if self.asymmetric_critic and (self.shared_network or self.recurrent):
            raise ConfigError("asymmetric_critic needs separate feed-forward policy and value "
                              "nets (shared_network=False, rnn=none)")
        check_network(self.network)
        if is_own(self.network) and (self.recurrent or self.popart or self.asymmetric_critic):
            raise ConfigError(f"network={self.network!r}: a recurrent policy, PopArt and an "
                              "asymmetric critic need jaxrl's own network (network=default; "
                              "torso= puts your module under its heads)")


@struct.dataclass(frozen=True)
class OnPolicyHparams(Hparams):
    """Traced hyperparameters every on-policy algorithm has."""

    gamma: float = traced(0.99, valid=UNIT)
    gae_lambda: float = traced(0.95, valid=UNIT)
    max_grad_norm: float = traced(0.5, "global-norm gradient clipping", valid=POSITIVE)
    adam_eps: float = traced(1e-5, "Adam epsilon (added outside the square root)", valid=POSITIVE)
    total_steps: float = traced(0.0, "env steps per seed; the LR anneal horizon (set by train)",
                                valid=NON_NEGATIVE)
    popart_beta: float = traced(0.03, "PopArt: step of the target statistics per update",
                                valid=UNIT_NO_ZERO)


@dataclasses.dataclass(frozen=True)
class SeparateValueStatic(OnPolicyStatic):
    """On-policy methods whose value MLP is regressed apart from the policy (VPG, TRPO)."""

    value_epochs: int = static(5, "passes of value regression per update")
    value_minibatches: int = static(4, "minibatches per value-regression pass")

    def validate(self) -> None:
        super().validate()
        if self.shared_network:
            raise ConfigError("shared_network=True needs a joint loss; this algorithm fits the "
                              "policy and the value function separately")
        if is_own(self.network):
            raise ConfigError(f"network={self.network!r} is one parameter tree; this algorithm "
                              "fits the policy and the value function apart: use torso= for "
                              "your module under jaxrl's two heads")
        if self.recurrent:
            raise ConfigError(f"rnn={self.rnn!r}: recurrent policies are trained by PPO and A2C; "
                              "this algorithm fits the policy and the value on flattened samples")
        if self.steps_per_update % self.value_minibatches:
            raise ConfigError(f"num_envs * num_steps ({self.steps_per_update}) must be divisible "
                              f"by value_minibatches ({self.value_minibatches})")


@struct.dataclass(frozen=True)
class SeparateValueHparams(OnPolicyHparams):
    """Traced hyperparameters of VPG and TRPO (the value regression's own learning rate)."""

    vf_learning_rate: float = traced(1e-3, "Adam learning rate of the value regression",
                                     valid=POSITIVE)

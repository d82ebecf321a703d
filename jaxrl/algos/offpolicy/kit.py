"""An off-policy algorithm's `Algorithm` from its learner, exploration rule and policy."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jaxrl.algos.algorithm import Algorithm
from jaxrl.algos.offpolicy.footprint import memory_model as replay_memory_model
from jaxrl.algos.offpolicy.state import make_init
from jaxrl.algos.offpolicy.train_step import make_train_step


def algorithm(name: str, config_cls: type, default_config: Callable[[str], Any],
              init_learner: Callable, explore: Callable, learn: Callable,
              make_policy: Callable, kinds: tuple[str, ...] = ("continuous",),
              memory_model: Callable = replay_memory_model, kit: str = "offpolicy",
              action_masks: bool = False) -> Algorithm:
    """An off-policy algorithm on the shared train step (`make_train_step`) from its parts
    (the contract in `jaxrl.algos.offpolicy`): ``init_learner``, ``explore``, ``learn`` and
    its ``make_policy(static, env, env_params) -> acting.Policy`` (`exploring_policy`)."""
    return Algorithm(name, config_cls, default_config, make_init(init_learner),
                     make_train_step(explore, learn), make_policy, memory_model, kinds,
                     kit=kit, action_masks=action_masks)

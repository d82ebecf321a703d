"""An off-policy algorithm's `Algorithm` from its learner, exploration rule and acting."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jaxrl.algos.algorithm import Algorithm
from jaxrl.algos.offpolicy.footprint import memory_model as replay_memory_model
from jaxrl.algos.offpolicy.policy import make_act_from
from jaxrl.algos.offpolicy.state import make_init
from jaxrl.algos.offpolicy.train_step import make_train_step


def algorithm(name: str, config_cls: type, default_config: Callable[[str], Any],
              init_learner: Callable, explore: Callable, learn: Callable,
              make_agent_action: Callable, make_value: Callable,
              kinds: tuple[str, ...] = ("continuous",),
              memory_model: Callable = replay_memory_model) -> Algorithm:
    """An off-policy algorithm on the shared train step (`make_train_step`) from its parts
    (the contract in `jaxrl.algos.offpolicy`): ``init_learner``, ``explore``, ``learn``, its
    deterministic action ``make_agent_action`` and its value ``make_value``. Acting outside
    training is the deterministic action, or ``explore``'s with ``deterministic=False``."""
    return Algorithm(name, config_cls, default_config, make_init(init_learner),
                     make_train_step(explore, learn), make_act_from(make_agent_action, explore),
                     make_value, make_agent_action, memory_model, kinds)

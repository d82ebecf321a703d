"""An on-policy algorithm's `Algorithm` from its update rule and optimizers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from jaxrl.algos.algorithm import Algorithm
from jaxrl.algos.onpolicy.footprint import memory_model
from jaxrl.algos.onpolicy.policy import make_policy
from jaxrl.algos.onpolicy.state import make_init
from jaxrl.algos.onpolicy.train_step import make_train_step


def algorithm(name: str, config_cls: type, default_config: Callable[[str], Any],
              update: Callable, optimizers: Callable, relabel: Callable | None = None,
              init: Callable | None = None, imitation: bool = False) -> Algorithm:
    """An on-policy algorithm on the shared machinery: rollouts, truncation-aware GAE,
    observation / reward statistics, evaluation, acting and the memory model are the family's;
    ``update(state, batch, key, static, network) -> Updated`` is the algorithm, and
    ``optimizers(hparams, static, lr_scale) -> ParamGroups`` its optimizers (as in `ppo` and
    `vpg`). ``relabel`` (`make_train_step`) and ``init`` (default `make_init(optimizers)`) are
    for an algorithm that learns its reward (GAIL); ``imitation``: it learns from an expert's
    demonstrations (config field ``demos``)."""
    return Algorithm(name, config_cls, default_config,
                     make_init(optimizers) if init is None else init,
                     make_train_step(update, relabel), make_policy, memory_model,
                     imitation=imitation, kit="onpolicy", action_masks=True)

"""`Algorithm`: what the driver, the CLI and the probe runner know of an algorithm. Each
algorithm module ends with the one line that makes its own from its family's kit
(`onpolicy.algorithm`, `offpolicy.algorithm`, `q_learner.algorithm`); the registry
(`jaxrl.algos`) lists them."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from jaxrl.algos import acting

#: the ways an `Algorithm` is built: each family's kit (`onpolicy.algorithm`,
#: `offpolicy.algorithm`, `q_learner.algorithm`) and `standalone`, for one that brings its own
#: train step (PQN, ACER, BC)
KITS = ("onpolicy", "offpolicy", "q_learner", "standalone")


@dataclasses.dataclass(frozen=True)
class Algorithm:
    """What the driver, CLI and probe runner need to know about an algorithm.

    init(key, env, env_params, config, hparams=None) -> state
    train_step(state, static, env, env_params) -> (state, metrics)
    make_policy(static, env, env_params) -> acting.Policy: how the algorithm acts (its mode,
        its exploring action, its value estimate, its memory; `jaxrl.algos.acting`)
    memory_model(config, state, obs_bytes, action_bytes) -> jaxrl.parts.memory.Footprint: the
        family's memory model (`onpolicy.memory_model`, `offpolicy.memory_model`), read by the
        memory plan before anything compiles

    ``config`` is a whole config (``config_cls``); ``static`` its static view
    (``config.static()``, without the traced fields: those are read from ``state.hparams``,
    a typed pytree, ``config_cls.hparams_type()``). A whole config also works as ``static``.
    ``init`` with a static view needs ``hparams`` (``config.hparams()``).
    """

    name: str
    config_cls: type
    default_config: Callable[[str], Any]
    init: Callable
    train_step: Callable
    make_policy: Callable[..., acting.Policy]
    memory_model: Callable
    action_kinds: tuple[str, ...] = ("discrete", "continuous")
    imitation: bool = False  # learns from demonstrations (config field ``demos``)
    kit: str = "standalone"  # the kit that built it (`KITS`)
    # acts, explores and bootstraps among the actions an env's mask allows
    # (`envs.spaces.Discrete.mask_size`); one that does not is refused on such an env
    action_masks: bool = False

    def policy(self, static, env, env_params) -> acting.Policy:
        """The algorithm's `acting.Policy` for ``env``."""
        return self.make_policy(static, env, env_params)


def standalone(name: str, config_cls: type, default_config: Callable[[str], Any], init: Callable,
               train_step: Callable, make_policy: Callable[..., acting.Policy],
               memory_model: Callable, action_kinds: tuple[str, ...] = ("discrete", "continuous"),
               imitation: bool = False, action_masks: bool = False) -> Algorithm:
    """The `Algorithm` of one that brings its own ``init`` and ``train_step`` (PQN's Q-learning
    over rollouts, ACER's replayed segments, BC's supervised steps) and acts by
    ``make_policy``."""
    return Algorithm(name, config_cls, default_config, init, train_step, make_policy,
                     memory_model, action_kinds, imitation, kit="standalone",
                     action_masks=action_masks)

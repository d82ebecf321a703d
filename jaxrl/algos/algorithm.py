"""`Algorithm`: what the driver, the CLI and the probe runner know of an algorithm. Each
algorithm module ends with the one line that makes its own from its family's kit
(`onpolicy.algorithm`, `offpolicy.algorithm`, `q_learner.algorithm`); the registry
(`jaxrl.algos`) lists them."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from jaxrl.algos import acting


@dataclasses.dataclass(frozen=True)
class Algorithm:
    """What the driver, CLI and probe runner need to know about an algorithm.

    init(key, env, env_params, config, hparams=None) -> state
    train_step(state, static, env, env_params) -> (state, metrics)
    make_act(static, env, env_params) -> act(state, obs, key, deterministic) -> env action
    make_value(static, env, env_params) -> value(state, obs) -> [K]
    make_agent_action(static, env, env_params) -> mode(state, obs) -> agent action
    imitation: learns from an expert's demonstrations, named by its config's ``demos``
    make_policy(static, env, env_params) -> acting.Policy, for a policy that carries memory
        between steps (recurrent); None: ``make_act``'s, memoryless (see `policy`)
    memory_model(config, state, obs_bytes, action_bytes) -> jaxrl.memory.Footprint: the
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
    make_act: Callable
    make_value: Callable
    make_agent_action: Callable
    memory_model: Callable
    action_kinds: tuple[str, ...] = ("discrete", "continuous")
    make_policy: Callable | None = None
    imitation: bool = False  # learns from demonstrations (config field ``demos``)

    def policy(self, static, env, env_params) -> acting.Policy:
        """The policy as evaluation runs it: ``make_policy``'s, or ``make_act`` without memory."""
        if self.make_policy is not None:
            return self.make_policy(static, env, env_params)
        return acting.feed_forward(self.make_act(static, env, env_params))

"""Algorithm registry: each algorithm is a module of pure functions plus a config class."""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Callable
from typing import Any

from jaxrl.algos import (
    a2c,
    acer,
    acting,
    bc,
    c51,
    ddpg,
    dqn,
    gail,
    offpolicy,
    onpolicy,
    ppo,
    pqn,
    qrdqn,
    sac,
    td3,
    trpo,
    vpg,
)


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


def _on_policy(name: str, module, config_cls) -> Algorithm:
    return Algorithm(name, config_cls, module.default_config, module.init, module.train_step,
                     onpolicy.make_act, onpolicy.make_value, onpolicy.make_agent_action,
                     onpolicy.memory_model, make_policy=onpolicy.make_policy)


def _off_policy(name: str, module, config_cls, kinds: tuple[str, ...],
                memory_model: Callable = offpolicy.memory_model) -> Algorithm:
    return Algorithm(name, config_cls, module.default_config, module.init, module.train_step,
                     module.make_act, module.make_value, module.make_agent_action,
                     memory_model, kinds)


ALGORITHMS: dict[str, Algorithm] = {
    "ppo": _on_policy("ppo", ppo, ppo.PPOConfig),
    "vpg": _on_policy("vpg", vpg, vpg.VPGConfig),
    "a2c": _on_policy("a2c", a2c, a2c.A2CConfig),
    "trpo": _on_policy("trpo", trpo, trpo.TRPOConfig),
    "dqn": _off_policy("dqn", dqn, dqn.DQNConfig, ("discrete",)),
    "c51": _off_policy("c51", c51, c51.C51Config, ("discrete",), dqn.distributional_memory_model),
    "qrdqn": _off_policy("qrdqn", qrdqn, qrdqn.QRDQNConfig, ("discrete",),
                         dqn.distributional_memory_model),
    # its kept rollouts (if any) and the on-policy working set per rollout
    "pqn": Algorithm("pqn", pqn.PQNConfig, pqn.default_config, pqn.init, pqn.train_step,
                     pqn.make_act, pqn.make_value, pqn.make_agent_action, pqn.memory_model,
                     ("discrete",)),
    "ddpg": _off_policy("ddpg", ddpg, ddpg.DDPGConfig, ("continuous",)),
    "td3": _off_policy("td3", td3, td3.TD3Config, ("continuous",)),
    "sac": _off_policy("sac", sac, sac.SACConfig, ("continuous",)),
    "acer": Algorithm("acer", acer.ACERConfig, acer.default_config, acer.init, acer.train_step,
                      acer.make_act, acer.make_value, acer.make_agent_action,
                      acer.memory_model, ("discrete",)),
    "gail": dataclasses.replace(_on_policy("gail", gail, gail.GAILConfig), imitation=True),
    "bc": Algorithm("bc", bc.BCConfig, bc.default_config, bc.init, bc.train_step,
                    onpolicy.make_act, onpolicy.make_value, onpolicy.make_agent_action,
                    bc.memory_model, make_policy=onpolicy.make_policy, imitation=True),
}


BUILT_IN: frozenset[str] = frozenset(ALGORITHMS)


class UnknownAlgorithmError(ValueError):
    pass


def on_policy_algorithm(name: str, config_cls: type, default_config: Callable[[str], Any],
                        update: Callable, optimizers: Callable) -> Algorithm:
    """An on-policy algorithm from its parts, on the shared machinery (`onpolicy`): rollouts,
    truncation-aware GAE, observation/reward statistics, evaluation, acting and the memory
    model are onpolicy's; ``update(state, batch, key, static, network) -> onpolicy.Updated``
    is the algorithm, and ``optimizers(hparams, static, lr_scale) -> onpolicy.ParamGroups``
    its optimizers (as in `ppo` and `vpg`)."""
    return Algorithm(name, config_cls, default_config, onpolicy.make_init(optimizers),
                     onpolicy.make_train_step(update), onpolicy.make_act, onpolicy.make_value,
                     onpolicy.make_agent_action, onpolicy.memory_model,
                     make_policy=onpolicy.make_policy)


def register(algorithm: Algorithm) -> Algorithm:
    """Make ``algorithm`` known by its name in this process: ``train``, ``sweep``, ``bench``
    and the probe ladder find it like a built-in one. Re-registering a user algorithm replaces
    it; built-in names are refused."""
    if not isinstance(algorithm, Algorithm):
        raise TypeError(f"register takes an Algorithm, got {type(algorithm).__name__}")
    key = algorithm.name.lower()
    if key in BUILT_IN:
        raise ValueError(f"{algorithm.name!r} is a built-in algorithm; pick another name")
    ALGORITHMS[key] = algorithm
    return algorithm


def get(name: str) -> Algorithm:
    key = name.lower()
    if key not in ALGORITHMS:
        close = difflib.get_close_matches(key, list(ALGORITHMS), n=3, cutoff=0.3)
        hint = f" Did you mean {', '.join(close)}?" if close else ""
        raise UnknownAlgorithmError(
            f"Unknown algorithm {name!r}. Available: {', '.join(sorted(ALGORITHMS))}.{hint}"
        )
    return ALGORITHMS[key]

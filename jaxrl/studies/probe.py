"""Run an algorithm up the probe ladder (`envs.probes`) and say which rung fails and why.

A rung passes when, for every seed, the learned value of every query observation is within the
probe's tolerance of the exact answer and the deterministic action is the best one (discrete) or
within tolerance of it (continuous). Rungs whose action space the algorithm cannot handle are
skipped, and so is the memory rung unless the policy is recurrent (``rnn``).
"""

from __future__ import annotations

import dataclasses
import time

import jax
import numpy as np

import envs
from envs.probes import PROBES
from envs.spaces import Discrete
from jaxrl import algos
from jaxrl.api import train
from jaxrl.trained.results import NonFiniteMetricError

PROBE_STEPS = 40_960  # env steps per seed per rung (160 updates of the probe configs)


@dataclasses.dataclass
class RungResult:
    name: str
    rung: int
    passed: bool
    measured: dict  # {"values": [K][seeds], "actions": [K][seeds][...]}
    expected: dict  # {"values": [K], "actions": [K][...]}
    tolerance: dict  # {"value": float, "action": float}
    diagnosis: str
    seconds: float

    def to_json(self) -> dict:
        return dataclasses.asdict(self)


def supports(algo_name: str, probe_cls, rnn: str = "none") -> bool:
    """Discrete-only, continuous-only or both, from the algorithm's declared action kinds; a
    rung that needs memory only for a recurrent config (``rnn`` other than "none")."""
    if probe_cls.needs_memory and rnn == "none":
        return False
    kinds = getattr(algos.get(algo_name), "action_kinds", ("discrete", "continuous"))
    env = probe_cls()
    kind = "discrete" if isinstance(env.action_space(env.default_params), Discrete) else "continuous"
    return kind in kinds


def run_rung(algo: str, probe_cls, seeds: int = 4, total_steps: int = PROBE_STEPS, seed: int = 0,
             **overrides) -> RungResult:
    start = time.perf_counter()
    # no evaluation program: a rung is judged on the learned values and greedy actions below
    try:
        result = train(algo, store=False, env=probe_cls.name, seeds=seeds,
                       total_steps=total_steps, seed=seed, progress=False, eval_episodes=0,
                       **overrides)
    except NonFiniteMetricError as err:  # a rung that blows up fails, naming the metric
        return RungResult(probe_cls.name, probe_cls.rung, False, {}, {}, {},
                          f"training stopped: {err}", time.perf_counter() - start)
    return judge(algo, probe_cls, result, start)


def judge(algo: str, probe_cls, result, start: float) -> RungResult:
    """The `RungResult` of ``result`` (a `TrainResult` of ``algo`` on the probe ``probe_cls``,
    trained since ``start``, a `time.perf_counter` reading): its learned values and greedy
    actions at the probe's query observations against the exact answer."""
    algorithm = algos.get(algo)
    env, params = envs.make(probe_cls.name)
    gamma = float(result.config.gamma)
    answer = env.answer(gamma, params)
    obs = np.asarray(answer.observations)
    static = result.config.static()
    policy = algorithm.policy(static, env, params)
    value_fn = jax.jit(jax.vmap(policy.value, (0, None)))
    mode_fn = jax.jit(jax.vmap(policy.mode, (0, None)))
    values = np.asarray(value_fn(result.state, obs))  # [seeds, K]
    ok = True
    measured, expected = {}, {}
    if answer.values is not None:
        measured["values"] = values.T.astype(float).round(4).tolist()
        expected["values"] = np.asarray(answer.values).round(4).tolist()
        ok &= bool(np.all(np.abs(values - answer.values[None]) <= answer.value_tolerance))
    if answer.best_actions is not None:
        actions = np.asarray(mode_fn(result.state, obs))  # [seeds, K, ...]
        measured["actions"] = np.moveaxis(actions, 0, 1).astype(float).round(4).tolist()
        expected["actions"] = np.asarray(answer.best_actions).tolist()
        if isinstance(env.action_space(params), Discrete):
            ok &= bool(np.all(actions == answer.best_actions[None]))
        else:
            ok &= bool(np.all(np.abs(actions - answer.best_actions[None]) <= answer.action_tolerance))
    return RungResult(probe_cls.name, probe_cls.rung, ok, measured, expected,
                      {"value": answer.value_tolerance, "action": answer.action_tolerance},
                      probe_cls.diagnosis, time.perf_counter() - start)


def run_ladder(algo: str, seeds: int = 4, rungs: list[str] | None = None, **kw) -> list[RungResult]:
    """Every applicable rung, in ladder order."""
    if algos.get(algo).imitation:  # also fails early on an unknown name
        raise ValueError(f"{algo} imitates an expert's demonstrations and learns no reward: the "
                         "probe ladder tests reward learners (experiments/imitation.py measures "
                         "BC and GAIL against their expert)")
    unknown = sorted(set(rungs or ()) - {p.name for p in PROBES})
    if unknown:
        raise ValueError(f"unknown probe rung(s) {', '.join(unknown)}; rungs: "
                         f"{', '.join(p.name for p in PROBES)}")
    rnn = kw.get("rnn", "none")
    chosen = [p for p in PROBES if supports(algo, p, rnn) and (rungs is None or p.name in rungs)]
    return [run_rung(algo, p, seeds=seeds, **kw) for p in chosen]

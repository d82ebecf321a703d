"""What training returns: `TrainResult` (one config's seeds) and `NonFiniteMetricError`."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pandas as pd

from jaxrl import stats
from jaxrl.algos import acting
from jaxrl.config import AlgoConfig
from jaxrl.measures import train_return_last100
from jaxrl.parts.evaluate import eval_horizon, time_limit
from jaxrl.runs.files import finite_or_none
from jaxrl.runs.silent import run_notes
from jaxrl.trained.policies import StoredPolicy, acting_state, cached_seed
from jaxrl.trained.video import Video, render_policy


@dataclasses.dataclass
class TrainResult:
    """What `jaxrl.train` returns. ``metrics``: one row per (seed, update); ``evaluations``: one
    row per (evaluation, seed); ``state``: the final train state batched over seeds (leading
    axis = seed)."""

    algo: str
    env: str
    config: AlgoConfig
    seeds: int
    total_steps_per_seed: int
    metrics: pd.DataFrame
    evaluations: pd.DataFrame
    final_eval_return: np.ndarray  # [seeds] mean return of the final evaluation episodes
    state: Any
    compile_seconds: float
    run_seconds: float
    env_steps_per_second: float
    _act: Any = dataclasses.field(repr=False, default=None)  # acting.Policy, step jitted
    devices: str = "1 x cpu"  # what the program ran on, e.g. "2 x cpu" (members sharded)
    # "compiled", "cache" (persistent compilation cache or this process) or "partly cached"
    compile_source: str = "compiled"
    # seconds per program: {"init", "chunk", "eval"}, each its own (they overlap: init and chunk
    # compile side by side, the evaluation behind the first chunks)
    compile_parts: dict = dataclasses.field(default_factory=dict)
    # per program: seconds of tracing, lowering and compiling (`jaxrl.engine.programs.Built`);
    # the evaluation's "waited": what of its compile the run waited for at its first evaluation
    compile_phases: dict = dataclasses.field(default_factory=dict)
    run_id: str | None = None
    run_dir: str | None = None
    _acting_env: Any = dataclasses.field(repr=False, default=None)  # (env, env_params)
    _seed_states: dict = dataclasses.field(repr=False, default_factory=dict)  # one_seed's

    def act(self, obs, key=None, seed: int = 0, deterministic: bool = True, memory=None):
        """The trained policy of one seed: raw env obs ``[..., *obs_shape]`` -> env action.
        Stochastic actions (``deterministic=False``) need a ``key``.

        A recurrent policy (``rnn``) returns ``(action, memory)``: pass the memory back with the
        next observation of the same episodes (None starts them, for ``[N, *obs_shape]``
        observations; zero an env's memory with `jaxrl.parts.recurrent.reset_memory` when its episode
        ends)."""
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) \
                or not 0 <= seed < self.seeds:
            raise ValueError(f"this result has seeds 0..{self.seeds - 1}; got seed {seed!r}")
        state = cached_seed(self._seed_states, self.state, seed)
        shape = None if self._acting_env is None else \
            self._acting_env[0].observation_space(self._acting_env[1]).shape
        return acting.act_with(self._act, state, obs, key, seed, deterministic,
                               memory, shape)

    def export_policy(self, path, seed: int = 0,
                      platforms: str | tuple[str, ...] = ("cpu", "cuda")):
        """Write seed ``seed``'s deterministic policy to ``path`` as a serialized JAX program
        that runs without jaxrl (`jaxrl.trained.serving`), with a checksum that
        `jaxrl.trained.serving.load_exported` checks. ``platforms``: one of 'cpu', 'cuda',
        'rocm', 'tpu' or a sequence of them. Returns the path."""
        return self.policy().export_policy(path, seed, platforms)

    def policy(self) -> StoredPolicy:
        """The trained policy, every seed, as `jaxrl.load_policy` gives a stored run's."""
        env, env_params = self._acting_env
        return StoredPolicy(self.run_id or "", self.algo, self.env, None, None, env, env_params,
                            self.config, acting_state(self.state), self._act)

    def render(self, seed: int = 0, episodes: int = 1, deterministic: bool = True,
               key_seed: int = 0, height: int = 240) -> Video:
        """A `jaxrl.trained.video.Video` of ``episodes`` fresh episodes of seed ``seed``'s
        policy: it plays inline in a notebook; ``.save("run.mp4")`` (or ``.gif``) writes it."""
        return render_policy(self.policy(), seed, episodes, deterministic, key_seed, height)

    def notes(self) -> list[str]:
        """What this run could not measure, one line each (`jaxrl.runs.silent`): the seeds that
        ended no training episode before the budget ran out (the env's episode length, the
        envs, the steps each took, the budget that would end one), and those whose final
        evaluation ended no episode within its step limit; ``[]`` when every seed measured both."""
        params = None if self._acting_env is None else self._acting_env[1]
        limit = None if params is None else time_limit(params)
        horizon = None if params is None or self.evaluations.empty else eval_horizon(params)
        return run_notes(self.metrics, self.final_eval_return, self.seeds,
                         int(self.total_steps_per_seed), getattr(self.config, "num_envs", None),
                         int(self.config.steps_per_update), limit, horizon)

    def summary(self) -> dict:
        r = self.final_eval_return
        return {"algo": self.algo, "env": self.env, "seeds": self.seeds,
                "total_steps_per_seed": self.total_steps_per_seed,
                "final_eval_return_mean": float(np.mean(r)), "final_eval_return_iqm": stats.iqm(r),
                "compile_seconds": self.compile_seconds, "compile_source": self.compile_source,
                "compile_parts": self.compile_parts, "compile_phases": self.compile_phases,
                "run_seconds": self.run_seconds,
                "env_steps_per_second": self.env_steps_per_second, "devices": self.devices}


class NonFiniteMetricError(FloatingPointError):
    """A metric went NaN/Inf. ``.result`` holds everything trained up to the chunk before."""

    def __init__(self, message: str, result: TrainResult):
        super().__init__(message)
        self.result = result


def stored_summary(result: TrainResult) -> dict:
    """The JSON fields a finished run stores in ``run.json``: per-seed final evaluation returns
    and last-100-training-episode returns (None where not finite), their mean and IQM, timings
    and devices."""
    returns = np.asarray(result.final_eval_return, dtype=float)
    last100 = train_return_last100(result.metrics, len(returns))
    return dict(
        final_eval_return=[finite_or_none(r) for r in returns],
        train_return_last100=[finite_or_none(r) for r in last100],
        final_eval_return_mean=(finite_or_none(np.nanmean(returns))
                                if np.isfinite(returns).any() else None),
        final_eval_return_iqm=finite_or_none(stats.iqm(returns)),
        compile_seconds=result.compile_seconds, compile_source=result.compile_source,
        compile_parts=result.compile_parts, compile_phases=result.compile_phases,
        run_seconds=result.run_seconds, env_steps_per_second=result.env_steps_per_second,
        total_steps_per_seed=int(result.total_steps_per_seed),
        devices=result.devices,
    )

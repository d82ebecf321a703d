"""What a run that measured nothing says instead of a bare 0.00: which seeds ended no training
episode (the budget ended before the first episode did) and whose final evaluation ended none
(its step limit came first), each as one line that names the episode length, the envs and the
steps each took, and what to change.

Pure numpy/pandas (no JAX): the caller passes the env's time limit (`jaxrl.parts.evaluate.time_limit`).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd


def seeds_without_episodes(metrics: pd.DataFrame) -> list[int]:
    """The seeds of a metrics frame (columns seed, ``episode_count`` and/or
    ``episode_return_mean``, one row per update) in which no training episode ended, sorted;
    ``[]`` for a frame without episode metrics (behaviour cloning takes no env steps)."""
    if metrics.empty or "seed" not in metrics:
        return []
    if "episode_count" in metrics:
        ended = metrics.groupby("seed")["episode_count"].sum() > 0
    elif "episode_return_mean" in metrics:
        ended = metrics.groupby("seed")["episode_return_mean"].agg(
            lambda v: bool(np.isfinite(v.to_numpy(dtype=float)).any()))
    else:
        return []
    return sorted(int(s) for s, e in ended.items() if not e)


def which_seeds(chosen: list[int], seeds: int) -> str:
    """``" on seed 1 of 2"``, ``" on seeds 0 and 2 of 4"``; nothing when ``chosen`` is every seed."""
    if len(chosen) >= seeds:
        return ""
    names = [str(s) for s in chosen]
    listed = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
    return f" on seed{'s' if len(names) > 1 else ''} {listed} of {seeds}"


def steps_for_one_episode(limit: int, num_envs: int, steps_per_update: int) -> int:
    """The fewest steps per seed, in whole updates of ``steps_per_update``, in which each of
    ``num_envs`` envs takes ``limit`` steps: ``ceil(limit * num_envs / steps_per_update)`` updates."""
    return math.ceil(limit * num_envs / steps_per_update) * steps_per_update


def no_episode_line(silent: list[int], seeds: int, steps_per_seed: int, num_envs: int | None,
                    steps_per_update: int, limit: tuple[str, int] | None) -> str | None:
    """One line for the seeds ``silent`` (of ``seeds``) that ended no training episode, None
    when there are none. ``limit``: the env's time limit as (its param's name, steps), None when
    its params name none; ``num_envs``: envs per seed (None: the config has none)."""
    if not silent:
        return None
    head = f"no training episode ended{which_seeds(silent, seeds)}"
    if not num_envs:
        took = f"each seed took {steps_per_seed:,} env steps"
        return f"{head}: {took}" + (f" and episodes last up to {limit[1]:,} steps (the env's "
                                    f"{limit[0]})" if limit else "") + "; raise --total-steps"
    per_env = steps_per_seed // num_envs
    envs = f"each of the {num_envs:,} envs took {per_env:,} steps"
    if limit is None:
        return f"{head}: {envs} and the env names no time limit; raise --total-steps or lower num_envs"
    name, steps = limit
    if per_env >= steps:  # the budget covered an episode: the time limit did not end one
        return (f"{head}: {envs}, at least the env's {name} ({steps:,}), yet none ended; the "
                f"env's time limit is not what ends its episodes")
    least = steps_for_one_episode(steps, num_envs, steps_per_update)
    return (f"{head}: episodes last up to {steps:,} steps (the env's {name}) and {envs}; "
            f"raise --total-steps (at least {least:,} for one episode per env) or lower num_envs")


def unfinished_eval_line(final_returns, seeds: int, horizon: int,
                         limit: tuple[str, int] | None) -> str | None:
    """One line for the seeds whose final evaluation ended no episode (NaN in ``final_returns``,
    ``[seeds]``) within ``horizon`` steps, the evaluation's cap; None when every seed's ended one.
    ``limit`` as in `no_episode_line`."""
    returns = np.asarray(final_returns, dtype=float).reshape(-1)
    unfinished = [int(s) for s in np.flatnonzero(~np.isfinite(returns))]
    if not unfinished:
        return None
    if limit is None:
        why = "the env names no time limit"
    elif limit[1] > horizon:
        why = f"the cap on an evaluation episode; the env's {limit[0]} is {limit[1]:,}"
    else:
        why = f"the env's {limit[0]}"
    whose = "its" if len(unfinished) == 1 else "their"
    return (f"no final evaluation episode ended{which_seeds(unfinished, seeds)}: evaluation "
            f"episodes stop at {horizon:,} steps ({why}); {whose} final eval return is n/a, not 0")


def run_notes(metrics: pd.DataFrame, final_returns, seeds: int, steps_per_seed: int,
              num_envs: int | None, steps_per_update: int, limit: tuple[str, int] | None,
              horizon: int | None) -> list[str]:
    """The lines of `no_episode_line` and `unfinished_eval_line` that apply (``horizon`` None:
    the run evaluated nothing)."""
    lines = [no_episode_line(seeds_without_episodes(metrics), seeds, steps_per_seed, num_envs,
                             steps_per_update, limit)]
    if horizon is not None:
        lines.append(unfinished_eval_line(final_returns, seeds, horizon, limit))
    return [line for line in lines if line]

"""Expert demonstrations: whole episodes of a stored policy, recorded into the run store.

`jaxrl.demos(run_id, seed=0, episodes=10)` (`jaxrl.api`) loads a run's trained policy
(`jaxrl.trained.policies`); `record_demos` plays ``episodes`` fresh envs for one whole episode
each in one jitted loop, and stores them as a demonstration set (`jaxrl.runs.demos`: Parquet
steps and a ``demo.json``); `jaxrl.load_demos` reads one back. An episode ends at its first
``terminated`` or ``truncated``; the steps after it are never written.
"""

from __future__ import annotations

import datetime as _dt

import jax
import jax.numpy as jnp
import numpy as np

from jaxrl import compile_cache
from jaxrl.parts.evaluate import eval_horizon
from jaxrl.parts.recurrent import reset_memory
from jaxrl.runs.demos import write_demos
from jaxrl.trained.policies import StoredPolicy

MAX_RECORD_BYTES = 2 << 30  # the on-device record of one call (steps x envs x obs)
PROGRAMS_KEPT = 4  # rollout programs a StoredPolicy keeps (a video's record is new each call)


def demo_row(obs, env_state, action, reward, terminated, truncated) -> dict:
    """What a demonstration keeps of one step (`play`'s default ``record``)."""
    return {"obs": obs, "action": action, "reward": reward, "terminated": terminated,
            "truncated": truncated}


def play(stored: StoredPolicy, seed: int, episodes: int, key: jax.Array,
         deterministic: bool = True, record=demo_row) -> dict[str, np.ndarray]:
    """One episode in each of ``episodes`` fresh envs under seed ``seed``'s policy, as
    time-major host arrays ``[H, episodes, ...]`` (``H``: the env's evaluation horizon) of what
    ``record(obs, env_state, action, reward, terminated, truncated) -> dict`` keeps of each step
    (traced; ``obs``/``env_state`` are those the action was taken at, ``[episodes, ...]``), with
    ``active`` marking the steps up to and including each episode's end, and ``returns``
    ``[episodes]`` (NaN for an episode that did not end within ``H``).

    The seed's acting state is the program's argument, not a constant folded into it: the
    program is built once per ``(episodes, deterministic, record)`` and kept on ``stored``, so
    every seed of a run shares one compile (and the persistent cache serves later processes)."""
    state = stored.seed_state(seed)
    run = _program(stored, int(episodes), bool(deterministic), record)
    size = sum(x.size * x.dtype.itemsize
               for x in jax.tree.leaves(jax.eval_shape(run, state, key)))
    if size > MAX_RECORD_BYTES:
        raise ValueError(f"{episodes} episodes of up to {eval_horizon(stored.env_params)} steps "
                         f"need {size / 2**30:.1f} GiB on the device; record fewer episodes "
                         f"per call")
    rows, returns = run(state, key)
    out = jax.tree.map(np.asarray, rows)
    out["returns"] = np.asarray(returns)
    return out


def _program(stored: StoredPolicy, episodes: int, deterministic: bool, record):
    """`play`'s jitted ``run(state, key) -> (rows, returns)``, made once per ``(episodes,
    deterministic, record)`` and kept in ``stored.programs`` (the `PROGRAMS_KEPT` newest)."""
    cache_key = (episodes, deterministic, record)
    if cache_key in stored.programs:
        return stored.programs[cache_key]
    compile_cache.configure()
    env, env_params, policy = stored.env, stored.env_params, stored.policy
    horizon = eval_horizon(env_params)

    def run(state, key):
        reset_key, key = jax.random.split(key)
        obs, env_state = jax.vmap(env.reset, in_axes=(0, None))(
            jax.random.split(reset_key, episodes), env_params)

        def step(carry, k):
            obs, env_state, memory, ended, ret = carry
            act_key, step_key = jax.random.split(k)
            memory, action = policy.step(state, memory, obs, act_key, deterministic)
            next_obs, next_state, reward, terminated, truncated, info = jax.vmap(
                env.step, in_axes=(0, 0, 0, None))(jax.random.split(step_key, episodes),
                                                   env_state, action, env_params)
            done = info["episode_done"]
            row = {**record(obs, env_state, action, reward, terminated, truncated),
                   "active": ~ended}
            ret = jnp.where(done & ~ended, info["episode_return"], ret)
            return (next_obs, next_state, reset_memory(memory, done), ended | done, ret), row

        init = (obs, env_state, policy.initial(episodes), jnp.zeros(episodes, bool),
                jnp.full(episodes, jnp.nan))
        (_, _, _, ended, ret), rows = jax.lax.scan(step, init, jax.random.split(key, horizon))
        return rows, jnp.where(ended, ret, jnp.nan)

    stored.programs[cache_key] = program = jax.jit(run)
    while len(stored.programs) > PROGRAMS_KEPT:
        del stored.programs[next(iter(stored.programs))]
    return program


def check_episodes(episodes: int) -> None:
    """Refuse fewer than one episode (before any policy is loaded)."""
    if int(episodes) < 1:
        raise ValueError(f"episodes must be >= 1, got {episodes}")


def record_demos(stored: StoredPolicy, seed: int = 0, episodes: int = 10,
                 deterministic: bool = True, key_seed: int = 0,
                 runs_dir: str | None = None) -> str:
    """Record ``episodes`` whole episodes of ``stored``'s seed-``seed`` policy (its mode, or
    samples with ``deterministic=False``; env and sampling keys from ``key_seed``) into the run
    store; returns the new demo id. Episodes that do not end within the env's horizon are
    dropped (the count kept is in ``demo.json``)."""
    check_episodes(episodes)
    run_id = stored.run_id
    played = play(stored, int(seed), int(episodes), jax.random.key(key_seed), deterministic)
    kept = np.flatnonzero(np.isfinite(played["returns"]))
    if kept.size == 0:
        raise ValueError(f"no episode of run {run_id!r} ended within the env's horizon")
    env_params = stored.env_params
    meta = {
        "run_id": run_id, "algo": stored.algo, "env": stored.env_name,
        "env_kwargs": stored.env_kwargs, "seed": int(seed), "key_seed": int(key_seed),
        "deterministic": bool(deterministic), "episodes": int(kept.size),
        "episodes_requested": int(episodes),
        "obs_shape": list(stored.env.observation_space(env_params).shape),
        "action_shape": list(np.shape(played["action"])[2:]),
        "action_dtype": str(played["action"].dtype),
        "returns": [float(r) for r in played["returns"][kept]],
        "lengths": [int(n) for n in played["active"][:, kept].sum(0)],
        "created_at": _dt.datetime.now().isoformat(timespec="seconds"),
    }
    return write_demos(played, kept, meta, runs_dir)

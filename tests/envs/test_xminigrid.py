"""The XLand-MiniGrid adapter (envs/xminigrid.py) speaks the env protocol (envs/core.py): the
goal as termination, the limit as truncation, a fresh episode after either; XLand tasks run
offline on generated rulesets, or on a local file; a named set that cannot be fetched is one
line."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

pytest.importorskip("xminigrid")

import envs
from envs import xminigrid as adapter

# MiniGrid-Empty-5x5: the agent starts at (1, 1) facing south, the goal is at (3, 3);
# XLand-MiniGrid's actions: 0 forward, 1 turn right, 2 turn left
TO_THE_GOAL = [0, 0, 1, 0, 0]


def scan_rollout(env, params, actions):
    """One jitted scan (the carry's types must hold across steps, as in training)."""
    _, state = env.reset(jax.random.key(0), params)

    def body(state, inp):
        k, a = inp
        obs, state, reward, term, trunc, info = env.step(k, state, a, params)
        return state, dict(obs=obs, reward=reward, terminated=term, truncated=trunc,
                           final=info["final_observation"], t=env.inner_state(state).timestep.state.step_num)

    keys = jax.random.split(jax.random.key(1), len(actions))
    _, out = jax.jit(lambda s: jax.lax.scan(body, s, (keys, jnp.asarray(actions))))(state)
    return jax.tree.map(np.asarray, out)


def test_spaces_and_defaults():
    env, params = envs.make("xminigrid:MiniGrid-DoorKey-5x5")
    assert env.observation_space(params).shape == (7, 7, 2)
    assert env.action_space(params).n == 6
    assert envs.env_family("xminigrid:MiniGrid-DoorKey-5x5") == "xminigrid"


def test_the_goal_terminates_with_its_reward_then_a_fresh_episode():
    env, params = envs.make("xminigrid:MiniGrid-Empty-5x5")
    out = scan_rollout(env, params, TO_THE_GOAL)
    assert out["terminated"].tolist() == [False] * 4 + [True]
    assert not out["truncated"].any()
    assert out["reward"][-1] == pytest.approx(1 - 0.9 * 5 / params.episode_length)
    assert out["t"].tolist() == [1, 2, 3, 4, 0]
    assert not np.array_equal(out["final"][-1], out["obs"][-1])
    np.testing.assert_array_equal(out["final"][-2], out["obs"][-2])


def test_the_limit_truncates():
    env, params = envs.make("xminigrid:MiniGrid-Empty-5x5")
    limit = params.episode_length
    out = scan_rollout(env, params, [1] * (limit + 2))  # turning in place
    assert np.flatnonzero(out["truncated"]).tolist() == [limit - 1]
    assert not out["terminated"].any() and out["t"][limit - 1] == 0


def test_xland_runs_offline_on_generated_rulesets(capsys):
    env, params = envs.make("xminigrid:XLand-MiniGrid-R1-9x9")
    assert env.rulesets_source == adapter.GENERATED
    bench = params.rulesets
    assert bench.num_rulesets() == 64
    goal_tiles = np.asarray(bench.goals)[:, 1:3]
    init = np.asarray(bench.init_tiles)
    assert all((init[i] == goal_tiles[i]).all(axis=1).any() for i in range(64))  # reachable
    out = scan_rollout(env, params, [0, 1, 0, 2] * 3)
    assert out["obs"].shape == (12, 5, 5, 2) and np.isfinite(out["reward"]).all()


def test_a_local_ruleset_file(tmp_path, monkeypatch):
    from xminigrid.benchmarks import save_bz2_pickle

    bench = adapter.generated_rulesets(count=8, seed=3)
    path = tmp_path / "mine.pkl"
    save_bz2_pickle({k: np.asarray(getattr(bench, k)) for k in
                     ("goals", "rules", "init_tiles", "num_rules")}, str(path))
    monkeypatch.setenv(adapter.RULESETS_ENV, str(path))
    env, params = envs.make("xminigrid:XLand-MiniGrid-R1-11x11")
    assert env.rulesets_source == str(path) and params.rulesets.num_rulesets() == 8


def test_a_named_set_offline_is_one_line(monkeypatch):
    from urllib.error import URLError

    from xminigrid import benchmarks

    def offline(name):
        raise URLError("no network")

    monkeypatch.setattr(benchmarks, "load_benchmark", offline)
    with pytest.raises(adapter.RulesetsUnavailableError) as err:
        envs.make("xminigrid:XLand-MiniGrid-R1-13x13", rulesets="trivial-21k")
    text = str(err.value)
    assert "\n" not in text and adapter.RULESETS_ENV in text

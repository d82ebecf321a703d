"""The Jumanji adapter (envs/jumanji.py) speaks the env protocol (envs/core.py): dm_env's last
step read as termination (discount 0) or truncation (discount 1), a fresh episode after either,
specs flattened to one vector with the action mask last, which PPO's policy honours."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

pytest.importorskip("jumanji")

import envs
from envs import registry


def scan_rollout(env, params, action, steps, key=0):
    _, state = env.reset(jax.random.key(key), params)

    def body(state, k):
        obs, state, reward, term, trunc, info = env.step(k, state, jnp.int32(action), params)
        return state, dict(obs=obs, reward=reward, terminated=term, truncated=trunc,
                           final=info["final_observation"])

    keys = jax.random.split(jax.random.key(key + 1), steps)
    return jax.tree.map(np.asarray, jax.jit(lambda s: jax.lax.scan(body, s, keys)[1])(state))


@pytest.mark.parametrize("task, size, mask, actions", [
    ("Snake-v1", 725, 4, 4), ("Game2048-v1", 20, 4, 4), ("Maze-v0", 109, 4, 4),
    ("SlidingTilePuzzle-v0", 32, 4, 4), ("Minesweeper-v0", 202, 100, 100)])
def test_specs_become_spaces_with_the_mask_last(task, size, mask, actions):
    env, params = envs.make(f"jumanji:{task}")
    assert env.observation_space(params).shape == (size,)
    assert env.action_mask_size == mask and env.action_space(params).n == actions
    obs, _ = env.reset(jax.random.key(0), params)
    assert set(np.unique(np.asarray(obs[-mask:]))) <= {0.0, 1.0}
    assert envs.env_family(f"jumanji:{task}") == "jumanji"


def test_the_time_limit_truncates():
    env, params = envs.make("jumanji:Maze-v0", time_limit=5)
    assert params.episode_length == 5
    out = scan_rollout(env, params, action=0, steps=12)  # into the wall: nothing happens
    assert not out["terminated"].any()
    assert np.flatnonzero(out["truncated"]).tolist() == [4, 9]


def test_a_terminal_state_terminates_then_a_fresh_episode():
    env, params = envs.make("jumanji:Snake-v1")
    out = scan_rollout(env, params, action=0, steps=40)  # straight on: into a wall
    ends = np.flatnonzero(out["terminated"])
    assert len(ends) >= 1 and not out["truncated"].any()
    first = ends[0]
    assert not np.array_equal(out["final"][first], out["obs"][first])
    if first > 0:
        np.testing.assert_array_equal(out["final"][first - 1], out["obs"][first - 1])


def test_ppo_gives_masked_actions_no_probability():
    from jaxrl.ops import Categorical, masked
    from jaxrl.parts.actor_critic import ActorCritic

    dist = masked(Categorical(logits=jnp.zeros((2, 4))), jnp.asarray([[1, 0, 1, 0], [0, 0, 0, 1]]))
    np.testing.assert_allclose(np.asarray(dist.probs), [[0.5, 0, 0.5, 0], [0, 0, 0, 1]])
    assert np.isfinite(np.asarray(dist.entropy())).all()
    env, params = envs.make("jumanji:Maze-v0")
    net = ActorCritic(env.action_space(params), (16,), action_mask=env.action_mask_size)
    obs, _ = env.reset(jax.random.key(0), params)
    variables = net.init(jax.random.key(1), obs[None])
    probs = np.asarray(net.apply(variables, obs[None], method=net.dist).probs)[0]
    allowed = np.asarray(obs[-4:]) > 0.5
    assert (probs[~allowed] == 0).all() and probs[allowed].sum() == pytest.approx(1.0)


def test_ppo_trains_on_a_masked_task_and_refuses_normalized_masks():
    from jaxrl.api import train
    from jaxrl.config import ConfigError

    kw = dict(seeds=1, total_steps=512, progress=False, store=False, num_envs=8, num_steps=32,
              num_minibatches=2, update_epochs=1, hidden=(16,))
    result = train("ppo", env="jumanji:Maze-v0", **kw)
    assert np.isfinite(result.metrics["entropy"]).all()
    with pytest.raises(ConfigError, match="normalize_obs=False"):
        train("ppo", env="jumanji:Maze-v0", normalize_obs=True, **kw)


def test_unknown_task_is_one_line():
    with pytest.raises(registry.UnknownEnvironmentError) as err:
        envs.make("jumanji:Snake-v2")
    assert "jumanji:Snake-v1" in str(err.value) and "\n" not in str(err.value)

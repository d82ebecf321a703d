"""A user env registered by name trains like a built-in one; bad registrations are refused."""

import jax
import jax.numpy as jnp
import pytest
from flax import struct

import envs
import jaxrl
from envs.core import Environment
from envs.spaces import Box, Discrete


@struct.dataclass
class WalkParams:
    length: int = 5
    max_steps_in_episode: int = 20


class Walk(Environment):
    """Walk right along a line to its end (+1); each step costs 0.05."""

    name = "Walk"

    @property
    def default_params(self):
        return WalkParams()

    def observation_space(self, params):
        return Box(low=0.0, high=1.0, shape=(2,))

    def action_space(self, params):
        return Discrete(2)

    def reset_env(self, key, params):
        return jnp.zeros(2), (jnp.zeros((), jnp.int32), jnp.zeros((), jnp.int32))

    def step_env(self, key, state, action, params):
        pos, t = state
        pos = jnp.clip(pos + 2 * action - 1, 0, params.length)
        done = pos == params.length
        obs = jnp.stack([pos / params.length, (t + 1) / params.max_steps_in_episode])
        reward = jnp.where(done, 1.0, -0.05)
        return obs, (pos, t + 1), reward, done, t + 1 >= params.max_steps_in_episode, {}


WALK = Walk()


@pytest.fixture(autouse=True)
def _own_registry(monkeypatch):
    """Registrations made here stay here (the registry is per process)."""
    monkeypatch.setattr(envs.registry, "_REGISTERED", {})


def test_a_registered_env_trains_by_name():
    envs.register("Walk-v0", lambda **kw: (WALK, WalkParams(**kw)))
    assert "Walk-v0" in envs.registered_names() and envs.env_family("Walk-v0") == "discrete"
    env, params = envs.make("Walk-v0", length=3)
    assert env is WALK and params.length == 3
    r = jaxrl.train("ppo", env="Walk-v0", seeds=2, total_steps=8192, store=False,
                    progress=False, num_envs=8, num_steps=32, env_kwargs={"length": 3})
    assert (r.final_eval_return > 0.8).all()  # walks straight to the end: 1 - 2 * 0.05
    obs = jnp.zeros((1, 2))
    assert int(r.act(obs, seed=0)[0]) == 1
    assert jax.tree.leaves(r.state)


def test_bad_registrations_are_refused():
    with pytest.raises(ValueError, match="built-in env name"):
        envs.register("CartPole-v1", lambda **kw: (WALK, None))
    with pytest.raises(ValueError, match="built-in env name"):
        envs.register("brax:walker", lambda **kw: (WALK, None))
    with pytest.raises(ValueError, match="family must be one of"):
        envs.register("Walk-v1", lambda **kw: (WALK, None), family="robots")
    with pytest.raises(ValueError, match="non-empty string"):
        envs.register("", lambda **kw: (WALK, None))


def test_the_families_are_the_clis():
    from jaxrl.cli.names import ENV_FAMILIES

    assert envs.registry.FAMILIES == ENV_FAMILIES

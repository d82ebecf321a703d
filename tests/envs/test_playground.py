"""The Playground adapter (envs/playground.py) speaks the env protocol (envs/core.py).

One task, CartpoleBalance on MJX (about 10 s to compile here), checked under one jitted,
vmapped rollout whose time limits are traced params: truncation exactly at the limit with the
right final observation, the first observation after a reset, spaces; termination and the
non-finite canary by a NaN put into the physics state. Then the one-line errors of bad input.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

pytest.importorskip("mujoco_playground")  # the offscreen OpenGL for MuJoCo: tests/conftest.py

import envs
from envs import playground, registry
from envs.brax_adapter import BraxParams

T = 12
pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.filterwarnings("ignore::UserWarning")]


def make_rollout(env, steps=T):
    """jit(vmap(rollout)) over (key, params) with a constant action."""

    def rollout(key, params):
        k0, k1 = jax.random.split(key)
        obs0, state = env.reset(k0, params)
        action = jnp.full((env.action_size,), 0.5, jnp.float32)

        def body(state, k):
            obs, state, reward, term, trunc, info = env.step(k, state, action, params)
            return state, {"obs": obs, "reward": reward, "terminated": term, "truncated": trunc,
                           "final_obs": info["final_observation"], "t": env.inner_state(state).t,
                           "nonfinite": info["env_nonfinite"]}

        _, out = jax.lax.scan(body, state, jax.random.split(k1, steps))
        return obs0, out

    return jax.jit(jax.vmap(rollout))


@pytest.fixture(scope="module")
def cartpole():
    env, params = envs.make("playground:CartpoleBalance")
    rollout = make_rollout(env)
    keys = jax.random.split(jax.random.key(0), 3)
    limits = jnp.asarray([4, 5, 1000], jnp.int32)
    obs0, out = jax.tree.map(np.asarray, rollout(keys, BraxParams(episode_length=limits)))
    return env, params, obs0, out


def test_defaults_are_the_tasks_own(cartpole):
    env, params, _, _ = cartpole
    assert params.episode_length == 1000  # DM Control's 1,000-step episodes
    assert env.action_repeat == 1
    assert env.observation_space(params).shape == (5,)
    space = env.action_space(params)
    assert space.shape == (1,) and float(space.low[0]) == -1.0 and float(space.high[0]) == 1.0


def test_truncation_exactly_at_the_limit(cartpole):
    _, _, _, out = cartpole
    for row, limit in enumerate((4, 5)):
        trunc = out["truncated"][row]
        assert list(np.flatnonzero(trunc)[:2]) == [limit - 1, 2 * limit - 1]
        assert not out["terminated"][row].any()
        assert out["t"][row][limit - 1] == 0 and out["t"][row][limit - 2] == limit - 1
    assert not out["truncated"][2].any()  # the 1,000-step limit is not reached


def test_final_observation_and_first_observation_after_reset(cartpole):
    _, _, _, out = cartpole
    row, end = 0, 3  # limit 4: the step at index 3 ends the episode
    final, obs = out["final_obs"][row], out["obs"][row]
    # on a step that does not end an episode, final_observation is the observation
    np.testing.assert_array_equal(final[end - 1], obs[end - 1])
    # on the truncating step it is the last observation of the ended episode (the pole moved on
    # from the previous step), while obs is a fresh episode's first: near upright and at rest
    assert not np.allclose(final[end], obs[end])
    assert np.abs(final[end] - final[end - 1]).max() < 0.5
    cart, cos, _, velocities = obs[end][0], obs[end][1], obs[end][2], obs[end][3:]
    assert abs(cart) < 0.3 and cos > 0.99 and np.abs(velocities).max() < 0.1
    # the reward is the truncated step's, of the old episode
    assert np.isfinite(out["reward"]).all()


def test_first_observation_matches_playgrounds_own_reset(cartpole):
    env, params, _, _ = cartpole
    key = jax.random.key(7)
    obs, _ = env.reset(key, params)
    raw = env.brax_env.reset(jax.random.key_data(key))
    np.testing.assert_allclose(np.asarray(obs), np.asarray(raw.obs), rtol=1e-6)


def test_nan_physics_terminates_and_raises_the_canary(cartpole):
    env, params, _, _ = cartpole
    _, outer = env.reset(jax.random.key(1), params)
    state = env.inner_state(outer)  # the adapter's, within the prepared starts' (envs.starts)
    data = state.brax_state.data
    poisoned = outer.replace(state=state.replace(brax_state=state.brax_state.replace(
        data=data.replace(qvel=data.qvel.at[0].set(jnp.nan)))))
    step = jax.jit(env.step)
    _, after, _, term, trunc, info = step(jax.random.key(2), poisoned, jnp.zeros(1), params)
    assert bool(term) and not bool(trunc)  # Playground's done: its DM Control tasks' NaN check
    assert bool(info["env_nonfinite"])
    assert np.isfinite(np.asarray(env.inner_state(after).brax_state.data.qvel)).all()  # reset
    _, _, _, term, _, info = step(jax.random.key(3), after, jnp.zeros(1), params)
    assert not bool(term) and not bool(info["env_nonfinite"])


def test_family_defaults_and_versions_recorded():
    from jaxrl.algos import ppo, sac
    from jaxrl.runs.store import package_versions

    assert envs.env_family("playground:CheetahRun") == "playground"
    assert ppo.default_config("playground:CheetahRun").gamma == pytest.approx(0.995)
    assert sac.default_config("playground:CheetahRun").batch_size == 512
    versions = package_versions("playground:CartpoleBalance")
    assert versions["playground"].startswith("0.2.")
    assert versions["mujoco"] and versions["mujoco-mjx"] and versions["jax"]
    assert versions["physics"] == "mjx (impl='jax')"
    assert "playground" not in package_versions("CartPole-v1")


# -- bad input: one line each ----------------------------------------------------------------------
def one_line(err: BaseException) -> str:
    text = str(err)
    assert "\n" not in text and "Traceback" not in text
    return text


def test_unknown_task_names_the_closest():
    with pytest.raises(registry.UnknownEnvironmentError) as err:
        envs.make("playground:CartpoleBalence")
    assert "playground:CartpoleBalance" in one_line(err.value)


def test_other_physics_implementations_are_refused():
    with pytest.raises(ValueError, match="impl='jax'") as err:
        envs.make("playground:CartpoleBalance", impl="warp")
    one_line(err.value)


def test_a_suite_not_installed_names_its_extra(monkeypatch):
    from importlib import metadata

    real = metadata.version

    def version(dist):
        if dist == "playground":
            raise metadata.PackageNotFoundError(dist)
        return real(dist)

    monkeypatch.setattr(registry.metadata, "version", version)
    with pytest.raises(registry.SuiteUnavailableError) as err:
        envs.make("playground:CartpoleBalance")
    assert 'pip install -e ".[playground]"' in one_line(err.value)


def test_a_suite_version_the_adapter_is_not_written_for(monkeypatch):
    real = registry.metadata.version
    monkeypatch.setattr(registry.metadata, "version",
                        lambda dist: "0.9.1" if dist == "playground" else real(dist))
    with pytest.raises(registry.SuiteVersionError) as err:
        envs.make("playground:CartpoleBalance")
    text = one_line(err.value)
    assert "0.9.1" in text and "0.2.*" in text


def test_menagerie_missing_is_one_line_with_the_way_out(monkeypatch, tmp_path):
    from mujoco_playground._src import mjx_env

    locomotion = [t for t in playground.task_names()
                  if t not in playground._playground().dm_control_suite.ALL_ENVS]
    assert locomotion
    monkeypatch.setattr(mjx_env, "MENAGERIE_PATH", mjx_env.MENAGERIE_PATH)
    monkeypatch.setenv(playground.MENAGERIE_ENV, str(tmp_path / "absent"))
    with pytest.raises(playground.MenagerieMissingError) as err:
        envs.make(f"playground:{locomotion[0]}")
    assert playground.MENAGERIE_ENV in one_line(err.value)


# -- dict observations and the asymmetric critic ----------------------------------------------------
from flax import struct  # noqa: E402


@struct.dataclass
class _Data:
    qpos: jax.Array
    qvel: jax.Array


@struct.dataclass
class _State:  # the fields of Playground's `mjx_env.State`
    data: _Data
    obs: dict
    reward: jax.Array
    done: jax.Array
    metrics: dict
    info: dict


class _DictObsTask:
    """A Playground-shaped task with a locomotion task's dict observation: the policy's
    ``state`` (2 entries) and the critic's ``privileged_state`` (3)."""

    action_size = 2

    def _state(self, q, reward):
        return _State(_Data(q, jnp.zeros(3)), {"state": q[:2], "privileged_state": q},
                      jnp.float32(reward), jnp.float32(0.0), {}, {})

    def reset(self, rng):
        return self._state(jax.random.normal(rng, (3,)), 0.0)

    def step(self, state, action):
        q = state.data.qpos + 0.1 * jnp.sum(action)
        return self._state(q, -jnp.sum(q ** 2))


def test_dict_observation_by_key_and_with_the_critics_part():
    policy_only = playground.PlaygroundEnv(_DictObsTask(), "fake", episode_length=10,
                                           action_repeat=1)
    assert policy_only.observation_size == 2 and policy_only.policy_obs_size is None
    both = playground.PlaygroundEnv(_DictObsTask(), "fake", episode_length=10, action_repeat=1,
                                    critic_key="privileged_state")
    assert both.observation_size == 5 and both.policy_obs_size == 2
    obs, _ = both.reset(jax.random.key(0), both.default_params)
    np.testing.assert_allclose(np.asarray(obs[:2]), np.asarray(obs[2:4]))  # state, then all
    with pytest.raises(ValueError, match="no observation 'nope'") as err:
        playground.PlaygroundEnv(_DictObsTask(), "fake", episode_length=10, action_repeat=1,
                                 critic_key="nope")
    one_line(err.value)


def test_ppo_asymmetric_critic_policy_sees_its_part_only():
    from jaxrl.api import train
    from jaxrl.config import ConfigError

    env = playground.PlaygroundEnv(_DictObsTask(), "fake", episode_length=10, action_repeat=1,
                                   critic_key="privileged_state")
    envs.register("test:dict-obs", lambda: (env, None), family="continuous")
    kw = dict(seeds=1, total_steps=256, progress=False, store=False, num_envs=4, num_steps=32,
              num_minibatches=2, update_epochs=1, hidden=(8,))
    result = train("ppo", env="test:dict-obs", asymmetric_critic=True, **kw)
    params = result.state.params["params"]
    kernels = {net: jax.tree.leaves(params[net])[1].shape for net in ("policy", "value_net")}
    policy_in = [leaf.shape for leaf in jax.tree.leaves(params["policy"]) if leaf.ndim == 3]
    value_in = [leaf.shape for leaf in jax.tree.leaves(params["value_net"]) if leaf.ndim == 3]
    assert policy_in[0][1] == 2 and value_in[0][1] == 5, kernels  # [seeds, in, out]
    with pytest.raises(ConfigError, match="privileged part"):
        train("ppo", env="CartPole-v1", asymmetric_critic=True, **kw)


@pytest.mark.parametrize("algo", ["sac", "td3"])
def test_off_policy_asymmetric_critic_actor_sees_its_part_only(algo):
    from jaxrl.api import train
    from jaxrl.config import ConfigError

    env = playground.PlaygroundEnv(_DictObsTask(), "fake", episode_length=10, action_repeat=1,
                                   critic_key="privileged_state")
    envs.register("test:dict-obs-off", lambda: (env, None), family="continuous")
    kw = dict(seeds=1, total_steps=128, progress=False, store=False, num_envs=2, log_interval=16,
              learning_starts=16, batch_size=8, buffer_size=64, hidden=(8,))
    result = train(algo, env="test:dict-obs-off", asymmetric_critic=True, **kw)
    assert result.config.actor_obs == 2

    def first(tree):  # the first Dense kernel's shape: [seeds, (critics,) in, out]
        paths = jax.tree_util.tree_flatten_with_path(tree)[0]
        return next(leaf.shape for path, leaf in paths
                    if "Dense_0" in jax.tree_util.keystr(path) and "kernel" in str(path[-1]))
    assert first(result.state.params.actor)[-2] == 2  # the actor: the policy's 2 entries
    assert first(result.state.params.critic)[-2] == 5 + 2  # a critic: all 5, and the action
    assert np.all(np.isfinite(np.asarray(result.final_eval_return)))
    plain = train(algo, env="test:dict-obs-off", **kw)
    assert plain.config.actor_obs == 0 and first(plain.state.params.actor)[-2] == 5
    with pytest.raises(ConfigError, match="privileged part") as err:
        train(algo, env="Pendulum-v1", asymmetric_critic=True, **kw)
    one_line(err.value)


def test_a_task_renders_its_mujoco_scene(cartpole):
    from envs.render import renderer

    env, params, _, _ = cartpole
    draw = renderer(env, params, height=96)
    obs, state = env.reset(jax.random.key(0), params)
    frame = draw.draw(draw.capture(state, obs))
    assert frame.shape == (96, 128, 3) and frame.dtype == np.uint8
    assert frame.std() > 5  # a scene, not a blank canvas


@pytest.mark.parametrize("case", ["unknown task", "not installed", "other version"])
def test_bad_suite_input_is_one_line_and_stores_nothing(case, monkeypatch, tmp_path, capsys):
    from jaxrl.cli import main

    real = registry.metadata.version
    if case == "not installed":
        def version(dist):
            if dist == "playground":
                raise registry.metadata.PackageNotFoundError(dist)
            return real(dist)
        monkeypatch.setattr(registry.metadata, "version", version)
    elif case == "other version":
        monkeypatch.setattr(registry.metadata, "version",
                            lambda dist: "0.3.0" if dist == "playground" else real(dist))
    env = "playground:CartpoleBalence" if case == "unknown task" else "playground:CartpoleBalance"
    runs = tmp_path / "runs"
    code = main(["train", "ppo", "--env", env, "--seeds", "2", "--total-steps", "20000",
                 "--runs-dir", str(runs), "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert {"unknown task": "playground:CartpoleBalance", "not installed": ".[playground]",
            "other version": "0.3.0"}[case] in err[0]
    assert not runs.exists() or not any(runs.iterdir())

"""Your own torso (`jaxrl.parts.torsos`): a Flax module named by import path trains in PPO and DQN
(its parameters are the network's), is stored, reloaded in the same shape, acted with and
exported; a registered name works in its process; bad ones are one line."""

import flax.linen as nn
import jax
import numpy as np
import pytest

import jaxrl
from jaxrl.config import ConfigError
from jaxrl.parts.torsos import REGISTERED, register_torso
from jaxrl.trained.serving import load_exported

PATH = "tests.parts.test_user_torso:tiny"
TINY = dict(env="CartPole-v1", seeds=2, progress=False, eval_episodes=2)


class Tiny(nn.Module):
    """``[..., obs_dim] -> [..., 8]``: one Dense layer and a ReLU."""

    @nn.compact
    def __call__(self, x):
        return nn.relu(nn.Dense(8, name="user_dense")(x))


def tiny() -> nn.Module:
    return Tiny()


def _user_kernels(params) -> list:
    paths = jax.tree_util.tree_flatten_with_path(params)[0]
    return [leaf for path, leaf in paths if "user_dense" in jax.tree_util.keystr(path)
            and "kernel" in jax.tree_util.keystr(path)]


@pytest.mark.parametrize("algo, own", [
    ("ppo", dict(num_envs=4, num_steps=64, normalize_obs=False)),
    ("dqn", dict(learning_starts=256, buffer_size=1024, batch_size=32)),
])
def test_a_torso_by_import_path_trains_reloads_acts_and_exports(algo, own, tmp_path):
    result = jaxrl.train(algo, torso=PATH, total_steps=2048, runs_dir=str(tmp_path), **TINY,
                         **own)
    kernels = _user_kernels(result.state.params)
    assert kernels and all(k.shape[-2:] == (4, 8) for k in kernels)  # [seeds, obs_dim, 8]
    stored = jaxrl.load_policy(result.run_id, runs_dir=str(tmp_path))
    obs = np.zeros((3, 4), np.float32)
    np.testing.assert_array_equal(np.asarray(stored.act(obs)), np.asarray(result.act(obs)))
    served = load_exported(result.export_policy(tmp_path / "p.jaxpolicy", platforms="cpu"))
    np.testing.assert_array_equal(np.asarray(served.call(obs)), np.asarray(result.act(obs)))


def test_a_registered_torso_works_in_its_process(monkeypatch):
    monkeypatch.setitem(REGISTERED, "tiny8", tiny)
    result = jaxrl.train("ppo", torso="tiny8", total_steps=512, store=False, num_envs=4,
                         num_steps=64, **TINY)
    assert _user_kernels(result.state.params)


@pytest.mark.parametrize("torso, fragment", [
    ("tests.networks.nope:tiny", "cannot be imported"),
    ("tests.parts.test_user_torso:absent", "cannot be imported"),
    ("tests.parts.test_user_torso:PATH", "is not a factory"),
    ("not_a_torso", "unknown torso 'not_a_torso'"),
])
def test_a_torso_that_cannot_be_found_is_one_line(torso, fragment):
    with pytest.raises(ConfigError, match=fragment) as err:
        jaxrl.train("ppo", torso=torso, total_steps=512, store=False, **TINY)
    assert "\n" not in str(err.value)


def test_a_factory_that_returns_no_module_is_one_line(monkeypatch):
    monkeypatch.setitem(REGISTERED, "broken", lambda: "a string")
    with pytest.raises(ConfigError, match="returned str, not a Flax module"):
        jaxrl.train("ppo", torso="broken", total_steps=512, store=False, num_envs=4,
                    num_steps=64, **TINY)
    with pytest.raises(ConfigError, match="needs a new name"):
        register_torso("mlp", tiny)

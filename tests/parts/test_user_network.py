"""Your own whole network (`jaxrl.parts.user_networks`): a Flax actor-critic trains in PPO and a Flax
Q-network in DQN and PQN, named by import path or passed as the factory itself; its parameters
are the network's, and the run is stored, reloaded, acted with and exported. What cannot take
one (VPG/TRPO's two fits, a recurrent policy, a factory no import finds) is one line."""

import flax.linen as nn
import jax
import numpy as np
import pytest

import jaxrl
from envs.spaces import Discrete
from jaxrl.config import ConfigError
from jaxrl.parts.user_networks import NETWORKS, register_network
from jaxrl.trained.serving import load_exported

TINY = dict(env="CartPole-v1", seeds=2, progress=False, eval_episodes=2, total_steps=2048)


class TwoHeads(nn.Module):
    """``obs -> (logits [..., n], value [..., 1])``: one shared layer, two linear heads."""

    actions: int

    @nn.compact
    def __call__(self, obs):
        x = nn.tanh(nn.Dense(16, name="user_shared")(obs))
        return nn.Dense(self.actions, name="user_pi")(x), nn.Dense(1, name="user_v")(x)


class QNet(nn.Module):
    """``obs -> Q [..., n]``."""

    actions: int

    @nn.compact
    def __call__(self, obs):
        return nn.Dense(self.actions, name="user_q")(nn.relu(nn.Dense(16, name="user_h")(obs)))


def actor_critic(space) -> nn.Module:
    return TwoHeads(space.n if isinstance(space, Discrete) else int(np.prod(space.shape)))


def q_network(num_actions: int) -> nn.Module:
    return QNet(num_actions)


def _leaves(params, name: str) -> list:
    paths = jax.tree_util.tree_flatten_with_path(params)[0]
    return [leaf for path, leaf in paths if name in jax.tree_util.keystr(path)]


@pytest.mark.parametrize("algo, network, layer, own", [
    ("ppo", "tests.parts.test_user_network:actor_critic", "user_pi",
     dict(num_envs=4, num_steps=64)),
    ("dqn", q_network, "user_q", dict(learning_starts=256, buffer_size=1024, batch_size=32)),
    ("pqn", "tests.parts.test_user_network:q_network", "user_q",
     dict(num_envs=4, num_steps=64, num_minibatches=4)),
])
def test_a_whole_network_trains_reloads_acts_and_exports(algo, network, layer, own, tmp_path):
    result = jaxrl.train(algo, network=network, runs_dir=str(tmp_path), **TINY, **own)
    kernels = [k for k in _leaves(result.state.params, layer) if k.ndim == 3]
    assert kernels and kernels[0].shape == (2, 16, 2)  # [seeds, in, actions]: the user's layer
    assert len(_leaves(result.state.params, "body")) == len(jax.tree.leaves(
        result.state.params))  # every parameter is the user's
    assert result.metrics.episode_return_mean.notna().any()
    stored = jaxrl.load_policy(result.run_id, runs_dir=str(tmp_path))
    obs = np.random.default_rng(0).normal(size=(3, 4)).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(stored.act(obs)), np.asarray(result.act(obs)))
    served = load_exported(result.export_policy(tmp_path / "p.jaxpolicy", platforms="cpu"))
    np.testing.assert_array_equal(np.asarray(served.call(obs)), np.asarray(result.act(obs)))


def test_a_continuous_policy_gets_its_own_log_std(monkeypatch):
    monkeypatch.setitem(NETWORKS, "two_heads", actor_critic)
    result = jaxrl.train("ppo", network="two_heads", store=False, num_envs=4, num_steps=64,
                         **{**TINY, "env": "Pendulum-v1", "total_steps": 512})
    assert result.state.params["params"]["log_std"].shape == (2, 1)
    assert _leaves(result.state.params, "user_pi")[0].shape[-1] == 1


@pytest.mark.parametrize("algo, network, fragment", [
    ("trpo", "tests.parts.test_user_network:actor_critic", "fits the policy and the value"),
    ("vpg", "tests.parts.test_user_network:actor_critic", "fits the policy and the value"),
    ("ppo", "tests.networks.nope:actor_critic", "cannot be imported"),
    ("dqn", "not_a_network", "unknown network 'not_a_network'"),
    ("dqn", lambda n: QNet(n), "is not a module-level factory"),
])
def test_what_cannot_take_a_network_is_one_line(algo, network, fragment):
    with pytest.raises(ConfigError, match=fragment) as err:
        jaxrl.train(algo, network=network, store=False, **TINY)
    assert "\n" not in str(err.value)


def test_a_recurrent_policy_and_a_wrong_output_are_one_line(monkeypatch):
    with pytest.raises(ConfigError, match="need jaxrl's own network"):
        jaxrl.train("ppo", network="tests.parts.test_user_network:actor_critic", rnn="gru",
                    store=False, **TINY)
    monkeypatch.setitem(NETWORKS, "three", lambda n: QNet(n + 1))
    with pytest.raises(ConfigError, match=r"its Q-values has shape .* must be 2"):
        jaxrl.train("dqn", network="three", store=False, learning_starts=256, **TINY)
    with pytest.raises(ConfigError, match="needs a new name"):
        register_network("default", q_network)

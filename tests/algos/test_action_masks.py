"""Action masks (`envs.spaces.Discrete.mask_size`, Jumanji's tasks): every algorithm that
declares it honours them acts, explores (warm-up included) and bootstraps among the allowed
actions only; one that cannot is refused in one line. The kit's pieces by hand, then each
learner on `envs.probes.MaskedActionProbe`, where a forbidden action pays more than any
allowed one."""

import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import envs
from envs.probes import MaskedActionProbe
from envs.spaces import Discrete
from jaxrl import algos, api
from jaxrl.algos import pqn, q_learner
from jaxrl.config import ConfigError
from jaxrl.studies.probe import judge

SPACE = Discrete(3, mask_size=3)
# flat observations [feature, mask of 3]: pattern p forbids action p; the last allows none
OBS = jnp.array([[0.0, 0, 1, 1], [0.0, 1, 0, 1], [0.0, 1, 1, 0], [0.0, 0, 0, 0]])


def test_the_space_reads_its_mask_and_allows_all_where_it_allows_none():
    allowed = np.asarray(SPACE.allowed(OBS))
    assert allowed.tolist() == [[False, True, True], [True, False, True], [True, True, False],
                                [True, True, True]]
    assert Discrete(3).allowed(OBS) is None
    with pytest.raises(ValueError, match="one entry per action"):
        Discrete(3, mask_size=2)


@pytest.mark.parametrize("eps", [0.0, 0.3, 1.0])
def test_epsilon_greedy_never_picks_a_forbidden_action(eps):
    q = jnp.tile(jnp.array([[5.0, 1.0, 2.0]]), (4, 1))  # action 0 looks best everywhere
    allowed = SPACE.allowed(OBS)
    keys = jax.random.split(jax.random.key(0), 2000)
    actions = np.asarray(jax.vmap(lambda k: q_learner.epsilon_greedy(k, q, eps, allowed))(keys))
    assert not np.any(~np.asarray(allowed)[np.arange(4), actions])
    greedy = np.asarray(q_learner.epsilon_greedy(keys[0], q, 0.0, allowed))
    assert greedy.tolist() == [2, 0, 0, 0]
    if eps == 1.0:  # uniform over the allowed: the two allowed actions of row 0 about evenly
        share = np.mean(actions[:, 0] == 1)
        assert 0.45 < share < 0.55 and set(actions[:, 3]) == {0, 1, 2}


class Table:
    """A 'network' whose output is a fixed table ``[B, A]`` (whatever the params)."""

    def __init__(self, q):
        self.q = q

    def apply(self, params, obs):
        return self.q


def test_the_bootstrap_target_selects_among_the_allowed_next_actions():
    q_next = jnp.array([[9.0, 1.0, 2.0], [9.0, 1.0, 2.0], [9.0, 1.0, 2.0], [9.0, 1.0, 2.0]])
    config = algos.get("dqn").default_config("CartPole-v1").static()
    out = q_learner.next_outputs(None, None, Table(q_next), OBS, config, space=SPACE)
    assert np.asarray(out).tolist() == [2.0, 9.0, 9.0, 9.0]
    unmasked = q_learner.next_outputs(None, None, Table(q_next), OBS, config)
    assert np.asarray(unmasked).tolist() == [9.0] * 4


def test_pqns_lambda_target_maximizes_over_the_allowed_actions():
    config = algos.get("pqn").default_config("CartPole-v1")
    hp = config.hparams().replace(q_lambda=0.0, gamma=1.0, reward_scale=1.0)
    next_obs = OBS[None, :1]  # [T=1, N=1, 4]: action 0 forbidden
    steps = pqn.Transition(obs=next_obs, action=jnp.zeros((1, 1), jnp.int32),
                           reward=jnp.zeros((1, 1)), terminated=jnp.zeros((1, 1), bool),
                           truncated=jnp.zeros((1, 1), bool), next_obs=next_obs)
    net = Table(jnp.array([[[9.0, 1.0, 2.0]]]))
    assert float(pqn.q_lambda_targets(None, hp, steps, net, SPACE)[0, 0]) == 2.0
    assert float(pqn.q_lambda_targets(None, hp, steps, net)[0, 0]) == 9.0


@pytest.mark.parametrize("algo", ["dqn", "c51", "qrdqn", "iqn", "pqn", "ppo"])
def test_a_learner_never_takes_a_forbidden_action_and_learns_the_masked_answer(algo):
    start = time.perf_counter()
    own = {"normalize_obs": False} if algo == "ppo" else {}  # a policy reads the mask as given
    result = api.train(algo, store=False, env=MaskedActionProbe.name, seeds=2,
                       total_steps=20_480, progress=False, eval_episodes=0, **own)
    # a forbidden action pays 3: any episode that took one returns more than 2
    assert np.nanmax(result.metrics["episode_return_max"]) <= 2.0 + 1e-6
    rung = judge(algo, MaskedActionProbe, result, start)
    assert rung.passed, (rung.measured, rung.expected)


def test_an_algorithm_that_cannot_honour_a_mask_is_refused_in_one_line():
    with pytest.raises(ConfigError, match=r"acer cannot honour probe:masked-action's action "
                                          r"mask .* these can: a2c, bc, c51, dqn"):
        api.train("acer", store=False, env=MaskedActionProbe.name, seeds=1, total_steps=1024,
                  progress=False)
    unable = {name for name in algos.BUILT_IN if not algos.get(name).action_masks}
    assert unable == {"acer", "ddpg", "sac", "td3"}  # a new algorithm honours masks


def test_jumanjis_masks_reach_the_action_space_and_a_per_component_mask_is_refused():
    pytest.importorskip("jumanji")
    env, params = envs.make("jumanji:Game2048-v1")
    assert env.action_space(params) == Discrete(4, mask_size=4)
    with pytest.raises(ConfigError, match="acer cannot honour jumanji:Game2048-v1's action mask"):
        api.train("acer", store=False, env="jumanji:Game2048-v1", seeds=1, total_steps=1024,
                  progress=False)
    with pytest.raises(ConfigError, match="one entry per action component"):
        api.train("ppo", store=False, env="jumanji:JobShop-v0", seeds=1, total_steps=1024,
                  progress=False)

"""Key discipline: no algorithm ever uses the same PRNG key twice.

JAX's key-reuse checker (``jax.debug_key_reuse``) reads the program training runs -- ``init``
and then two ``train_step`` calls, each jitted as in training, traced as one program -- and
raises ``KeyReuseError`` if any key is consumed twice. It is a static analysis of the jaxpr:
every branch of a ``cond`` or ``where`` and every scan body is checked whether or not it would
run, and each nested jitted call is summarized by which keys it consumes and which it passes
through, so a key reused inside one step and a key carried unchanged into the next step are
both found. Tracing is all it needs (seconds); nothing is compiled.

Each algorithm runs the config that reaches its random draws:

* on-policy, for each action kind (categorical and Gaussian policies): rollout sampling,
  minibatch shuffles (PPO, and the value-fit minibatches of VPG and
  TRPO), A2C's short rollouts;
* ACER: rollout sampling and the replay's segment sampling, at 2 replayed updates per step;
* PQN: the epsilon coin and random action of its rollouts, the minibatch shuffles;
* off-policy: the uniform random warm-up actions and the exploration rule (DQN's, C51's and
  QR-DQN's epsilon coin and random action, DDPG/TD3's Gaussian noise, SAC's policy sample),
  replay sampling (uniform for DDPG and TD3, prioritized for DQN, C51, QR-DQN and SAC), TD3's
  target-policy smoothing noise and SAC's next-action and actor-loss samples, at 2 gradient
  steps per env-step round; DDPG's and SAC's Ornstein-Uhlenbeck exploration noise too.
"""

import jax
import pytest

import envs
from jaxrl import algos

OFF_POLICY_SMALL = dict(buffer_size=64, batch_size=8, learning_starts=8, log_interval=10,
                        gradient_steps=2, hidden=(16, 16))
#: what the second train step reports (so it is the step with learning in it), by kit
KIT_REPORTS = {"onpolicy": "value_loss", "q_learner": "td_error_abs_mean",
               "offpolicy": "actor_loss"}


def default_cases(name: str) -> dict[str, tuple[str, dict, str]]:
    """An algorithm's own cases from the registry, by the kit that built it: ``{case: (env,
    overrides, metric the second step reports)}``, one per action kind it takes (CartPole-v1,
    and Pendulum-v1 as ``NAME-continuous``); none for one that brings its own train step
    (listed in `OWN_CASES`) or learns from demonstrations (its draws are its kit's: GAIL's
    policy is on-policy PPO's)."""
    algorithm = algos.get(name)
    if algorithm.imitation or algorithm.kit not in KIT_REPORTS:
        return {}
    small = dict(num_envs=2, num_steps=8) if algorithm.kit == "onpolicy" else OFF_POLICY_SMALL
    envs_by_kind = {"discrete": ("CartPole-v1", name), "continuous": ("Pendulum-v1",
                    name if algorithm.action_kinds == ("continuous",) else f"{name}-continuous")}
    return {case: (env, small, KIT_REPORTS[algorithm.kit])
            for kind, (env, case) in envs_by_kind.items() if kind in algorithm.action_kinds}


# the cases beside or instead of an algorithm's default one: more of its draws reached (the
# continuous policies, prioritized replay, n-step windows), and the algorithms with their own
# train step
OWN_CASES = {
    # the value fit's minibatch shuffles
    "vpg-continuous": ("Pendulum-v1", dict(num_envs=2, num_steps=8, value_minibatches=2),
                       "value_loss"),
    "trpo-continuous": ("Pendulum-v1", dict(num_envs=2, num_steps=8, value_minibatches=2),
                        "value_loss"),
    "dqn": ("CartPole-v1", dict(OFF_POLICY_SMALL, prioritized=True, n_step=3),
            "td_error_abs_mean"),
    "c51": ("CartPole-v1", dict(OFF_POLICY_SMALL, prioritized=True, n_step=3, num_atoms=11),
            "cross_entropy"),
    "qrdqn": ("CartPole-v1", dict(OFF_POLICY_SMALL, prioritized=True, num_quantiles=8),
              "td_error_abs_mean"),
    "iqn": ("CartPole-v1", dict(OFF_POLICY_SMALL, prioritized=True, n_step=3, double_q=True,
                                num_quantiles=8, num_target_quantiles=4,
                                num_action_quantiles=4, embedding_dim=8), "td_error_abs_mean"),
    "pqn": ("CartPole-v1", dict(num_envs=2, num_steps=8, num_minibatches=2, hidden=(16, 16)),
            "td_error_abs_mean"),
    "sac": ("Pendulum-v1", dict(OFF_POLICY_SMALL, prioritized=True), "alpha_loss"),
    # the OU exploration noise: its init draw, steps and episode-end resets
    "ddpg-ou": ("Pendulum-v1", dict(OFF_POLICY_SMALL, action_noise="ou"), "actor_loss"),
    "sac-ou": ("Pendulum-v1", dict(OFF_POLICY_SMALL, action_noise="ou"), "alpha_loss"),
    "acer": ("CartPole-v1", dict(num_envs=2, num_steps=4, buffer_segments=8, replay_start=2,
                                 replay_batch=2, replay_ratio=2, hidden=(16, 16)),
             "replay_q_loss"),
}
CASES = {**{case: spec for name in sorted(algos.BUILT_IN)
            for case, spec in default_cases(name).items()}, **OWN_CASES}


def test_every_algorithm_has_a_case():
    """A new algorithm gets its kit's case without editing this file; one with its own train
    step must be listed; only the imitation learners (their draws are their kit's) are not."""
    missing = [name for name in algos.BUILT_IN
               if name not in CASES and not algos.get(name).imitation]
    assert not missing, f"add a case to OWN_CASES for {missing}"


def two_steps(algo: str):
    """``run(key) -> metrics`` of init and two train steps, each jitted as in training."""
    env_name, overrides, _ = CASES[algo]
    algorithm = algos.get(algo.split("-")[0])
    env, params = envs.make(env_name)
    env = envs.EpisodeStatistics(env)
    config = algorithm.default_config(env_name).replace(**overrides)
    init = jax.jit(algorithm.init, static_argnums=(1, 2, 3))
    train_step = jax.jit(algorithm.train_step, static_argnums=(1, 2, 3))

    def run(key):
        state = init(key, env, params, config)
        state, _ = train_step(state, config, env, params)
        state, metrics = train_step(state, config, env, params)
        return metrics

    return run


@pytest.mark.parametrize("algo", sorted(CASES))
def test_no_key_is_used_twice(algo):
    with jax.debug_key_reuse(True):
        traced = jax.jit(two_steps(algo)).trace(jax.random.key(0))
    assert traced.out_info[CASES[algo][2]].shape == ()


def test_the_checker_finds_a_reused_key():
    """The checker is on and sees through jit: a key drawn from twice in one step, and a key
    handed unchanged to a second jitted step, both raise."""

    @jax.jit
    def twice(key):
        return jax.random.normal(key) + jax.random.normal(key)

    @jax.jit
    def forward(key):
        return jax.random.normal(key), key  # consumes its key and returns it

    def chained(key):
        _, key = forward(key)
        return forward(key)[0]

    with jax.debug_key_reuse(True):
        with pytest.raises(jax.errors.KeyReuseError):
            jax.jit(twice).trace(jax.random.key(0))
        with pytest.raises(jax.errors.KeyReuseError):
            jax.jit(chained).trace(jax.random.key(0))

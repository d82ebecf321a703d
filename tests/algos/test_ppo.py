"""PPO: the truncation switch decides the truncation probe's value, and CartPole is learned on
several seeds. (Its probe ladder is in test_probe_ladder.py, the driver's programs it runs in
tests/engine/test_programs.py.)"""

import jax
import numpy as np

import envs
from jaxrl import algos
from jaxrl.api import train


def _truncation_value(bootstrap: bool) -> np.ndarray:
    # The settings of the ladder's truncation rung, so the right-answer run shares its programs.
    result = train("ppo", env="probe:truncation", seeds=4, total_steps=40_960, progress=False,
                   eval_episodes=4, bootstrap_truncation=bootstrap)
    env, params = envs.make("probe:truncation")
    value = jax.vmap(algos.get("ppo").policy(result.config, env, params).value, (0, None))
    return np.asarray(value(result.state, np.zeros((1, 1), np.float32)))[:, 0]


def test_truncation_handling_matters():
    env, params = envs.make("probe:truncation")
    answer = env.answer(0.9, params)
    right = _truncation_value(bootstrap=True)
    wrong = _truncation_value(bootstrap=False)
    np.testing.assert_allclose(right, answer.values[0], atol=answer.value_tolerance)
    # Treating the time limit as termination: at most the start-state value (1 - g^T)/(1 - g).
    assert np.all(wrong < answer.wrong_values[0] + answer.value_tolerance)
    assert np.all(np.abs(wrong - answer.values[0]) > 10 * answer.value_tolerance)


def test_cartpole_learns_on_several_seeds():
    result = train("ppo", env="CartPole-v1", seeds=4, total_steps=150_000, progress=False)
    assert np.median(result.final_eval_return) > 200, result.final_eval_return


def test_anneal_clip_shrinks_the_clip_range_on_the_learning_rates_schedule():
    """``anneal_clip`` (reading 002's Atari PPO): the clip range the loss uses falls linearly to 0
    over ``total_steps``, by the factor an annealed learning rate falls by, and independently of
    ``anneal_lr``; without it the clip range stays put."""
    kw = dict(env="probe:value", seeds=1, total_steps=4 * 16 * 12, progress=False, store=False,
              num_envs=4, num_steps=16, hidden=(8,), clip_eps=0.2, learning_rate=1e-3)
    clip_only = train("ppo", anneal_clip=True, anneal_lr=False, **kw).metrics
    lr_only = train("ppo", anneal_lr=True, **kw).metrics  # anneal_clip off: the default
    share = np.asarray(clip_only["clip_eps"]) / 0.2
    np.testing.assert_allclose(share, np.asarray(lr_only["learning_rate"]) / 1e-3, rtol=1e-6)
    assert share[0] > 0.9 and share[-1] < 0.1 and np.all(np.diff(share) < 0)
    assert np.all(np.asarray(clip_only["learning_rate"]) == np.float32(1e-3))
    assert np.all(np.asarray(lr_only["clip_eps"]) == np.float32(0.2))

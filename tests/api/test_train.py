"""`jaxrl.train` from Python: the result object (metrics, final evaluation, act) and the diagnostic
levels."""

import numpy as np
import pytest

import jaxrl
from jaxrl.config import ConfigError


def test_python_api_result_and_diagnostic_levels():
    basic = jaxrl.train("ppo", env="CartPole-v1", seeds=2, total_steps=2048, progress=False,
                        num_envs=4, num_steps=64)
    df = basic.metrics
    assert set(df.seed) == {0, 1} and len(df) == 2 * 8
    for col in ("episode_return_mean", "episode_count", "approx_kl", "clip_fraction",
                "entropy_relative", "residual_variance", "grad_norm", "learning_rate",
                "env_steps", "env_steps_per_second", "policy_loss", "value_loss"):
        assert col in df, col
    assert "value_target_mean" not in df
    assert basic.final_eval_return.shape == (2,)
    assert np.all(basic.final_eval_return > 0)
    action = basic.act(np.zeros(4, np.float32))
    assert int(action) in (0, 1)
    # No completed episode in an update is NaN, never a fake zero.
    counts, means = df.episode_count.to_numpy(), df.episode_return_mean.to_numpy()
    assert np.all(np.isnan(means[counts == 0])) and np.all(means[counts > 0] > 0)
    debug = jaxrl.train("ppo", env="Pendulum-v1", seeds=1, total_steps=1024, progress=False,
                        num_envs=4, num_steps=64, num_minibatches=4, verbosity="full")
    for col in ("value_mean", "value_target_std", "advantage_min", "reward_max", "update_norm",
                "grad_abs_max", "log_std_mean"):
        assert col in debug.metrics, col


def test_eval_episodes_zero_compiles_no_evaluation():
    """``eval_episodes=0`` (the probe ladder's setting) skips the evaluation program: no
    evaluation rows, final returns NaN (never a fake 0); a negative count is refused."""
    r = jaxrl.train("ppo", env="probe:obs-action", seeds=2, total_steps=1024, progress=False,
                    store=False, eval_episodes=0, num_envs=4, num_steps=64)
    assert r.evaluations.empty and np.isnan(r.final_eval_return).all()
    assert len(r.metrics) == 2 * 4
    with pytest.raises(ConfigError, match="eval_episodes must be >= 0"):
        jaxrl.train("ppo", env="probe:obs-action", total_steps=1024, eval_episodes=-1,
                    store=False)

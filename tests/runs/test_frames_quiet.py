"""Evaluations where no episode finished give NaN, quietly: a policy that never ends a game is a
result, and numpy's "Mean of empty slice" warning would read as an error."""

import warnings

import numpy as np

from jaxrl.runs.frames import eval_frame, finished_mean


def test_unfinished_evaluations_are_nan_without_a_warning():
    returns = np.array([[np.nan, np.nan], [2.0, np.nan]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        means = finished_mean(returns, axis=1)
        frame = eval_frame([(3, returns)], steps_per_update=10)
    assert np.isnan(means[0]) and means[1] == 2.0
    assert np.isnan(frame.eval_return[0]) and frame.eval_return[1] == 2.0
    assert frame.env_steps.tolist() == [30, 30]

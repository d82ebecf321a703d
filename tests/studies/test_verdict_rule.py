"""The verdict rule (`jaxrl.studies.verdicts`) on the cases that made it and on what the study
(`experiments/verdict_study.py`, `benchmarks/verdict-study/`) found, at a smaller scale:
deterministic (fixed seeds), a few seconds."""

import numpy as np
import pytest

from jaxrl import stats
from jaxrl.studies import verdicts

# TRPO inverted_pendulum in baselines' configuration (benchmarks/mujoco-cpu): six seeds at
# 847-897, one at 927 and one that failed at 60, against baselines' 905.1
TRPO_PENDULUM = [858.7, 926.8, 847.4, 896.8, 853.1, 60.2, 862.3, 883.8]


def test_trpo_inverted_pendulum_is_no_longer_inside():
    low, high = stats.bootstrap_t_ci(TRPO_PENDULUM, 0.95, 2000)
    assert low < 0  # the raw bootstrap-t: a bound no return reaches
    low, high = verdicts.bounded_interval(low, high, TRPO_PENDULUM)
    assert (low, high) == (pytest.approx(60.2), pytest.approx(high)) and high <= 926.8
    assert verdicts.signed_rank_test(TRPO_PENDULUM, 905.1) == pytest.approx(0.039, abs=5e-4)
    assert verdicts.call(905.1, low, high, TRPO_PENDULUM) == \
        "inconclusive (7 of 8 seeds below reference)"
    split = verdicts.split_summary(TRPO_PENDULUM)
    assert split["succeeding"] == 7 and split["n"] == 8
    assert split["share_low"] == pytest.approx(0.4735, abs=1e-4) and split["share_high"] > 0.99
    assert split["success_mean"] == pytest.approx(np.mean(sorted(TRPO_PENDULUM)[1:]))


def test_a_printed_interval_stays_inside_the_seeds_range():
    rng = np.random.default_rng(0)
    for i in range(200):
        fail = rng.random(8) < 0.25
        x = np.where(fail, rng.normal(300, 50, 8), rng.normal(3300, 300, 8))
        low, high = verdicts.bounded_interval(*stats.bootstrap_t_ci(x, 0.95, 199, i), x)
        assert x.min() <= low <= high <= x.max()


def test_split_detection_false_alarms_and_power():
    rng = np.random.default_rng(1)
    flagged = lambda draws: np.mean([verdicts.seed_split(x) is not None for x in draws])
    assert flagged(rng.normal(100, 10, (500, 8))) < 0.03
    assert flagged(rng.gamma(4.0, 1.0, (500, 8))) < 0.06
    assert flagged(500 * rng.beta(8.0, 1.0, (500, 16))) < 0.03
    fail = rng.random((500, 8)) < 0.25
    mixed = np.where(fail, rng.normal(300, 50, (500, 8)), rng.normal(3300, 300, (500, 8)))
    some = (fail.sum(1) > 0) & (fail.sum(1) < 8)
    assert flagged(mixed[some]) > 0.95
    assert verdicts.seed_split([5.0] * 8) is None and verdicts.seed_split([1.0, 2.0]) is None


def test_split_seeds_are_never_called_inside():
    """A quarter of 8 seeds failing, the reference at the mixture's mean: the bootstrap-t
    interval alone says "inside" almost always; the rule says "split" (or inconclusive)."""
    rng = np.random.default_rng(2)
    truth = 0.25 * 300 + 0.75 * 3300
    calls = []
    for i in range(150):
        fail = np.zeros(8, bool)
        fail[rng.choice(8, 2, replace=False)] = True  # two of eight fail
        x = np.where(fail, rng.normal(300, 50, 8), rng.normal(3300, 300, 8))
        low, high = verdicts.bounded_interval(*stats.bootstrap_t_ci(x, 0.95, 199, i), x)
        calls.append(verdicts.call(truth, low, high, x).split(" ")[0])
    assert calls.count("reference") == 0 and calls.count("split") > 0.9 * len(calls)


def test_a_side_needs_the_interval_and_the_rank_test():
    up = 10.0 + np.arange(8.0)
    assert verdicts.call(5.0, 10.0, 17.0, up) == "above reference"
    assert verdicts.call(20.0, 10.0, 17.0, up) == "below reference"
    # the interval above, but the two seeds below are the farthest: the rank test finds nothing
    mixed = np.array([-20.0, -15.0, 10, 11, 12, 13, 14, 15])
    assert verdicts.signed_rank_test(mixed, 5.0) > 0.05
    assert verdicts.call(5.0, 5.5, 14.0, mixed) == "inconclusive (2 of 8 seeds below reference)"
    assert verdicts.call(12.5, 9.0, 14.0, up) == "reference inside CI"


def test_the_small_estimators():
    assert verdicts.clopper_pearson(0, 8) == (0.0, pytest.approx(0.3694, abs=1e-4))
    assert verdicts.clopper_pearson(8, 8) == (pytest.approx(0.6306, abs=1e-4), 1.0)
    assert verdicts.cvar([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]) == 1.5  # worst 2 of 8
    assert verdicts.cvar([3.0]) == 3.0
    assert verdicts.signed_rank_test([5.0] * 8, 5.0) == 1.0
    assert verdicts.signed_rank_test(np.arange(8.0) + 10, 0.0) == pytest.approx(2 / 256)

"""Statistics across seeds (jaxrl.stats) against known values and SciPy references."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from scipy import stats as st

from jaxrl import stats

# --------------------------------------------------------------------------- IQM / mean / std


def test_iqm_of_1_to_8_is_middle_half():
    # sorted 1..8, drop 2 from each end -> mean(3, 4, 5, 6) = 4.5
    assert stats.iqm(np.arange(1, 9)) == 4.5
    assert stats.iqm([8, 1, 7, 2, 6, 3, 5, 4]) == 4.5  # order does not matter


@pytest.mark.parametrize(
    "x, expected",
    [
        # n < 4: floor(n/4) = 0, nothing trimmed -> plain mean
        ([0.0, 0.0, 9.0], 3.0),
        ([5.0], 5.0),
        # n = 5: drop 1 from each end, keep 3 -> mean(0, 1, 2)
        ([100.0, 0.0, 2.0, 1.0, 0.0], 1.0),
        # n = 6: drop 1 from each end, keep 4 -> mean(2, 3, 4, 5)
        ([1.0, 2.0, 3.0, 4.0, 5.0, 100.0], 3.5),
        # n = 7: drop 1 from each end, keep 5 -> mean(1, 2, 3, 4, 5)
        ([-1000.0, 1.0, 2.0, 3.0, 4.0, 5.0, 1000.0], 3.0),
        # n = 9: drop 2 from each end, keep 5 -> mean(3..7)
        ([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0], 5.0),
    ],
)
def test_iqm_trimming_for_sizes_not_divisible_by_4(x, expected):
    # Documented behaviour (scipy.stats.trim_mean(x, 0.25)): drop floor(n/4) from each end.
    assert stats.iqm(x) == pytest.approx(expected)


def test_iqm_matches_trim_mean_drops_nonfinite_and_flattens():
    rng = np.random.default_rng(0)
    for n in range(1, 20):
        x = rng.normal(size=n)
        assert stats.iqm(x) == pytest.approx(st.trim_mean(x, 0.25))
    x = np.array([1.0, np.nan, 2.0, np.inf, 3.0, -np.inf, 4.0])
    assert stats.iqm(x) == 2.5
    assert stats.iqm(np.arange(1.0, 9.0).reshape(4, 2)) == 4.5
    assert math.isnan(stats.iqm([])) and math.isnan(stats.iqm([np.nan, np.inf]))


def test_mean_and_std_are_nan_safe():
    x = [1.0, 2.0, np.nan, 3.0, 4.0, np.inf]
    assert stats.mean(x) == 2.5
    assert stats.std(x) == pytest.approx(np.std([1, 2, 3, 4], ddof=1))
    assert stats.std(x, ddof=0) == pytest.approx(np.std([1, 2, 3, 4]))
    assert math.isnan(stats.mean([])) and math.isnan(stats.mean([np.nan]))
    assert math.isnan(stats.std([])) and math.isnan(stats.std([7.0]))  # n <= ddof
    assert stats.std([7.0], ddof=0) == 0.0


# --------------------------------------------------------------------------- Welch's t-test


def test_welch_hand_computed():
    # a: mean 2.5, s^2 = 5/3;  b: mean 6, s^2 = 10
    # se^2 = (5/3)/4 + 10/5 = 29/12;  t = -3.5 / sqrt(29/12)
    # df = (29/12)^2 / ((5/12)^2/3 + 2^2/4) = 2523/457
    t, p = stats.welch_t_test([1, 2, 3, 4], [2, 4, 6, 8, 10])
    t_hand = -3.5 / math.sqrt(29 / 12)
    df_hand = 2523 / 457
    assert t == pytest.approx(t_hand, rel=1e-12)
    assert t == pytest.approx(-2.251436, abs=1e-6)
    assert p == pytest.approx(2 * st.t.sf(abs(t_hand), df_hand), rel=1e-12)
    assert 0.06 < p < 0.08


def test_welch_matches_scipy():
    rng = np.random.default_rng(1)
    for na, nb, shift, scale in [(5, 5, 0.0, 1.0), (3, 12, 1.0, 4.0), (32, 20, -0.3, 0.2)]:
        a = rng.normal(size=na)
        b = rng.normal(shift, scale, size=nb)
        ref = st.ttest_ind(a, b, equal_var=False)
        t, p = stats.welch_t_test(a, b)
        assert t == pytest.approx(ref.statistic, rel=1e-10)
        assert p == pytest.approx(ref.pvalue, rel=1e-10)


def test_welch_edge_cases():
    t, p = stats.welch_t_test([1.0, 1.0, 1.0], [2.0, 2.0, 2.0])  # like scipy: -inf, 0
    assert t == -math.inf and p == 0.0
    t, p = stats.welch_t_test([1.0, 1.0], [1.0, 1.0])
    assert math.isnan(t) and math.isnan(p)
    # non-finite values are dropped
    assert stats.welch_t_test([1, 2, 3, 4, np.nan], [2, 4, 6, 8, 10, np.inf]) == pytest.approx(
        stats.welch_t_test([1, 2, 3, 4], [2, 4, 6, 8, 10])
    )
    with pytest.raises(ValueError, match="welch_t_test needs >= 2"):
        stats.welch_t_test([1.0], [1.0, 2.0])


# --------------------------------------------------------------------------- probability of improvement


def _poi_bruteforce(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.mean((a[:, None] > b[None, :]) + 0.5 * (a[:, None] == b[None, :])))


def test_probability_of_improvement_hand_examples():
    assert stats.probability_of_improvement([5, 6, 7], [1, 2, 3, 4]) == 1.0
    assert stats.probability_of_improvement([1, 2, 3, 4], [5, 6, 7]) == 0.0
    assert stats.probability_of_improvement([1, 2, 3], [1, 2, 3]) == 0.5
    assert stats.probability_of_improvement([2, 2], [2, 2, 2]) == 0.5
    # pairs (a vs b): 1:(0,0) 2:(.5,.5) 3:(1,1) -> 3/6
    assert stats.probability_of_improvement([1, 2, 3], [2, 2]) == 0.5
    # 3:(1,.5,0) 4:(1,1,0) -> 3.5/6
    assert stats.probability_of_improvement([3, 4], [1, 3, 5]) == pytest.approx(3.5 / 6)


def test_probability_of_improvement_matches_mann_whitney():
    rng = np.random.default_rng(2)
    a = rng.integers(0, 6, size=9).astype(float)  # many ties
    b = rng.integers(1, 7, size=13).astype(float)
    u = st.mannwhitneyu(a, b, alternative="two-sided").statistic  # U of the first sample
    assert stats.probability_of_improvement(a, b) == pytest.approx(u / (9 * 13))
    assert stats.probability_of_improvement(a, b) == pytest.approx(_poi_bruteforce(a, b))
    assert stats.probability_of_improvement(b, a) == pytest.approx(1 - _poi_bruteforce(a, b))


def test_probability_of_improvement_averages_over_tasks():
    rng = np.random.default_rng(3)
    a = rng.normal(size=(6, 3))
    b = rng.normal(0.5, 1.0, size=(4, 3))  # different run count, same tasks
    expected = np.mean([_poi_bruteforce(a[:, j], b[:, j]) for j in range(3)])
    assert stats.probability_of_improvement(a, b) == pytest.approx(expected)
    # task 0: A always better (1), task 1: identical (0.5) -> 0.75
    a2 = np.array([[10.0, 1.0], [11.0, 2.0]])
    b2 = np.array([[0.0, 1.0], [1.0, 2.0]])
    assert stats.probability_of_improvement(a2, b2) == 0.75
    with pytest.raises(ValueError, match="task columns"):
        stats.probability_of_improvement(a, b[:, :2])


def test_probability_of_improvement_ci():
    rng = np.random.default_rng(4)
    a, b = rng.normal(0.5, 1, size=20), rng.normal(0, 1, size=20)
    poi = stats.probability_of_improvement(a, b)
    lo, hi = stats.probability_of_improvement_ci(a, b, reps=1000, seed=0)
    assert 0.0 <= lo <= poi <= hi <= 1.0 and hi - lo > 0.05
    assert stats.probability_of_improvement_ci(a, b, reps=1000, seed=0) == (lo, hi)
    assert stats.probability_of_improvement_ci([5, 6, 7], [1, 2], reps=200) == (1.0, 1.0)
    lo2, hi2 = stats.probability_of_improvement_ci(a.reshape(10, 2), b.reshape(10, 2), reps=500)
    assert lo2 <= stats.probability_of_improvement(a.reshape(10, 2), b.reshape(10, 2)) <= hi2


# --------------------------------------------------------------------------- bootstrap CIs


def test_bootstrap_matches_definition():
    # percentile bootstrap, all index rows drawn at once from default_rng(seed)
    x = np.random.default_rng(5).normal(size=16)
    idx = np.random.default_rng(7).integers(0, 16, size=(500, 16))
    boot = x[idx].mean(axis=1)
    expected = tuple(np.quantile(boot, [0.05, 0.95]))
    got = stats.bootstrap_ci(x, "mean", confidence=0.9, reps=500, seed=7)
    assert got == pytest.approx(expected, rel=1e-12)


def test_bootstrap_deterministic_contains_estimate_and_seed_matters():
    x = np.random.default_rng(6).normal(size=32)
    for statistic, point in [("iqm", stats.iqm(x)), ("mean", stats.mean(x))]:
        ci = stats.bootstrap_ci(x, statistic, seed=3)
        assert ci == stats.bootstrap_ci(x, statistic, seed=3)
        assert ci != stats.bootstrap_ci(x, statistic, seed=4)
        assert ci[0] < point < ci[1]
    # wider confidence -> wider interval (same resamples)
    lo90, hi90 = stats.bootstrap_ci(x, confidence=0.9)
    lo99, hi99 = stats.bootstrap_ci(x, confidence=0.99)
    assert lo99 < lo90 and hi90 < hi99
    # constant data -> degenerate interval; non-finite values are dropped
    assert stats.bootstrap_ci([2.0] * 5, reps=50) == (2.0, 2.0)
    assert stats.bootstrap_ci(np.r_[x, np.nan, np.inf], seed=1) == stats.bootstrap_ci(x, seed=1)


def test_bootstrap_ci_shrinks_with_more_data():
    rng = np.random.default_rng(8)
    widths = []
    for n in (8, 32, 128):
        lo, hi = stats.bootstrap_ci(rng.normal(size=n), "iqm", reps=1000)
        widths.append(hi - lo)
    assert widths[0] > widths[1] > widths[2]
    assert widths[0] / widths[2] > 2.5  # ~ sqrt(128/8) = 4


def test_bootstrap_mean_ci_coverage():
    # 200 experiments of n=30 normal draws: the 95% percentile CI should cover the true mean
    # roughly 95% of the time (percentile bootstrap under-covers slightly at small n).
    rng = np.random.default_rng(9)
    data = rng.normal(1.0, 2.0, size=(200, 30))
    covered = 0
    for i, x in enumerate(data):
        lo, hi = stats.bootstrap_ci(x, "mean", reps=1000, seed=i)
        covered += lo <= 1.0 <= hi
    assert 0.90 <= covered / 200 <= 0.99


def test_callable_statistic_with_and_without_axis():
    x = np.random.default_rng(10).normal(size=25)
    ci_vec = stats.bootstrap_ci(x, np.median, reps=300, seed=2)  # np.median takes axis=
    ci_row = stats.bootstrap_ci(x, lambda v: float(np.median(v)), reps=300, seed=2)  # row by row
    assert ci_vec == pytest.approx(ci_row)
    lo, hi = ci_vec
    assert lo < np.median(x) < hi


def test_stratified_single_task_equals_plain_bootstrap():
    x = np.random.default_rng(11).normal(size=32)
    for statistic in ("iqm", "mean"):
        plain = stats.bootstrap_ci(x, statistic, seed=5)
        assert stats.stratified_bootstrap_ci(x, statistic, seed=5) == plain
        assert stats.stratified_bootstrap_ci(x[:, None], statistic, seed=5) == plain


def test_stratified_bootstrap_resamples_within_tasks():
    # task 0 always scores 0, task 1 always 1, 3 runs each: every stratified resample keeps
    # three 0s and three 1s, so the mean is exactly 0.5; pooling the tasks would not.
    scores = np.array([[0.0, 1.0]] * 3)
    assert stats.stratified_bootstrap_ci(scores, "mean", reps=500) == (0.5, 0.5)
    lo, hi = stats.bootstrap_ci(scores, "mean", reps=500)
    assert lo < 0.5 < hi
    # ragged tasks via NaN padding: statistic pools all resampled scores
    rng = np.random.default_rng(12)
    m = rng.normal(size=(10, 4))
    m[7:, 2] = np.nan
    lo, hi = stats.stratified_bootstrap_ci(m, "iqm", reps=500)
    assert lo < stats.iqm(m) < hi


def test_vectorized_bootstrap_is_fast():
    x = np.random.default_rng(13).normal(size=32)
    stats.bootstrap_ci(x)  # warm up
    t0 = time.perf_counter()
    stats.bootstrap_ci(x, "iqm", reps=2000)
    stats.bootstrap_ci(x, "mean", reps=2000)
    assert time.perf_counter() - t0 < 0.5  # milliseconds normally; generous under CI load


# --------------------------------------------------------------------------- summaries


def test_summarize():
    x = np.random.default_rng(14).normal(3.0, 1.0, size=20)
    s = stats.summarize(x, reps=1000, seed=1)
    assert set(s) == {
        "n", "mean", "std", "iqm", "iqm_ci_low", "iqm_ci_high",
        "mean_ci_low", "mean_ci_high", "ci_method",
    }  # fmt: skip
    assert s["n"] == 20
    assert s["mean"] == pytest.approx(np.mean(x)) and s["std"] == pytest.approx(np.std(x, ddof=1))
    assert s["iqm"] == stats.iqm(x)
    assert (s["iqm_ci_low"], s["iqm_ci_high"]) == stats.bootstrap_ci(x, "iqm", reps=1000, seed=1)
    assert (s["mean_ci_low"], s["mean_ci_high"]) == stats.bootstrap_ci(x, "mean", reps=1000, seed=1)
    assert s["ci_method"] == "stratified percentile bootstrap, 1000 resamples, 95%, seed 1"
    assert stats.summarize(x)["ci_method"] == (
        "stratified percentile bootstrap, 2000 resamples, 95%, seed 0"
    )
    m = np.random.default_rng(15).normal(size=(5, 3))
    sm = stats.summarize(m, confidence=0.9, reps=300)
    assert sm["n"] == 15 and "over 3 tasks" in sm["ci_method"] and "90%" in sm["ci_method"]
    assert (sm["iqm_ci_low"], sm["iqm_ci_high"]) == stats.stratified_bootstrap_ci(m, "iqm", 0.9, 300, 0)


def test_compare():
    rng = np.random.default_rng(16)
    a, b = rng.normal(1.0, 1.0, size=12), rng.normal(0.0, 1.0, size=10)
    c = stats.compare(a, b, reps=500, seed=2)
    assert c["n_a"] == 12 and c["n_b"] == 10
    assert c["iqm_a"] == stats.iqm(a) and c["iqm_b"] == stats.iqm(b)
    assert (c["iqm_a_ci_low"], c["iqm_a_ci_high"]) == stats.bootstrap_ci(a, reps=500, seed=2)
    assert (c["iqm_b_ci_low"], c["iqm_b_ci_high"]) == stats.bootstrap_ci(b, reps=500, seed=2)
    assert (c["welch_t"], c["welch_p"]) == stats.welch_t_test(a, b)
    assert c["prob_improvement"] == stats.probability_of_improvement(a, b)
    assert (c["prob_improvement_ci_low"], c["prob_improvement_ci_high"]) == (
        stats.probability_of_improvement_ci(a, b, reps=500, seed=2)
    )
    assert c["prob_improvement_ci_low"] <= c["prob_improvement"] <= c["prob_improvement_ci_high"]
    assert "500 resamples" in c["ci_method"]


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: stats.bootstrap_ci([]), "empty"),
        (lambda: stats.bootstrap_ci([np.nan, np.inf]), "no finite"),
        (lambda: stats.stratified_bootstrap_ci(np.ones((0, 3))), "empty"),
        (lambda: stats.stratified_bootstrap_ci([[1.0, np.nan], [2.0, np.nan]]), "task column 1"),
        (lambda: stats.stratified_bootstrap_ci(np.ones((2, 2, 2))), "1-D"),
        (lambda: stats.bootstrap_ci([1.0, 2.0], confidence=0.0), "confidence"),
        (lambda: stats.bootstrap_ci([1.0, 2.0], confidence=1.0), "confidence"),
        (lambda: stats.bootstrap_ci([1.0, 2.0], confidence=1.5), "confidence"),
        (lambda: stats.bootstrap_ci([1.0, 2.0], confidence=-0.1), "confidence"),
        (lambda: stats.bootstrap_ci([1.0, 2.0], reps=0), "reps"),
        (lambda: stats.bootstrap_ci([1.0, 2.0], reps=2.5), "reps"),
        (lambda: stats.bootstrap_ci([1.0, 2.0], statistic="median"), "statistic"),
        (lambda: stats.bootstrap_ci([1.0, 2.0], seed="zero"), "seed"),
        (lambda: stats.summarize([]), "empty"),
        (lambda: stats.summarize([1.0], reps=-1), "reps"),
        (lambda: stats.compare([], [1.0]), "empty"),
        (lambda: stats.compare([1.0], [1.0], confidence=2), "confidence"),
        (lambda: stats.probability_of_improvement([], [1.0]), "empty"),
        (lambda: stats.probability_of_improvement_ci([1.0], [1.0], reps=0), "reps"),
        (lambda: stats.welch_t_test([], [1.0, 2.0]), ">= 2"),
    ],
)
def test_bad_input_raises_one_line_value_error(call, match):
    with pytest.raises(ValueError, match=match) as err:
        call()
    assert "\n" not in str(err.value)


def test_ci_of_1000_seeds_covers_the_true_iqm():
    """N(0, 1) is symmetric, so its true IQM is 0; the bootstrap CI over 1,000 draws covers it."""
    x = np.random.default_rng(123).normal(0.0, 1.0, size=1000)
    low, high = stats.bootstrap_ci(x, statistic="iqm", reps=2000, seed=0)
    assert low < 0.0 < high and high - low < 0.2


def test_the_point_estimates_and_t_distribution_are_scipys_to_the_bit():
    """`stats` computes the IQM and the t distribution without importing ``scipy.stats`` (1.6-1.9
    s, paid by every process that records a run), and gets the very bits scipy.stats does:
    the same partition order summed, the same special functions."""
    from scipy import stats as scipy_stats

    rng = np.random.default_rng(3)
    for n in (1, 2, 3, 4, 5, 7, 8, 9, 16, 33):
        x = rng.standard_normal(n) * 100
        x[rng.random(n) < 0.2] = 1.5  # ties
        assert stats.iqm(x) == float(scipy_stats.trim_mean(x, 0.25))
        rows = rng.standard_normal((50, n))
        got = stats._trimmed_mean(rows, axis=-1)
        assert np.array_equal(got, scipy_stats.trim_mean(rows, 0.25, axis=-1))
    for df in (1, 2, 7, 15, 31.7, 1e3):
        for q in (0.6, 0.9, 0.975, 0.995):
            assert stats._t_quantile(q, df) == float(scipy_stats.t.ppf(q, df))
        for t in (0.0, 0.3, 2.1, 9.0):
            assert stats._t_tail(t, df) == float(scipy_stats.t.sf(t, df))


def test_recording_a_run_does_not_import_scipy_stats(tmp_path):
    """A run's report needs the IQM and the t interval only: ``scipy.stats`` stays unimported."""
    import subprocess
    import sys

    code = ("import sys, numpy as np; from jaxrl import stats; x = np.arange(9.0); "
            "stats.iqm(x); stats.t_interval(x); stats.bootstrap_ci(x, reps=10); "
            "stats.welch_t_test(x, x + 1); print('scipy.stats' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"

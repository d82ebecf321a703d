"""A verdict against a published reference from per-seed scores ``[n]``, one that does not
overreach when the seeds split (NumPy/SciPy only).

Three readings of the same seeds must agree before a direction is called:

* **the interval**: the bootstrap-t interval of the mean (`stats.bootstrap_t_ci`) *bounded* by
  the seeds' own range (`bounded_interval`): the mean of scores that lie in ``[min, max]``
  is in ``[min, max]`` too, and every seed is a possible return, so the printed interval
  never reaches a return no seed (and perhaps no policy) can take;
* **a rank test**: the two-sided Wilcoxon signed-rank test of the seeds against the
  reference (`signed_rank_test`), which counts seeds below and above rather than averaging
  them, so one failed seed cannot drag a cluster of good ones across the line;
* **the shape**: whether the seeds split into a failing and a succeeding group (`seed_split`),
  reported as what it is: the share that succeeds with its exact (Clopper-Pearson) interval,
  and the mean among those that succeed; or the split a file records from what the seeds'
  policies do, where their scores blur it (`labelled_split`, `jaxrl.studies.bench.split_evidence`).

`call` combines them: the interval and the rank test agreeing on a side give ``above`` or
``below``; the interval holding the reference with the rank test finding nothing gives
``inside``, unless the seeds split (``split``); any disagreement is ``inconclusive (k of n
seeds below)``. `experiments/verdict_study.py` measured the rule against the bootstrap-t
interval alone on normal, skewed, bounded and bimodal seeds (`benchmarks/verdict-study/`), and
`tests/studies/test_verdict_rule.py` pins what it found.
"""

from __future__ import annotations

import math

import numpy as np

from jaxrl import stats

ALPHA = 0.05  # the rank test's level (two-sided), beside a 95% interval
#: a split needs the gap between its groups to exceed this many pooled within-group standard
#: deviations (benchmarks/verdict-study: at 8 seeds none of 1,000 normal samples is flagged,
#: 4.0% of gamma(4) and 3.4% of bounded ones; 99% of samples with a failing seed among them)
SPLIT_GAP = 5.0
SPLIT_SCALE = 0.25  # ... and this share of the largest magnitude: failing is far from succeeding
CVAR_SHARE = 0.25  # the lower tail: the mean of the worst quarter of seeds


def bounded_interval(low: float, high: float, x) -> tuple[float, float]:
    """``(low, high)`` clipped to the finite values of ``x``'s range ``[min, max]``."""
    v = stats._finite(x)
    return float(np.clip(low, v.min(), v.max())), float(np.clip(high, v.min(), v.max()))


def signed_rank_test(x, reference: float) -> float:
    """Two-sided p-value of the Wilcoxon signed-rank test of the finite values of ``x``
    against ``reference`` (exact for up to 50 nonzero differences; seeds equal to the
    reference are dropped, as Wilcoxon's own rule does); 1.0 when every seed equals it."""
    d = stats._finite(x) - float(reference)
    d = d[d != 0.0]
    if d.size == 0:
        return 1.0
    return float(stats._scipy_stats().wilcoxon(d, alternative="two-sided").pvalue)


def clopper_pearson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval of a proportion: ``k`` successes of ``n``."""
    beta = stats._scipy_stats().beta
    alpha = 1.0 - confidence
    low = 0.0 if k == 0 else float(beta.ppf(alpha / 2, k, n - k + 1))
    high = 1.0 if k == n else float(beta.ppf(1 - alpha / 2, k + 1, n - k))
    return low, high


def cvar(x, share: float = CVAR_SHARE) -> float:
    """The lower tail: the mean of the ``ceil(share * n)`` lowest finite values of ``x``."""
    v = np.sort(stats._finite(x))
    return float(v[:max(1, math.ceil(share * v.size))].mean())


def seed_split(x) -> int | None:
    """How many seeds form the low group of a split, or None when the seeds do not split.

    Sorted, the seeds split at the cut whose gap, between the highest of the low group and
    the lowest of the high group, is largest against the pooled within-group standard
    deviation; they split when that gap exceeds `SPLIT_GAP` such deviations and
    `SPLIT_SCALE` of the largest magnitude. A group may be one seed (one failed run)."""
    v = np.sort(stats._finite(x))
    n, best, cut = v.size, 0.0, None
    if n < 3:
        return None
    for i in range(1, n):
        low, high = v[:i], v[i:]
        gap = v[i] - v[i - 1]
        within = ((low - low.mean()) ** 2).sum() + ((high - high.mean()) ** 2).sum()
        spread = math.sqrt(within / (n - 2))
        ratio = gap / spread if spread > 0 else math.inf
        if gap > SPLIT_SCALE * np.abs(v).max() and ratio > SPLIT_GAP and ratio > best:
            best, cut = ratio, i
    return cut


def split_summary(x, confidence: float = 0.95) -> dict | None:
    """A split's numbers: ``{"succeeding": k, "n": n, "share_low", "share_high"}`` (the share
    that succeeds with its exact interval) and ``success_mean`` (the high group's mean); None
    when the seeds do not split."""
    v = np.sort(stats._finite(x))
    cut = seed_split(v)
    if cut is None:
        return None
    return _succeeding(v[cut:], int(v.size), confidence)


def _succeeding(high_group: np.ndarray, n: int, confidence: float) -> dict:
    """A split's numbers from its succeeding seeds' scores ``[k]`` among ``n``."""
    k = int(high_group.size)
    low, high = clopper_pearson(k, n, confidence)
    return {"succeeding": k, "n": n, "share_low": low, "share_high": high,
            "success_mean": float(high_group.mean())}


def labelled_split(x, failing, by: str, confidence: float = 0.95) -> dict | None:
    """`split_summary`'s numbers for a split seen in what the seeds' policies do rather than in
    their scores ``x`` ``[n]``: ``failing``, the indices into ``x`` of the seeds that fail
    (`jaxrl.studies.bench.split_evidence`), and ``by`` what they were told apart (``"posture"``).
    Non-finite seeds are left out of both groups; None when either group is then empty."""
    v = np.asarray(x, dtype=float)
    low_group = np.zeros(v.size, dtype=bool)
    low_group[list(failing)] = True
    ok = np.isfinite(v)
    succeeding = v[ok & ~low_group]
    if not succeeding.size or not (ok & low_group).any():
        return None
    return {**_succeeding(succeeding, int(ok.sum()), confidence), "by": by}


def call(reference: float, low: float, high: float, x, split: bool | None = None,
         alpha: float = ALPHA, split_by: str | None = None) -> str:
    """The verdict of the seeds ``x`` (finite, at least 8) against ``reference`` given the
    bounded interval ``(low, high)`` (of confidence ``1 - alpha``) and the rank test at
    ``alpha``: ``above reference``, ``below reference``, ``reference inside CI``, ``split (k of
    n seeds below reference)`` or ``inconclusive (k of n seeds below reference)``. ``split``:
    whether the seeds split, where the caller knows (else `seed_split` finds out); ``split_by``:
    what told the groups apart when it was not the scores (``split (k of n seeds below
    reference; by posture)``)."""
    v = stats._finite(x)
    below, above = int((v < reference).sum()), int((v > reference).sum())
    interval = "above" if low > reference else "below" if high < reference else "inside"
    rank = "none"
    if signed_rank_test(v, reference) < alpha:
        rank = "below" if below > above else "above"
    counted = f"{below} of {v.size} seeds below reference"
    if interval == rank:
        return f"{interval} reference"
    if interval == "inside" and rank == "none":
        is_split = seed_split(v) is not None if split is None else split
        how = f"; by {split_by}" if split_by else ""
        return f"split ({counted}{how})" if is_split else "reference inside CI"
    return f"inconclusive ({counted})"


def method(confidence: float = 0.95, reps: int = 2000, min_seeds: int = 8) -> str:
    """How a benchmark verdict is reached, for the report."""
    return (f"the {100.0 * confidence:g}% bootstrap-t (studentized) interval of the mean over "
            f"seeds ({reps} resamples) bounded by the seeds' range, and a two-sided Wilcoxon "
            f"signed-rank test against the reference at {ALPHA:g}: a side only where both find "
            "it, \"inconclusive\" with the count of seeds under the reference where they "
            "disagree, \"split\" in place of \"inside\" where the seeds split into failing "
            "and succeeding groups; "
            f"at least {min_seeds} seeds (jaxrl.studies.verdicts, benchmarks/verdict-study)")

"""Statistics across seeds (NumPy/SciPy). Issue 4 extends this with bootstrap CIs and tests."""

from __future__ import annotations

import numpy as np
from scipy import stats as _st


def iqm(x) -> float:
    """Interquartile mean: the mean of the middle 50% (25% trimmed from each end)."""
    x = np.asarray(x, dtype=np.float64).ravel()
    x = x[np.isfinite(x)]
    if x.size == 0:
        return float("nan")
    return float(_st.trim_mean(x, 0.25))

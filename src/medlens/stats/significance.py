"""Tests across models and cells: sign test, Wilcoxon signed-rank test, Holm adjustment.

Both tests take paired differences (tuned − base per cell, one per dimension, task or pair),
drop the zero ones as Wilcoxon's original method does, and return exact small-sample p-values
together with ``min_p``, the smallest p-value any outcome could give for that number of
non-zero differences (2 · 0.5ⁿ, two-sided): with 7 dimensions no result can reach p < 0.0156,
which a reader needs to know before reading "not significant".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

EXACT_WILCOXON_MAX_N = 50
"""Without ties, scipy's exact null distribution is used up to this many differences."""
PERMUTATION_MAX_N = 13
"""With tied |differences|, all 2ⁿ sign flips are enumerated up to this n (8,192 flips)."""


def _nonzero(differences: Sequence[float] | np.ndarray) -> tuple[np.ndarray, int]:
    values = np.asarray(differences, dtype=float).ravel()
    if np.isnan(values).any():
        raise ValueError("differences contain NaN")
    # rounding keeps float noise (0.1 + 0.2 − 0.3) from counting as a difference
    values = np.round(values, 12)
    nonzero = values[values != 0]
    return nonzero, int(values.size - nonzero.size)


def smallest_p(n: int) -> float:
    """Smallest two-sided p-value a sign or signed-rank test of n non-zero differences can give."""
    return 1.0 if n <= 0 else float(min(1.0, 2.0 * 0.5**n))


def sign_test(differences: Sequence[float] | np.ndarray) -> dict[str, Any]:
    """Two-sided exact sign test (binomial, p = ½) over the non-zero differences."""
    from scipy.stats import binomtest

    nonzero, zeros = _nonzero(differences)
    n = int(nonzero.size)
    positive = int((nonzero > 0).sum())
    p = 1.0 if n == 0 else float(binomtest(positive, n, 0.5).pvalue)
    return {
        "test": "sign",
        "n": n,
        "zeros": zeros,
        "positive": positive,
        "negative": n - positive,
        "p": p,
        "min_p": smallest_p(n),
        "method": "exact",
    }


def wilcoxon_test(differences: Sequence[float] | np.ndarray) -> dict[str, Any]:
    """Two-sided Wilcoxon signed-rank test over the non-zero differences.

    Exact null distribution without ties (n ≤ 50); with tied magnitudes, all 2ⁿ sign flips
    enumerated (n ≤ 13); otherwise the normal approximation with tie correction.
    """
    from scipy.stats import PermutationMethod, wilcoxon

    nonzero, zeros = _nonzero(differences)
    n = int(nonzero.size)
    out: dict[str, Any] = {"test": "wilcoxon", "n": n, "zeros": zeros, "min_p": smallest_p(n)}
    if n == 0:
        return {**out, "statistic": None, "p": 1.0, "method": "none"}
    ties = np.unique(np.abs(nonzero)).size < n
    method: Any
    if not ties and n <= EXACT_WILCOXON_MAX_N:
        method, name = "exact", "exact"
    elif ties and n <= PERMUTATION_MAX_N:
        method, name = PermutationMethod(n_resamples=2**n), "exact (all sign flips)"
    else:
        method, name = "asymptotic", "normal approximation"
    result = wilcoxon(nonzero, zero_method="wilcox", alternative="two-sided", method=method)
    return {**out, "statistic": float(result.statistic), "p": float(result.pvalue), "method": name}

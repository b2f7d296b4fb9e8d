"""The Wilson score intervals of a proportion, with and without continuity correction.

The lowest interval module: ``intervals`` (0/1 cells), ``bounded`` (Wilson on the observed
range) and ``paired`` (Newcombe's difference) all build on it, so it imports nothing of
medlens.
"""

from __future__ import annotations

import numpy as np


def wilson(
    successes: np.ndarray, n: np.ndarray, level: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval with continuity correction (Newcombe 1998, method 4) of k in n.

    The same bounds as scipy's ``binomtest(k, n).proportion_ci(method="wilsoncc")``. The
    correction keeps coverage ≥ 95% at every n ≥ 5 and p in [.02, .98], where the plain Wilson
    interval dips to 83% (n = 5, p = .036) and 92% (n = 50, p = .02).
    """
    from scipy.special import ndtri

    k, n = np.asarray(successes, float), np.asarray(n, float)
    z = float(ndtri(1 - (1 - level) / 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / n
        q = 1 - p
        denominator = 2 * (n + z * z)
        root_lo = np.sqrt(np.maximum(z * z - 2 - 1 / n + 4 * p * (n * q + 1), 0.0))
        root_hi = np.sqrt(np.maximum(z * z + 2 - 1 / n + 4 * p * (n * q - 1), 0.0))
        lo = (2 * n * p + z * z - 1 - z * root_lo) / denominator
        hi = (2 * n * p + z * z + 1 + z * root_hi) / denominator
    lo = np.where(k <= 0, 0.0, lo)
    hi = np.where(k >= n, 1.0, hi)
    return np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)


def wilson_plain(
    successes: np.ndarray, n: np.ndarray, level: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval without correction (statsmodels ``proportion_confint`` "wilson"):
    the building block of Newcombe's interval of a difference (``paired.difference_ci``)."""
    from scipy.special import ndtri

    k, n = np.asarray(successes, float), np.asarray(n, float)
    z = float(ndtri(1 - (1 - level) / 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        p = k / n
        denominator = 1 + z * z / n
        center = (p + z * z / (2 * n)) / denominator
        half = z / denominator * np.sqrt(np.maximum(p * (1 - p), 0.0) / n + z * z / (4 * n * n))
    return np.clip(center - half, 0.0, 1.0), np.clip(center + half, 0.0, 1.0)

"""Screening operating points of a binary score: sensitivity at a fixed specificity and
specificity at a fixed sensitivity, under resample weights (vectorised over resamples).

The ROC points are those of every distinct threshold (an item is called positive when its
score is ≥ the threshold) plus the point (0, 0) above the highest score: scikit-learn's
``roc_curve(..., drop_intermediate=False)``. Sensitivity at specificity ≥ s is the largest
true-positive rate among points whose false-positive rate is ≤ 1 − s (always defined: the
(0, 0) point qualifies); specificity at sensitivity ≥ t is the largest 1 − FPR among points
whose TPR ≥ t (the lowest threshold calls everything positive, TPR 1). A resample without
positives or without negatives gives NaN.
"""

from __future__ import annotations

import numpy as np

_TOLERANCE = 1e-12
"""Rates are ratios of sums of integer weights: a target met exactly must count as met."""


def roc_rates(
    score: np.ndarray, positive: np.ndarray, weights: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(resamples × points) TPR and FPR, highest threshold first, with (0, 0) prepended."""
    order = np.argsort(-score, kind="stable")
    sorted_score = score[order]
    starts = np.flatnonzero(np.r_[True, sorted_score[1:] != sorted_score[:-1]])
    w = weights[:, order]
    tp = np.cumsum(np.add.reduceat(w * positive[order], starts, axis=1), axis=1)
    fp = np.cumsum(np.add.reduceat(w * ~positive[order], starts, axis=1), axis=1)
    zero = np.zeros((w.shape[0], 1))
    tp, fp = np.hstack([zero, tp]), np.hstack([zero, fp])
    with np.errstate(invalid="ignore", divide="ignore"):
        return tp / tp[:, -1:], fp / fp[:, -1:]


def sensitivity_at_specificity(
    score: np.ndarray, positive: np.ndarray, weights: np.ndarray, specificity: float
) -> np.ndarray:
    """(resamples,) the best sensitivity among thresholds with specificity ≥ `specificity`."""
    tpr, fpr = roc_rates(score, positive, weights)
    allowed = (1.0 - fpr) >= specificity - _TOLERANCE
    best = np.where(allowed, tpr, -np.inf).max(axis=1)
    return np.where(np.isfinite(tpr[:, -1]) & np.isfinite(fpr[:, -1]), best, np.nan)


def specificity_at_sensitivity(
    score: np.ndarray, positive: np.ndarray, weights: np.ndarray, sensitivity: float
) -> np.ndarray:
    """(resamples,) the best specificity among thresholds with sensitivity ≥ `sensitivity`."""
    tpr, fpr = roc_rates(score, positive, weights)
    allowed = tpr >= sensitivity - _TOLERANCE
    best = np.where(allowed, 1.0 - fpr, -np.inf).max(axis=1)
    return np.where(np.isfinite(tpr[:, -1]) & np.isfinite(fpr[:, -1]), best, np.nan)

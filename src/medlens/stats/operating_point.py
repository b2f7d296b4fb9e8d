"""Sensitivity at a fixed specificity (and specificity at a fixed sensitivity), with an interval
that knows the threshold was chosen from the same data (``medlens subgroups``' screening points).

The point: the threshold admitting the most positives while at most ⌊n₀(1 − s)⌋ negatives score
at or above it (scikit-learn's ROC points, the largest TPR with FPR ≤ 1 − s).

Two things move it, and the interval combines them as Newcombe's hybrid (MOVER) intervals do,
each side √(binomial part² + threshold part²):

- **the positives**: given the threshold, the positives above it are binomial: the Wilson
  interval of TPR at the positives' effective number (shared images: n₁ over the cluster-robust
  design effect of the indicator "above the threshold");
- **the threshold**: at the true threshold the number of negatives above it is Binomial(n₀,
  1 − s) (for any score distribution), so it lies between that binomial's 2.5% and 97.5%
  quantiles 95% of the time (on n₀/deff₀ effective negatives with shared images); the
  sensitivities at those two false-positive budgets, read off the same
  ROC curve, bound what the threshold's error does to the point. Distribution-free: no density
  of the scores is estimated.

Never zero-width (Wilson's part has a width at 0 and 1). Specificity at a sensitivity is the same
with the classes' roles exchanged (scores negated). No interval, and a note that says why, with
fewer than :data:`MIN_CLASS` positives or negatives, or too few negatives to place the threshold
(:func:`placeable`: every negative may lie below the true threshold, and then nothing bounds the
sensitivity from below; at specificity 0.9 that takes 36 negatives, at sensitivity 0.9 36
positives for the reverse). The percentile bootstrap it replaces re-chose the
threshold in each resample of a discrete curve: 28–92% in small or low-prevalence groups, often
[1, 1] (issue 45); ``bench/coverage_round4.py`` checks this one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

MIN_CLASS = 5
"""Positives and negatives a screening interval needs (fewer: the point alone, with a note)."""
_TOLERANCE = 1e-9


@dataclass(frozen=True)
class OperatingPoint:
    """One screening point: its value, interval (None: see `note`) and class counts."""

    value: float | None
    ci: list[float] | None
    positives: int
    negatives: int
    note: str | None = None


def sensitivity_at(
    score: np.ndarray, positive: np.ndarray, target: float, clusters: np.ndarray | None = None,
    level: float = 0.95,
) -> OperatingPoint:  # fmt: skip
    """Sensitivity at specificity ≥ `target` with its interval (module docstring)."""
    positive = np.asarray(positive, bool)
    value, ci, note = _point(np.asarray(score, float), positive, target, clusters, level,
                             ("positives", "negatives"))  # fmt: skip
    return OperatingPoint(value, ci, int(positive.sum()), int((~positive).sum()), note)


def specificity_at(
    score: np.ndarray, positive: np.ndarray, target: float, clusters: np.ndarray | None = None,
    level: float = 0.95,
) -> OperatingPoint:  # fmt: skip
    """Specificity at sensitivity ≥ `target`: the same with the classes' roles exchanged
    (negatives, scored by −score, are what the threshold is chosen to admit)."""
    positive = np.asarray(positive, bool)
    value, ci, note = _point(-np.asarray(score, float), ~positive, target, clusters, level,
                             ("negatives", "positives"))  # fmt: skip
    return OperatingPoint(value, ci, int(positive.sum()), int((~positive).sum()), note)


def _point(
    score: np.ndarray, positive: np.ndarray, target: float, clusters: np.ndarray | None,
    level: float, names: tuple[str, str],
) -> tuple[float | None, list[float] | None, str | None]:  # fmt: skip
    """(TPR at FPR ≤ 1 − target, its interval, why there is none): the module docstring's
    construction; `names` are what the caller calls the counted class and the other one."""
    n1, n0 = int(positive.sum()), int((~positive).sum())
    if n1 == 0 or n0 == 0:
        return None, None, f"no {names[0] if n1 == 0 else names[1]}: no operating point"
    curve = _Curve(score, positive)
    budget = math.floor(n0 * (1 - target) + _TOLERANCE)
    value = curve.tpr_within(budget)
    if min(n1, n0) < MIN_CLASS:
        return (
            value,
            None,
            f"fewer than {MIN_CLASS} {names[0] if n1 < MIN_CLASS else names[1]}: no interval",
        )
    above = score >= curve.threshold_within(budget)
    effect1 = design_effect(above[positive].astype(float), _part(clusters, positive))
    effect0 = design_effect(above[~positive].astype(float), _part(clusters, ~positive))
    if not placeable(n0 / effect0, target, level):
        needed = math.ceil(math.log((1 - level) / 2) / math.log(target))
        return value, None, (f"fewer than {needed} {'effective ' if effect0 > 1 else ''}"
                             f"{names[1]}: the threshold at {target:g} cannot be placed")  # fmt: skip
    w_lo, w_hi = _wilson(value, n1 / effect1, _z(level))
    few, many = false_positive_range(n0, 1 - target, effect0, level)
    t_lo, t_hi = curve.tpr_within(few), curve.tpr_within(many)
    low = value - math.hypot(value - w_lo, value - t_lo)
    high = value + math.hypot(w_hi - value, t_hi - value)
    return value, [max(low, 0.0), min(high, 1.0)], None


def placeable(negatives: float, target: float, level: float = 0.95) -> bool:
    """Whether the negatives can place the threshold: unless target^n₀ ≤ (1 − level)/2, every
    negative may lie below the true threshold with a chance above the tail, and nothing in the
    data bounds how far above the highest negative it lies (so nothing bounds the sensitivity
    from below): at specificity 0.9 that takes 36 negatives, at 0.95, 72."""
    return bool(target**negatives <= (1 - level) / 2 + _TOLERANCE)


class _Curve:
    """The ROC steps of `score` for `positive`: thresholds high to low, with the counts of
    positives and negatives at or above each."""

    def __init__(self, score: np.ndarray, positive: np.ndarray) -> None:
        order = np.argsort(-score, kind="stable")
        ranked = score[order]
        last = np.r_[ranked[1:] != ranked[:-1], True]  # the last item of each tied run
        self.thresholds = np.r_[np.inf, ranked[last]]
        self.true = np.r_[0, np.cumsum(positive[order])[last]]
        self.false = np.r_[0, np.cumsum(~positive[order])[last]]
        self.positives = max(int(positive.sum()), 1)

    def _within(self, budget: int) -> int:
        return int(np.flatnonzero(self.false <= budget)[-1])

    def tpr_within(self, budget: int) -> float:
        """The largest TPR among thresholds with at most `budget` negatives at or above."""
        return float(self.true[self._within(budget)] / self.positives)

    def threshold_within(self, budget: int) -> float:
        return float(self.thresholds[self._within(budget)])


def false_positive_range(
    negatives: int, rate: float, effect: float, level: float = 0.95
) -> tuple[int, int]:
    """Where the count of negatives at or above the true threshold (Binomial(n₀, 1 − s)) lies
    with probability `level`: exact binomial quantiles on the effective n₀/deff negatives,
    scaled back to n₀, widened by one count on each side."""
    from medlens.stats.bootstrap import binomial_quantile

    effective = max(1, math.floor(negatives / effect + _TOLERANCE))
    scale = negatives / effective
    tail = (1 - level) / 2
    n, p = np.array([effective]), np.array([rate])
    low = float(binomial_quantile(tail, n, p)[0]) * scale
    high = float(binomial_quantile(1 - tail, n, p)[0]) * scale
    # one step beyond each quantile: the ROC is a step function of the count, and the true
    # threshold lies anywhere between two steps (a continuity correction)
    return max(math.floor(low + _TOLERANCE) - 1, 0), min(
        math.ceil(high - _TOLERANCE) + 1, negatives
    )


def design_effect(indicator: np.ndarray, clusters: np.ndarray | None) -> float:
    """Cluster-robust over binomial variance of a proportion (≥ 1; 1 without shared images).
    When the indicator does not vary, n over Kish's effective images (every image counts once)."""
    if clusters is None or indicator.size < 2:
        return 1.0
    codes = np.unique(np.asarray(clusters).astype(str), return_inverse=True)[1].ravel()
    sizes = np.bincount(codes).astype(float)
    if sizes.max() <= 1:
        return 1.0
    p = float(indicator.mean())
    if p * (1 - p) <= 0:
        return float(indicator.size / (indicator.size**2 / (sizes**2).sum()))
    residual = np.bincount(codes, indicator - p)
    groups = residual.size
    robust = groups / (groups - 1) * float((residual**2).sum()) / indicator.size**2
    return max(1.0, robust / (p * (1 - p) / indicator.size))


def _part(clusters: np.ndarray | None, mask: np.ndarray) -> np.ndarray | None:
    return None if clusters is None else np.asarray(clusters)[mask]


def _wilson(p: float, n: float, z: float) -> tuple[float, float]:
    """Wilson's score interval of a proportion p on n (possibly effective) trials."""
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z / denominator * math.sqrt(max(p * (1 - p), 0.0) / n + z * z / (4 * n * n))
    return centre - half, centre + half


def _z(level: float) -> float:
    from scipy.special import ndtri

    return float(ndtri(1 - (1 - level) / 2))

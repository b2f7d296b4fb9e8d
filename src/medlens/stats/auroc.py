"""The interval of an AUROC (one-vs-rest macro; binary: the positive class's), wherever medlens
prints one: a report's ``auroc`` metric and ``medlens subgroups``'s per-group AUROC and gaps.

:func:`auroc_ci`: Newcombe's (2006) score-type interval ("method 5"): the θ with
(Â − θ)² ≤ z²·V(θ), where V(θ) = θ(1 − θ)/(mn)·[1 + N*((1 − θ)/(2 − θ) + θ/(1 + θ))],
N* = (m + n)/2 − 1, is Hanley & McNeil's variance at the hypothesised θ with Newcombe's
modification (m positives, n negatives). Being a score interval it is asymmetric near 1 and
keeps a width at a perfect separation. With shared images m and n are effective counts: each
over its class's design effect, DeLong's (1988) variance terms of the class (each positive's
(V₁₀ − Â)/m, each negative's (V₀₁ − Â)/n) made cluster-robust (summed by image, CR1) over the
same without clusters; and where DeLong's cluster-robust variance at Â exceeds V(Â), V is
scaled up by their ratio (the model's shape is Hanley & McNeil's, not every curve's).

The first version took the larger of the bootstrap's and Hanley & McNeil's SE at Â on the logit scale: it covered,
but Hanley & McNeil's variance at Â overstates a binormal AUROC's, and the logit interval near
1 stretched far below: 2–15× the width needed at AUROC 0.96–0.99 (issue 45; this one 1.3–2×,
``bench/coverage_round4.py``). Multi-class (macro) AUROCs take the counts of the class with
the fewest pairs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class AurocEstimate:
    """An AUROC with its standard errors (AUROC scale) and what they rest on."""

    value: float
    se_delong: float
    """Cluster-robust DeLong SE."""

    positives: float
    negatives: float
    """Effective counts (over each class's design effect) of the class with the fewest pairs."""

    def interval(self, z: float = 1.959963984540054) -> list[float]:
        """Newcombe's score interval at normal quantile `z` (module docstring)."""
        model = newcombe_variance(self.value, self.positives, self.negatives)
        excess = max(1.0, self.se_delong**2 / model) if model > 0 else 1.0
        return newcombe_interval(self.value, self.positives, self.negatives, z, excess)


def placements(score: np.ndarray, positive: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """DeLong's placement values: for each positive, the share of negatives scored below it
    (ties ½); for each negative, the share of positives scored above it (ties ½)."""
    pos, neg = np.sort(score[positive]), np.sort(score[~positive])
    x, y = score[positive], score[~positive]
    below = np.searchsorted(neg, x, "left") + 0.5 * (
        np.searchsorted(neg, x, "right") - np.searchsorted(neg, x, "left")
    )
    above = (
        pos.size
        - np.searchsorted(pos, y, "right")
        + 0.5 * (np.searchsorted(pos, y, "right") - np.searchsorted(pos, y, "left"))
    )
    return below / max(neg.size, 1), above / max(pos.size, 1)


def auroc_estimate(
    matrix: np.ndarray, truth: np.ndarray, clusters: np.ndarray | None = None
) -> AurocEstimate | None:
    """The (macro) AUROC of probability `matrix` (items × classes) for class codes `truth`,
    with DeLong's SE and the effective counts of `clusters`; None when a class scored lacks
    positives or negatives."""
    classes = [1] if matrix.shape[1] == 2 else list(range(matrix.shape[1]))
    influence = np.zeros(truth.size)
    values, counts = [], []
    for c in classes:
        positive = truth == c
        n1, n0 = int(positive.sum()), int((~positive).sum())
        if n1 == 0 or n0 == 0:
            return None
        v10, v01 = placements(matrix[:, c], positive)
        area = float(v10.mean())
        terms = np.zeros(truth.size)
        terms[positive], terms[~positive] = (v10 - area) / n1, (v01 - area) / n0
        influence += terms
        values.append(area)
        counts.append(
            (n1, n0, _effect(terms, positive, clusters), _effect(terms, ~positive, clusters))
        )
    n1, n0, effect1, effect0 = min(counts, key=lambda c: c[0] * c[1])
    se = _cluster_robust(influence / len(classes), clusters)
    return AurocEstimate(float(np.mean(values)), se, n1 / effect1, n0 / effect0)


def _effect(terms: np.ndarray, members: np.ndarray, clusters: np.ndarray | None) -> float:
    """Design effect of one class's DeLong terms: their cluster-robust variance over the same
    without clusters (≥ 1); n over Kish's effective images when the terms do not vary."""
    if clusters is None:
        return 1.0
    part, where = terms[members], np.asarray(clusters)[members]
    plain = _cluster_robust(part, None)
    if not plain > 0:
        return max(_kish_effect(where), 1.0)
    return min(max(1.0, (_cluster_robust(part, where) / plain) ** 2), float(part.size))


def auroc_ci(
    matrix: np.ndarray, truth: np.ndarray, clusters: np.ndarray | None = None, z: float = 1.96
) -> tuple[float | None, list[float] | None]:
    """The AUROC and its interval (module docstring); (None, None) when a class lacks positives
    or negatives."""
    found = auroc_estimate(matrix, truth, clusters)
    if found is None:
        return None, None
    return found.value, found.interval(z)


def newcombe_variance(theta: float, positives: float, negatives: float) -> float:
    """Newcombe's (2006) variance of an AUROC at θ: Hanley & McNeil's with N* = (m + n)/2 − 1."""
    star = (positives + negatives) / 2 - 1
    spread = 1 + star * ((1 - theta) / (2 - theta) + theta / (1 + theta))
    return theta * (1 - theta) / (positives * negatives) * spread


def newcombe_interval(
    area: float, positives: float, negatives: float, z: float, factor: float = 1.0
) -> list[float]:
    """Newcombe's (2006) method 5 for an AUROC (module docstring), by root finding; `factor`
    scales the variance (where DeLong's cluster-robust variance at Â exceeds the model's)."""
    from scipy.optimize import brentq

    def excess(theta: float) -> float:
        return (area - theta) ** 2 - z * z * factor * newcombe_variance(theta, positives, negatives)

    edge, inner = 1e-12, min(max(area, 1e-9), 1 - 1e-9)  # V is 0 at 0 and 1: stay inside
    low = 0.0 if excess(edge) <= 0 else brentq(excess, edge, inner)
    high = 1.0 if excess(1 - edge) <= 0 else brentq(excess, inner, 1 - edge)
    return [float(low), float(high)]


def _kish_effect(clusters: np.ndarray | None) -> float:
    """n / Kish's effective images: the design effect when every image is alike (nothing to
    estimate it from)."""
    if clusters is None:
        return 1.0
    sizes = np.unique(np.asarray(clusters).astype(str), return_counts=True)[1].astype(float)
    return float(sizes.sum() / (sizes.sum() ** 2 / (sizes**2).sum()))


def hanley_mcneil_se(area: float, positives: int, negatives: int) -> float:
    """Hanley & McNeil's (1982) SE of an AUROC, of the area kept half a pair from 0 and 1."""
    pairs = positives * negatives
    a = _kept(area, pairs)
    q1, q2 = a / (2 - a), 2 * a * a / (1 + a)
    variance = (
        a * (1 - a) + (positives - 1) * (q1 - a * a) + (negatives - 1) * (q2 - a * a)
    ) / pairs
    return float(np.sqrt(max(variance, 0.0)))


def _cluster_robust(influence: np.ndarray, clusters: np.ndarray | None) -> float:
    """√(G/(G − 1)·Σ_g (Σ_{i∈g} ψᵢ)²): CR1 over images (each item its own image without)."""
    if clusters is None:
        totals = influence
    else:
        codes = np.unique(np.asarray(clusters).astype(str), return_inverse=True)[1].ravel()
        totals = np.bincount(codes, influence)
    groups = totals.size
    if groups < 2:
        return float("inf")
    return float(np.sqrt(groups / (groups - 1) * float(np.sum(totals**2))))


def _kept(value: float, pairs: int) -> float:
    return (value * pairs + 0.5) / (pairs + 1)

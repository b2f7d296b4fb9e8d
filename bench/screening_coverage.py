"""Coverage of the intervals `medlens subgroups` prints, by simulation (binormal scores).

Run: ``PYTHONPATH=src python bench/screening_coverage.py [--reps 200] [--n 200]``. Negatives
score N(0, 1), positives N(d, 1) (30% positives, one item per image); the true sensitivity at
specificity s is 1 − Φ(Φ⁻¹(s) − d). Prints the share of 95% intervals covering the truth for
sensitivity at specificity 0.9, and for the largest accuracy gap of two groups whose true accuracies differ
by 0, 0.1 or 0.2 (the interval of the named pair's signed difference, as `subgroups` prints).
"""

from __future__ import annotations

import argparse

import numpy as np
from scipy import stats

from medlens.scoring.corpus_metrics import item_weights
from medlens.scoring.screening import sensitivity_at_specificity


def _interval(draws: np.ndarray) -> tuple[float, float]:
    low, high = np.percentile(draws[np.isfinite(draws)], [2.5, 97.5])
    return float(low), float(high)


def sensitivity_coverage(
    reps: int, n: int, d: float, spec: float, rng: np.random.Generator
) -> float:
    truth = 1 - stats.norm.cdf(stats.norm.ppf(spec) - d)
    covered = 0
    for _ in range(reps):
        positive = rng.random(n) < 0.3
        score = rng.normal(0, 1, n) + d * positive
        weights = np.vstack(item_weights(np.arange(n).astype(str)))
        low, high = _interval(sensitivity_at_specificity(score, positive, weights, spec))
        covered += low <= truth <= high
    return covered / reps


def gap_coverage(reps: int, n: int, gap: float, rng: np.random.Generator) -> float:
    rates = (0.7, 0.7 + gap)
    covered = 0
    for _ in range(reps):
        group = np.arange(n) % 2
        correct = (rng.random(n) < np.where(group == 0, rates[0], rates[1])).astype(float)
        weights = np.vstack(item_weights(np.arange(n).astype(str)))
        per_group = np.column_stack([(weights[:, group == g] @ correct[group == g])
                                     / weights[:, group == g].sum(axis=1) for g in (0, 1)])  # fmt: skip
        observed = [correct[group == g].mean() for g in (0, 1)]
        top = int(np.argmax(observed))  # the pair named on the full sample, as subgroups does
        low, high = _interval(per_group[:, top] - per_group[:, 1 - top])
        covered += low <= (gap if top == 1 else -gap) <= high
    return covered / reps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--n", type=int, default=200)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    for d in (1.0, 2.0):
        share = sensitivity_coverage(args.reps, args.n, d, 0.9, rng)
        print(f"sensitivity at specificity 0.9, d={d:g}, n={args.n}: coverage {share:.3f}")
    for gap in (0.0, 0.1, 0.2):
        share = gap_coverage(args.reps, args.n, gap, rng)
        print(
            f"largest accuracy gap, two groups, true gap {gap:g}, n={args.n}: coverage {share:.3f}"
        )


if __name__ == "__main__":
    main()

"""Coverage of `medlens subgroups`' per-group AUROC interval and of its largest-gap interval
with many groups, by simulation through the command's own functions (issue 33 item 3).

Run: ``PYTHONPATH=src python bench/subgroup_coverage.py [--reps 200]``.

- Per-group AUROC: negatives score N(0, 1), positives N(d, 1), 30% positives, one item per
  image; the true AUROC is Φ(d/√2). Printed: the share of 95% intervals that cover it.
- Largest gap: K groups of `--group-n` items each, true accuracies all 0.7 (true largest gap 0)
  or evenly spread over 0.6–0.8 (true gap 0.2). Printed: the share of intervals covering the
  true largest gap (max − min of the true accuracies), the quantity the line is read as.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

import numpy as np
from scipy import stats

from medlens.analysis.subgroup_gaps import largest_gap
from medlens.analysis.subgroups import group_auroc
from medlens.scoring.corpus_metrics import item_weights


def auroc_coverage(reps: int, n: int, d: float, rng: np.random.Generator) -> float:
    truth = float(stats.norm.cdf(d / np.sqrt(2)))
    covered = 0
    for _ in range(reps):
        positive = rng.random(n) < 0.3
        score = rng.normal(0, 1, n) + d * positive
        probs = {"matrix": np.column_stack([-score, score]), "truth": positive.astype(int)}
        _, ci = group_auroc(probs, np.arange(n))
        covered += ci is not None and ci[0] <= truth <= ci[1]
    return covered / reps


def gap_coverage(
    reps: int, rates: Sequence[float], group_n: int, rng: np.random.Generator
) -> float:
    k = len(rates)
    truth = max(rates) - min(rates)
    groups = np.repeat([f"g{i}" for i in range(k)], group_n).astype(object)
    names = sorted(set(groups.tolist()))
    weights = item_weights(np.arange(groups.size).astype(str))
    covered = 0
    for _ in range(reps):
        correct = (rng.random(groups.size) < np.repeat(rates, group_n)).astype(float)
        cells = {
            name: {"small": False, "accuracy": float(correct[groups == name].mean())}
            for name in names
        }
        gap = largest_gap(names, groups, weights, cells, "accuracy", correct, {})
        assert gap is not None and gap["ci"] is not None
        covered += gap["ci"][0] <= truth <= gap["ci"][1]
    return covered / reps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--group-n", type=int, default=100)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    for n in (30, 50, 100, 300):
        for d in (1.0, 2.0, 3.0):
            share = auroc_coverage(args.reps, n, d, rng)
            print(f"group AUROC, n={n}, d={d:g} (AUROC {stats.norm.cdf(d / np.sqrt(2)):.3f}): "
                  f"coverage {share:.3f}")  # fmt: skip
    for k in (2, 5, 10):
        for spread in (0.0, 0.2):
            rates = np.linspace(0.7 - spread / 2, 0.7 + spread / 2, k).tolist()
            share = gap_coverage(args.reps, rates, args.group_n, rng)
            print(f"largest accuracy gap, {k} groups × {args.group_n}, true gap {spread:g}: "
                  f"coverage {share:.3f}")  # fmt: skip


if __name__ == "__main__":
    main()

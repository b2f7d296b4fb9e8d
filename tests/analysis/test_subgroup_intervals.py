"""The intervals of `medlens subgroups` after their coverage was simulated (issue 33 item 3,
issue 45): the largest gap's interval is simultaneous over every pair of groups, the per-group
AUROC's is Newcombe's score interval (``bench/coverage_round4.py``)."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import roc_auc_score
from statsmodels.stats.proportion import confint_proportions_2indep

from medlens.analysis.subgroup_gaps import largest_gap, range_interval
from medlens.analysis.subgroups import group_auroc
from medlens.scoring.corpus_metrics import item_weights


def _gap(correct: np.ndarray, groups: np.ndarray) -> dict[str, object]:
    names = sorted(set(groups.tolist()))
    cells = {n: {"small": False, "accuracy": float(correct[groups == n].mean())} for n in names}
    weights = item_weights(np.arange(groups.size).astype(str))
    gap = largest_gap(names, groups, weights, cells, "accuracy", correct, {})
    assert gap is not None
    return gap


def test_two_groups_get_the_two_proportion_wald_interval_of_their_gap() -> None:
    rng = np.random.default_rng(0)
    groups = np.repeat(["a", "b"], 400).astype(object)
    correct = (rng.random(800) < np.repeat([0.6, 0.75], 400)).astype(float)
    gap = _gap(correct, groups)
    low, high = confint_proportions_2indep(
        int(correct[400:].sum()), 400, int(correct[:400].sum()), 400, method="wald"
    )
    assert gap["value"] == pytest.approx(correct[400:].mean() - correct[:400].mean())
    assert gap["ci"] == pytest.approx([low, high], abs=0.01)
    assert "simultaneous over the 1 pair" in str(gap["ci_method"])


def test_many_groups_of_equal_truth_get_an_interval_that_reaches_zero() -> None:
    rng = np.random.default_rng(1)
    groups = np.repeat([f"g{i}" for i in range(10)], 100).astype(object)
    correct = (rng.random(1000) < 0.7).astype(float)
    gap = _gap(correct, groups)
    means = [correct[groups == f"g{i}"].mean() for i in range(10)]
    assert gap["value"] == pytest.approx(max(means) - min(means)) and gap["value"] > 0.1
    assert gap["ci"][0] == 0.0 and gap["ci"][1] > gap["value"]  # the old pair interval: > 0
    assert "simultaneous over the 45 pairs" in str(gap["ci_method"])


def test_range_interval_widens_with_the_number_of_pairs() -> None:
    rng = np.random.default_rng(2)
    draws = rng.normal(0, 0.05, (1000, 6))
    point = np.array([0.5, 0.52, 0.55, 0.6, 0.62, 0.7])
    two = range_interval(point[[0, 5]], draws[:, [0, 5]] + point[[0, 5]])
    six = range_interval(point, draws + point)
    assert two is not None and six is not None
    assert six[1] > two[1] and six[0] < two[0]


def test_the_group_auroc_is_scikit_learns_and_its_interval_keeps_a_width_at_auroc_1() -> None:
    rng = np.random.default_rng(3)
    positive = rng.random(80) < 0.3
    score = rng.normal(0, 1, 80) + 1.5 * positive
    probs = {"matrix": np.column_stack([-score, score]), "truth": positive.astype(int)}
    value, ci = group_auroc(probs, np.arange(80))
    assert value == pytest.approx(roc_auc_score(positive, score))
    assert ci is not None and ci[0] < value < ci[1]
    separated = np.where(positive, 10.0, 0.0) + rng.normal(0, 0.1, 80)
    perfect = {"matrix": np.column_stack([-separated, separated]), "truth": positive.astype(int)}
    value, ci = group_auroc(perfect, np.arange(80))
    assert value == 1.0 and ci is not None and ci[0] < 0.97 and ci[1] <= 1.0


def test_a_larger_group_gets_a_narrower_auroc_interval() -> None:
    rng = np.random.default_rng(4)
    widths = []
    for n in (60, 600):
        positive = rng.random(n) < 0.3
        score = rng.normal(0, 1, n) + 1.0 * positive
        probs = {"matrix": np.column_stack([-score, score]), "truth": positive.astype(int)}
        _, ci = group_auroc(probs, np.arange(n))
        assert ci is not None
        widths.append(ci[1] - ci[0])
    assert widths[1] < widths[0] / 2

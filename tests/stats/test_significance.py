"""medlens.stats.significance: sign and Wilcoxon signed-rank tests equal scipy's, zeros dropped, min p."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from medlens.stats.multiplicity import adjust as adjust_p
from medlens.stats.significance import sign_test, smallest_p, wilcoxon_test


def test_seven_dimensions_cannot_go_below_0_0156() -> None:
    all_up = [0.05, 0.02, 0.11, 0.07, 0.01, 0.03, 0.09]
    sign, rank = sign_test(all_up), wilcoxon_test(all_up)
    assert sign["n"] == rank["n"] == 7
    assert sign["min_p"] == rank["min_p"] == pytest.approx(0.015625)
    # the most extreme outcome reaches exactly the smallest attainable p
    assert sign["p"] == pytest.approx(0.015625)
    assert rank["p"] == pytest.approx(0.015625)
    assert round(smallest_p(7), 4) == 0.0156


@pytest.mark.parametrize("seed", range(6))
def test_sign_test_equals_scipy_binomtest_without_the_zeros(seed: int) -> None:
    rng = np.random.default_rng(seed)
    d = rng.integers(-3, 4, size=int(rng.integers(5, 40))).astype(float) / 10
    result = sign_test(d)
    nonzero = d[d != 0]
    expected = stats.binomtest(int((nonzero > 0).sum()), nonzero.size, 0.5).pvalue
    assert result["n"] == nonzero.size and result["zeros"] == int((d == 0).sum())
    assert result["p"] == pytest.approx(expected, rel=1e-12)
    assert result["positive"] + result["negative"] == nonzero.size


@pytest.mark.parametrize("n", [5, 12, 30, 50])
def test_wilcoxon_without_ties_equals_scipy_exact(n: int) -> None:
    rng = np.random.default_rng(n)
    d = rng.normal(0.03, 0.1, size=n)
    result = wilcoxon_test(np.concatenate([d, np.zeros(3)]))
    expected = stats.wilcoxon(d, method="exact")
    assert result["n"] == n and result["zeros"] == 3 and result["method"] == "exact"
    assert result["p"] == pytest.approx(expected.pvalue, rel=1e-12)
    assert result["statistic"] == pytest.approx(expected.statistic)


def signed_rank_by_enumeration(d: np.ndarray) -> float:
    """Two-sided p of min(T+, T−) over all 2ⁿ sign assignments of the midranks (ties kept)."""
    ranks = stats.rankdata(np.abs(d))
    observed = min(ranks[d > 0].sum(), ranks[d < 0].sum())
    total = ranks.sum()
    extreme = 0
    for signs in itertools.product((0, 1), repeat=d.size):
        plus = float(np.dot(signs, ranks))
        extreme += min(plus, total - plus) <= observed + 1e-9
    return extreme / 2**d.size


def test_wilcoxon_with_tied_magnitudes_is_exact_by_enumeration() -> None:
    d = np.array([0.1, 0.1, -0.2, 0.3, 0.3, 0.3, 0.0, -0.1, 0.4, 0.2])
    result = wilcoxon_test(d)
    assert result["n"] == 9 and result["zeros"] == 1
    assert result["p"] == pytest.approx(signed_rank_by_enumeration(d[d != 0]), rel=1e-9)
    assert result["min_p"] == pytest.approx(2 / 2**9)


def test_large_tied_samples_use_scipy_normal_approximation() -> None:
    rng = np.random.default_rng(3)
    d = rng.integers(-2, 4, size=80).astype(float)
    result = wilcoxon_test(d)
    nonzero = d[d != 0]
    expected = stats.wilcoxon(nonzero, method="asymptotic")
    assert result["method"] == "normal approximation"
    assert result["p"] == pytest.approx(expected.pvalue, rel=1e-12)


def test_all_zero_differences_give_p_one_and_float_noise_counts_as_zero() -> None:
    for result in (sign_test([0.0, 0.0]), wilcoxon_test([0.0, 0.0])):
        assert result["n"] == 0 and result["p"] == 1.0 and result["min_p"] == 1.0
    assert sign_test([0.1 + 0.2 - 0.3, 0.5])["n"] == 1
    with pytest.raises(ValueError, match="NaN"):
        sign_test([0.1, float("nan")])


def test_holm_adjustment_equals_statsmodels() -> None:
    from statsmodels.stats.multitest import multipletests

    p = np.array([0.01, 0.04, 0.03, 0.5, 0.002])
    assert np.allclose(adjust_p(p), multipletests(p, method="holm")[1])
    # Holm by hand: sorted p times (m − i), running maximum, capped at 1
    order = np.argsort(p)
    by_hand = np.maximum.accumulate(np.minimum(1, p[order] * (p.size - np.arange(p.size))))
    assert np.allclose(adjust_p(p)[order], by_hand)
    assert adjust_p([]).size == 0

"""The estimator and its interval against a hand computation."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from medlens.items import aipw


def test_estimate_and_interval_by_hand() -> None:
    # stratum 1: 10 units, 3 drawn; stratum 2: 5 units, 2 drawn; 20 items in all
    s1 = aipw.StratumSample(10, np.array([1.0, 0.0, 2.0]), np.array([0.8, 0.3, 1.5]))
    s2 = aipw.StratumSample(5, np.array([1.0, 1.0]), np.array([0.6, 0.9]))
    found = aipw.design_estimate(20, 11.0, [s1, s2], tuning=1.0)
    # residuals: s1 (0.2, −0.3, 0.5), s2 (0.4, 0.1)
    total = 11.0 + 10 / 3 * 0.4 + 5 / 2 * 0.5
    assert found.estimate == pytest.approx(total / 20)
    var1 = np.var([0.2, -0.3, 0.5], ddof=1)
    var2 = np.var([0.4, 0.1], ddof=1)
    variance = 10**2 * (1 - 3 / 10) * var1 / 3 + 5**2 * (1 - 2 / 5) * var2 / 2
    assert found.se == pytest.approx(np.sqrt(variance) / 20)
    assert found.df == 3
    half = stats.t.ppf(0.975, 3) * found.se
    lo, hi = found.interval()
    # the envelope of the t interval and Wilson's at Korn & Graubard's effective n (statsmodels)
    from statsmodels.stats.proportion import proportion_confint

    p = total / 20
    n_eff = p * (1 - p) / found.se**2 * (stats.norm.ppf(0.975) / stats.t.ppf(0.975, 3)) ** 2
    w_lo, w_hi = proportion_confint(p * n_eff, n_eff, method="wilson")
    assert lo == pytest.approx(max(0.0, min(p - half, w_lo)))
    assert hi == pytest.approx(min(1.0, max(p + half, w_hi)))


def test_tuning_minimises_the_estimated_variance() -> None:
    rng = np.random.default_rng(0)
    f = rng.random(40)
    y = (rng.random(40) < f).astype(float)
    strata = [aipw.StratumSample(400, y, f)]
    best = aipw.tuned(strata)
    se = {lam: aipw.design_estimate(400, 200.0, strata, lam).se for lam in np.linspace(0, 1, 101)}
    assert aipw.design_estimate(400, 200.0, strata, best).se <= min(se.values()) + 1e-12
    # useless predictions: λ falls to 0 and the estimate is the plain weighted mean
    noise = [aipw.StratumSample(400, y, -y + 1.0)]
    assert aipw.tuned(noise) == 0.0
    assert aipw.design_estimate(400, 123.0, noise).estimate == pytest.approx(y.mean())


def test_a_census_stratum_adds_no_variance() -> None:
    whole = aipw.StratumSample(3, np.array([1.0, 0.0, 1.0]), np.array([0.5, 0.5, 0.5]))
    found = aipw.design_estimate(3, 1.5, [whole], tuning=1.0)
    assert found.estimate == pytest.approx(2 / 3)
    assert found.se == 0.0


def test_a_sample_all_right_keeps_an_interval_below_one() -> None:
    # 60 items drawn from 1,273 in two strata, every one right: the plug-in variance is 0, yet the
    # 1,213 unsampled items could hold wrong answers; the interval is Wilson's on the 60 drawn
    # (Korn & Graubard's rule), not the point [1, 1] the old code gave.
    strata = [
        aipw.StratumSample(600, np.ones(30), np.full(30, 0.9)),
        aipw.StratumSample(673, np.ones(30), np.full(30, 0.8)),
    ]
    found = aipw.design_estimate(1273, 1100.0, strata)
    assert found.se == 0.0
    lo, hi = found.interval()
    expected = stats.binomtest(60, 60).proportion_ci(method="wilsoncc")
    assert (lo, hi) == pytest.approx((expected.low, expected.high))
    assert lo < 0.95 and hi == 1.0


def test_a_sample_all_wrong_in_one_stratum_and_right_in_another_is_not_a_point() -> None:
    strata = [
        aipw.StratumSample(100, np.ones(10), np.full(10, 0.5)),
        aipw.StratumSample(100, np.zeros(10), np.full(10, 0.5)),
    ]
    found = aipw.design_estimate(200, 100.0, strata, tuning=0.0)
    assert found.estimate == pytest.approx(0.5)
    lo, hi = found.interval()
    assert lo < 0.5 < hi


def test_each_units_tuning_is_fitted_on_the_other_units() -> None:
    """Issue 45: λ is cross-fitted (leave one unit out); the estimate applies each unit's own
    λ₋ᵤ to its residual and their F-weighted mean λ̄ to the population's predictions."""
    rng = np.random.default_rng(4)
    strata = [
        aipw.StratumSample(60, rng.integers(0, 4, 7).astype(float), rng.random(7) * 3),
        aipw.StratumSample(40, rng.integers(0, 4, 5).astype(float), rng.random(5) * 3),
    ]
    lams = aipw.cross_fitted(strata)
    for h, stratum in enumerate(strata):
        for u in range(len(stratum.observed)):
            keep = np.arange(len(stratum.observed)) != u
            others = [s if k != h else aipw.StratumSample(s.population_units, s.observed[keep],
                                                          s.predicted[keep])
                      for k, s in enumerate(strata)]  # fmt: skip
            assert lams[h][u] == pytest.approx(aipw.tuned(others))
    found = aipw.design_estimate(250, 120.0, strata)
    w = [60 / 7, 40 / 5]
    mean_lam = sum(w[h] * np.sum(lams[h] * s.predicted) for h, s in enumerate(strata)) / sum(
        w[h] * np.sum(s.predicted) for h, s in enumerate(strata)
    )
    total = mean_lam * 120.0 + sum(
        w[h] * np.sum(s.observed - lams[h] * s.predicted) for h, s in enumerate(strata)
    )
    assert found.estimate == pytest.approx(total / 250)
    assert found.tuning == pytest.approx(mean_lam)
    variance = sum(
        s.weight * np.var(s.observed - lams[h] * s.predicted, ddof=1) for h, s in enumerate(strata)
    )
    assert found.se == pytest.approx(np.sqrt(variance) / 250)

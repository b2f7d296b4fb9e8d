"""Issue 35: each fixed interval against a reference computation, and small fixed-seed
simulations with loose bounds (the full coverage figures live in bench/coverage_intervals.py)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from medlens.analysis.compare import _Paired, paired_cell
from medlens.judges.results import mean_ci
from medlens.ratings.winratio import item_contributions, win_ratios
from medlens.stats.agreement import krippendorff_alpha_ci
from medlens.stats.bootstrap import bca_bounds, group_cis, group_spread, ratio_ci
from medlens.stats.intervals import bounded_mean, wilson
from medlens.stats.paired import paired_ci


@pytest.mark.parametrize(("k", "n"), [(0, 5), (3, 10), (17, 20), (50, 50), (33, 120)])
def test_bounded_mean_of_0_1_values_is_agresti_coull(k: int, n: int) -> None:
    values = np.r_[np.ones(k), np.zeros(n - k)]
    lo, hi = bounded_mean(np.array([values.mean()]), np.array([values.var()]), np.array([n]))
    ref = proportion_confint(k, n, method="agresti_coull")
    assert (lo[0], hi[0]) == pytest.approx(ref, abs=1e-12)


def test_a_constant_rubric_dimension_is_not_zero_width() -> None:
    for n in (3, 10, 100):
        cell = mean_ci(np.full(n, 8.0), np.arange(n).astype(str), 10.0)
        lo, hi = cell["ci"]
        assert 0 <= lo < 8.0 < hi <= 10 and hi - lo > 0.2  # was [8.00, 8.00]
    nearly = mean_ci(np.r_[np.full(29, 8.0), 7.0], np.arange(30).astype(str), 10.0)["ci"]
    assert nearly[1] - nearly[0] > 0.5


def test_ceiling_heavy_ratings_get_an_asymmetric_interval() -> None:
    values = np.r_[np.full(8, 10.0), 9.0, 2.0]
    lo, hi = mean_ci(values, np.arange(10).astype(str), 10.0)["ci"]
    mean = values.mean()
    assert hi <= 10 and mean - lo > hi - mean  # the long tail is below the mean


def test_effective_images_count_one_heavy_image_as_about_one() -> None:
    clusters = np.repeat(np.arange(3), [8, 1, 1])
    spread = group_spread(np.r_[np.ones(8), 0.0, 1.0], np.zeros(10, int), clusters)
    assert spread.images[0] == 3
    assert spread.effective_images[0] == pytest.approx(100 / 66)
    balanced = group_spread(np.ones(9), np.zeros(9, int), np.repeat(np.arange(3), 3))
    assert balanced.effective_images[0] == pytest.approx(3.0)


def test_ratio_ci_of_one_event_per_image_is_wilson_cc() -> None:
    events = np.r_[np.ones(7), np.zeros(5)]
    lo, hi = ratio_ci(events, np.ones(12), np.arange(12).astype(str))
    ref = stats.binomtest(7, 12).proportion_ci(method="wilsoncc")
    assert (lo, hi) == pytest.approx((ref.low, ref.high), abs=1e-9)


def test_ratio_ci_of_clustered_events_is_the_clustered_cell_interval() -> None:
    sums, sizes = np.array([2.0, 4, 0, 3, 6]), np.array([3.0, 5, 2, 3, 6])
    lo, hi = ratio_ci(sums, sizes, np.array(list("abcde")))
    values = np.concatenate(
        [np.r_[np.ones(int(s)), np.zeros(int(m - s))] for s, m in zip(sums, sizes, strict=True)]
    )
    clusters = np.repeat(np.array(list("abcde")), sizes.astype(int))
    ref_lo, ref_hi = group_cis(values, np.zeros(values.size, int), clusters)
    assert (lo, hi) == pytest.approx((ref_lo[0], ref_hi[0]))


def test_paired_ci_of_constant_fractional_differences_is_not_zero_width() -> None:
    a = np.full(12, 0.5)
    lo, hi = paired_ci(a, a + 0.25)
    assert lo < 0.25 < hi and hi - lo > 0.05


def test_bca_bounds_are_scipys() -> None:
    rng = np.random.default_rng(3)
    x = rng.exponential(size=25)
    res = stats.bootstrap(
        (x,), np.mean, n_resamples=4000, method="BCa", rng=np.random.default_rng(1)
    )
    jackknife = (x.sum() - x) / (x.size - 1)
    lo, hi = bca_bounds(res.bootstrap_distribution, float(x.mean()), jackknife)
    assert (lo, hi) == pytest.approx(
        (res.confidence_interval.low, res.confidence_interval.high), rel=2e-3
    )


def test_win_ratio_difference_uses_the_paired_interval() -> None:
    rng = np.random.default_rng(0)
    ids = [f"q{k}" for k in range(30)]
    human = [{i: float(rng.integers(0, 3)) for i in ids} for _ in range(3)]
    judge = [{i: float(rng.integers(0, 3)) for i in ids} for _ in range(3)]
    out = win_ratios(["a", "b", "c"], human, judge)["models"]["a"]
    h, j = item_contributions(human, ids)[0], item_contributions(judge, ids)[0]
    assert out["difference_ci"] == pytest.approx(list(paired_ci(j, h)))


def test_two_images_are_too_few_to_compare() -> None:
    a, b = np.array([1.0, 0, 1, 1, 0, 1]), np.array([0.0, 1, 1, 0, 1, 1])
    paired = _Paired(a, b, np.full(6, 0.25), np.array(list("xxxyyy"), dtype=object), {})
    cell = paired_cell(paired, np.ones(6, bool), (), 1000, 0).to_json()
    assert cell["ci"] is None and cell["note"] == "too few images to compare"
    three = _Paired(a, b, np.full(6, 0.25), np.array(list("xxyyzz"), dtype=object), {})
    assert paired_cell(three, np.ones(6, bool), (), 1000, 0).to_json()["ci"] is not None


# -- small fixed-seed simulations, loose bounds (bench/coverage_intervals.py has the figures) ----
def coverage(draw, truth: float, reps: int, seed: int) -> float:  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(reps):
        lo, hi = draw(rng)
        hits += lo - 1e-9 <= truth <= hi + 1e-9
    return hits / reps


def test_simulated_rubric_ceiling_means_cover() -> None:
    p = np.array([0.01, 0, 0, 0, 0.01, 0.02, 0.03, 0.05, 0.13, 0.3, 0.45])
    truth = float(np.arange(11) @ p)

    def draw(rng: np.random.Generator) -> list[float]:
        return mean_ci(rng.choice(11, 10, p=p).astype(float), np.arange(10).astype(str), 10.0)["ci"]

    assert coverage(draw, truth, 300, 0) >= 0.93  # the t interval: 0.90 on these draws


def test_simulated_paired_delta_on_three_images_covers() -> None:
    def draw(rng: np.random.Generator) -> tuple[float, float]:
        image = np.repeat(np.arange(3), rng.integers(2, 5, 3))
        rate_c = rng.beta(3.5, 1.5, 3)
        v = rng.random(image.size)
        closed = (v < rate_c[image]).astype(float)
        opened = (v < np.clip(rate_c - 0.2, 0, 1)[image]).astype(float)
        return paired_ci(opened, closed, image)

    truth = 0.7 - float(
        np.mean(np.clip(np.random.default_rng(9).beta(3.5, 1.5, 200_000) - 0.2, 0, 1))
    )
    assert coverage(draw, truth, 300, 1) >= 0.88


def test_simulated_alpha_near_zero_covers() -> None:
    def draw(rng: np.random.Generator) -> list[float]:
        ci = krippendorff_alpha_ci(
            (rng.random((30, 2)) < 0.6).astype(float).tolist(), n_resamples=500
        )
        assert ci is not None
        return ci

    assert coverage(draw, 0.0, 150, 2) >= 0.85


def test_wilson_reference_is_unchanged() -> None:  # the 0/1 cell interval stays Wilson-cc
    lo, hi = wilson(np.array([7.0]), np.array([12.0]))
    ref = stats.binomtest(7, 12).proportion_ci(method="wilsoncc")
    assert (lo[0], hi[0]) == pytest.approx((ref.low, ref.high))

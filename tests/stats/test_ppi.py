"""Prediction-powered inference for a mean (`stats/ppi.py`) against a hand computation: the
worked example's λ, estimate and interval (checked against ppi_py 0.2.3 when written), plain PPI
and the human-only mean, the clip of λ, the cluster-robust variance and its reduction to the iid
one, the Wilson envelope against scipy, and a small coverage check."""

from __future__ import annotations

import numpy as np
import pytest

from medlens.stats.ppi import cluster_terms, ppi_mean, with_wilson_envelope

Y = [1, 0, 1, 1, 0, 1]
F_L = [1, 0, 1, 0, 0, 1]  # the judge misses the 4th item, a correct answer
F_U = [1, 1, 0, 1, 0, 1, 1, 0, 1, 1, 0, 1]
C_L = [0, 0, 1, 2, 3, 4]
C_U = [0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 4, 4]


def test_the_worked_example_by_hand() -> None:
    fit = ppi_mean(Y, F_L, F_U)
    # cov_n = 1/6; pooled var (ddof 1) of the 18 scores with 11 ones = 77/306; 1 + n/N = 3/2
    assert fit.lam == pytest.approx(34 / 77)
    assert fit.estimate == pytest.approx(2 / 3 + (34 / 77) / 6)
    imputed = (34 / 77) * np.sqrt(2 / 9) / np.sqrt(12)
    residual = np.array(Y) - (34 / 77) * np.array(F_L)
    rectifier = residual.std() / np.sqrt(6)
    assert fit.se == pytest.approx(np.hypot(imputed, rectifier))
    assert fit.ci == pytest.approx((0.435106, 1.045414), abs=1e-6)
    assert (fit.n, fit.n_unlabelled, fit.clustered) == (6, 12, False)


@pytest.mark.parametrize(
    ("lam", "alpha", "estimate", "ci"),
    [
        (1.0, 0.05, 0.833333, (0.433257, 1.233409)),  # PPI (Science 2023): λ = 1
        (0.0, 0.05, 0.666667, (0.289471, 1.043862)),  # λ = 0: the human-only mean
        (None, 0.10, 0.740260, (0.484166, 0.996353)),  # ppi_py's default 90% interval
    ],
)
def test_fixed_lambda_and_level(
    lam: float | None, alpha: float, estimate: float, ci: tuple[float, float]
) -> None:
    fit = ppi_mean(Y, F_L, F_U, lam=lam, alpha=alpha)
    assert fit.estimate == pytest.approx(estimate, abs=1e-6)
    assert fit.ci == pytest.approx(ci, abs=1e-6)


def test_lambda_is_clipped_for_a_compressed_rubric_judge() -> None:
    f_l = np.array([70, 40, 65, 55, 45, 60]) / 100
    f_u = np.array([60, 50, 40, 70, 45, 65, 55, 50, 60, 45, 70, 40]) / 100
    fit = ppi_mean(Y, f_l, f_u)
    assert fit.lam_unclipped == pytest.approx(2.552193, abs=1e-6) and fit.lam == 1.0
    assert fit.estimate == pytest.approx(0.65) and fit.ci == pytest.approx(
        (0.340210, 0.959790), abs=1e-6
    )


def test_the_cluster_robust_version_by_hand() -> None:
    fit = ppi_mean(Y, F_L, F_U, clusters_labelled=C_L, clusters_unlabelled=C_U)
    a, b = cluster_terms(*(np.array(v, float) for v in (Y, F_L, F_U)), np.array(C_L), np.array(C_U))
    assert a == pytest.approx([-1 / 18, 1 / 18, 1 / 18, -1 / 9, 1 / 18])
    assert b == pytest.approx([1 / 18, -1 / 6, 1 / 12, 5 / 36, -1 / 9])
    assert fit.lam == pytest.approx(19 / 45)  # −ΣAB / ΣB²
    assert fit.estimate == pytest.approx(0.737037, abs=1e-6)
    assert fit.se == pytest.approx(0.124053, abs=1e-6)
    assert fit.quantile == pytest.approx(3.182446, abs=1e-6)  # t(G_L − 2 = 3): λ̂ spends one
    tuned = (0.737037 - 3.182446 * 0.124053, 0.737037 + 3.182446 * 0.124053)
    plain = ppi_mean(Y, F_L, F_U, clusters_labelled=C_L, clusters_unlabelled=C_U, lam=1.0)
    assert plain.quantile == pytest.approx(2.776445, abs=1e-6)  # t(G_L − 1 = 4)
    # few labelled images: widened to plain PPI's interval (λ = 1)
    assert fit.ci == pytest.approx(
        (min(tuned[0], plain.ci[0]), max(tuned[1], plain.ci[1])), abs=1e-5
    )
    assert (fit.clusters, fit.clusters_labelled) == (5, 5)


def test_one_item_per_image_is_the_iid_variance_exactly() -> None:
    lam = 34 / 77
    singleton = ppi_mean(Y, F_L, F_U, lam=lam, clusters_labelled=list(range(6)),
                         clusters_unlabelled=list(range(6, 18)))  # fmt: skip
    groups = 18
    iid = ppi_mean(Y, F_L, F_U, lam=lam)
    # CR1 multiplies each stratum by G_s/(G_s − 1); without it the sum is ppi_py's se² exactly
    a, b = cluster_terms(*(np.array(v, float) for v in (Y, F_L, F_U)), np.arange(6),
                         np.arange(6, 18))  # fmt: skip
    psi = a + lam * b
    assert psi @ psi == pytest.approx(iid.se**2, rel=1e-12) and groups == psi.size
    stratified = 6 / 5 * psi[:6] @ psi[:6] + 12 / 11 * psi[6:] @ psi[6:]
    assert singleton.se**2 == pytest.approx(stratified, rel=1e-12)


def test_the_wilson_envelope_at_the_effective_sample_size() -> None:
    from scipy.stats import binomtest

    fit = ppi_mean(Y, F_L, F_U, clusters_labelled=C_L, clusters_unlabelled=C_U)
    wide = with_wilson_envelope(fit)
    assert wide.ci_ppi == fit.ci and wide.ci[0] <= fit.ci[0] and wide.ci[1] >= fit.ci[1]
    # a design whose effective sample size is whole: 25 successes in 50, se of a binomial mean
    exact = ppi_mean([1, 0] * 25, [1, 0] * 25, [0.5] * 10, lam=0.0)
    assert exact.se == pytest.approx(np.sqrt(0.25 / 50))
    ci = binomtest(25, 50).proportion_ci(method="wilsoncc")
    widened = with_wilson_envelope(exact)
    assert widened.ci == pytest.approx((min(exact.ci[0], ci.low), max(exact.ci[1], ci.high)))
    assert widened.ci[1] - widened.ci[0] > exact.ci[1] - exact.ci[0]


def test_a_constant_judge_falls_back_to_the_human_mean() -> None:
    fit = ppi_mean(Y, [1] * 6, [1] * 12)
    assert fit.lam == 0.0 and fit.lam_unclipped is None and fit.notes
    assert fit.estimate == pytest.approx(np.mean(Y))


def test_too_few_labels_are_refused() -> None:
    with pytest.raises(ValueError, match="two labelled items"):
        ppi_mean([1], [1], [0, 1])


def test_coverage_with_a_biased_judge_and_clustered_items() -> None:
    """200 repetitions (the full 1,000 is bench/ppi.py): a judge that misses 20% of correct
    answers and accepts 5% of wrong ones, 4 questions per image, 10% of items labelled."""
    rng = np.random.default_rng(20240522)
    covered, raw_bias, bias = [], [], []
    images, per_image, mu = 150, 4, 0.6
    for _ in range(200):
        p = rng.beta(1.4, 0.933, images)  # image difficulty, ICC 0.3 around 0.6
        cluster = np.repeat(np.arange(images), per_image)
        y = (rng.random(images * per_image) < p[cluster]).astype(float)
        f = np.where(y == 1, rng.random(y.size) < 0.8, rng.random(y.size) < 0.05).astype(float)
        labelled = np.zeros(y.size, bool)
        labelled[rng.choice(y.size, 60, replace=False)] = True
        fit = ppi_mean(y[labelled], f[labelled], f[~labelled],
                       clusters_labelled=cluster[labelled], clusters_unlabelled=cluster[~labelled])  # fmt: skip
        covered.append(fit.ci[0] <= mu <= fit.ci[1])
        bias.append(fit.estimate - mu)
        raw_bias.append(f.mean() - mu)
    assert np.mean(covered) >= 0.9  # 95% nominal; the Monte Carlo s.e. at 200 reps is 0.015
    assert abs(np.mean(bias)) < 0.01 and np.mean(raw_bias) < -0.08  # the judge alone is biased

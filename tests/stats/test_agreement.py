"""medlens.stats.agreement against hand computations, scikit-learn, scipy and the krippendorff package."""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import bootstrap, spearmanr
from sklearn.metrics import cohen_kappa_score

from medlens.core.errors import MedlensError
from medlens.judges.verdicts import inter_judge_agreement, judge_self_agreement
from medlens.stats.agreement import (
    PairedRatings,
    cluster_bootstrap_ci,
    cohen_kappa,
    kappa_statistic,
    krippendorff_alpha,
    mean_absolute_difference,
    paired_summary,
    rank_correlation,
    rater_agreement,
    self_agreement,
    spearman,
)
from ratings_helpers import RUBRIC, write_judge

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", example C: 4 observers ×
# 12 units with missing values; published α: nominal .743, ordinal .815, interval .849, ratio .797.
_ = None
KRIPPENDORFF_C = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, _, _, _],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, _, 3],
    [_, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, _],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, _],
]
UNITS_C = [list(unit) for unit in zip(*KRIPPENDORFF_C, strict=True)]


@pytest.mark.parametrize(
    ("level", "published"),
    [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)],
)
def test_krippendorff_alpha_matches_the_published_worked_example(
    level: str, published: float
) -> None:
    assert krippendorff_alpha(UNITS_C, level) == pytest.approx(published, abs=5e-4)  # type: ignore[arg-type]


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_krippendorff_alpha_matches_the_krippendorff_package(level: str, seed: int) -> None:
    krippendorff = pytest.importorskip("krippendorff")
    rng = np.random.default_rng(seed)
    data = rng.integers(1, 6, size=(3, 40)).astype(float)
    data[0] = np.where(rng.random(40) < 0.6, data[1], data[0])  # some real agreement
    data[rng.random((3, 40)) < 0.15] = np.nan
    units = [[None if math.isnan(v) else float(v) for v in column] for column in data.T]
    expected = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    assert krippendorff_alpha(units, level) == pytest.approx(expected, abs=1e-9)  # type: ignore[arg-type]


def test_krippendorff_alpha_perfect_and_undefined() -> None:
    assert krippendorff_alpha([[1, 1], [2, 2], [3, 3]], "nominal") == pytest.approx(1.0)
    assert krippendorff_alpha([[1, 1], [1, 1]], "nominal") is None  # one value only: D_e = 0
    assert krippendorff_alpha([[1, None], [2, None]], "nominal") is None  # nothing pairable


def test_cohen_kappa_by_hand_and_against_sklearn() -> None:
    # 2×2 table: both yes 20, both no 15, a yes/b no 5, a no/b yes 10 (n = 50)
    a = [1] * 20 + [0] * 15 + [1] * 5 + [0] * 10
    b = [1] * 20 + [0] * 15 + [0] * 5 + [1] * 10
    p_o = 35 / 50
    p_e = (25 / 50) * (30 / 50) + (25 / 50) * (20 / 50)
    assert cohen_kappa(a, b) == pytest.approx((p_o - p_e) / (1 - p_e))
    assert cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b))


@pytest.mark.parametrize("weights", ["linear", "quadratic"])
def test_weighted_kappa_against_sklearn_with_the_full_scale(weights: str) -> None:
    rng = random.Random(4)
    a = [rng.randint(3, 8) for _ in range(60)]
    b = [min(10, max(0, v + rng.choice([-2, -1, 0, 0, 1]))) for v in a]
    labels = list(range(11))
    expected = cohen_kappa_score(a, b, weights=weights, labels=labels)
    assert cohen_kappa(a, b, weights=weights, labels=labels) == pytest.approx(expected)  # type: ignore[arg-type]


def test_weighted_kappa_by_hand_on_three_categories() -> None:
    # quadratic weights on 0..2: w = (i-j)^2 / 4; κ_w = 1 - Σ w·O / Σ w·E
    a, b = [0, 0, 1, 1, 2, 2], [0, 1, 1, 2, 2, 0]
    observed = np.zeros((3, 3))
    for x, y in zip(a, b, strict=True):
        observed[x, y] += 1
    expected = np.outer(observed.sum(1), observed.sum(0)) / observed.sum()
    weight = np.array([[(i - j) ** 2 / 4 for j in range(3)] for i in range(3)])
    by_hand = 1 - (weight * observed).sum() / (weight * expected).sum()
    assert cohen_kappa(a, b, weights="quadratic", labels=[0, 1, 2]) == pytest.approx(by_hand)


def test_kappa_moves_means_of_repeats_onto_the_scale() -> None:
    # 6.5 → 7 (ties go up), 3.2 → 3: the same κ as on the rounded values
    assert cohen_kappa([6.5, 3.2, 9.0], [7, 3, 8], "quadratic", list(range(11))) == pytest.approx(
        cohen_kappa_score([7, 3, 9], [7, 3, 8], weights="quadratic", labels=list(range(11)))
    )


@pytest.mark.parametrize("seed", range(5))
def test_bootstrap_statistics_equal_scipy_and_sklearn(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 11, 30).astype(float)
    y = np.clip(x + rng.integers(-3, 4, 30), 0, 10).astype(float)
    assert rank_correlation(x, y)[0] == pytest.approx(spearmanr(x, y).statistic)
    labels = [float(v) for v in range(11)]
    for weights in (None, "linear", "quadratic"):
        expected = cohen_kappa_score(x, y, weights=weights, labels=labels)
        assert kappa_statistic(labels, weights)(x, y)[0] == pytest.approx(expected)  # type: ignore[arg-type]
    assert math.isnan(rank_correlation(np.ones(5), np.arange(5.0))[0])
    # batched: one value per row, each equal to the row on its own
    xs, ys = np.stack([x, y, x]), np.stack([y, x, x])
    batch = kappa_statistic(labels, "quadratic")(xs, ys)
    assert batch == pytest.approx([cohen_kappa_score(a, b, weights="quadratic", labels=labels)
                                   for a, b in zip(xs, ys, strict=True)])  # fmt: skip
    assert rank_correlation(xs, ys) == pytest.approx([spearmanr(a, b).statistic
                                                      for a, b in zip(xs, ys, strict=True)])  # fmt: skip


def test_cohen_kappa_undefined_cases() -> None:
    assert cohen_kappa([], []) is None
    assert cohen_kappa([1, 1, 1], [1, 1, 1]) is None


def test_spearman_and_mad_against_scipy_and_hand() -> None:
    x, y = [1, 2, 3, 4, 5, 6], [2, 1, 4, 3, 6, 5]
    assert spearman(x, y) == pytest.approx(spearmanr(x, y).statistic)
    assert mean_absolute_difference(x, y) == pytest.approx(1.0)
    assert spearman([1, 1, 1], [1, 2, 3]) is None


def test_bootstrap_ci_with_one_pair_per_item_matches_scipys_paired_bootstrap() -> None:
    rng = np.random.default_rng(7)
    x = rng.normal(size=80)
    y = x + rng.normal(scale=1.0, size=80)
    ours = cluster_bootstrap_ci(
        [[(a, b)] for a, b in zip(x, y, strict=True)], rank_correlation, 4000, 3
    )
    theirs = bootstrap(
        (x, y), lambda a, b: spearmanr(a, b).statistic, paired=True, vectorized=False,
        n_resamples=2000, method="percentile", rng=np.random.default_rng(11),
    ).confidence_interval  # fmt: skip
    assert ours is not None
    assert ours[0] == pytest.approx(theirs.low, abs=0.04)
    assert ours[1] == pytest.approx(theirs.high, abs=0.04)
    assert ours[0] < spearman(list(x), list(y)) < ours[1]  # type: ignore[operator]


def test_cluster_bootstrap_is_wider_than_treating_repeated_ratings_as_independent() -> None:
    rng = np.random.default_rng(2)
    clusters = []
    for _ in range(30):
        truth = rng.normal()
        clusters.append([(truth + rng.normal(scale=0.1), truth) for _ in range(5)])
    clustered = cluster_bootstrap_ci(clusters, rank_correlation, 2000, 0)
    flat = cluster_bootstrap_ci([[p] for c in clusters for p in c], rank_correlation, 2000, 0)
    assert clustered is not None and flat is not None
    assert clustered[1] - clustered[0] > flat[1] - flat[0]


def test_paired_summary_figures_equal_scipy_and_sklearn() -> None:
    rng = random.Random(9)
    by_item = {}
    for index in range(40):
        human = rng.randint(0, 10)
        by_item[f"q{index}"] = [(float(human), float(min(10, max(0, human + rng.randint(-2, 2)))))]
    summary = paired_summary(PairedRatings(by_item, [float(v) for v in range(11)], "quadratic"))
    x = [p[0][0] for p in by_item.values()]
    y = [p[0][1] for p in by_item.values()]
    assert summary["n"] == 40 and summary["items"] == 40
    assert summary["spearman"] == pytest.approx(spearmanr(x, y).statistic)
    assert summary["kappa"] == pytest.approx(
        cohen_kappa_score(x, y, weights="quadratic", labels=[float(v) for v in range(11)])
    )
    assert summary["mad"] == pytest.approx(np.mean(np.abs(np.array(x) - np.array(y))))
    low, high = summary["spearman_ci"]
    assert low < summary["spearman"] < high


def test_rater_agreement_pairs_and_alpha() -> None:
    ratings = {
        "r1": {"a": 1.0, "b": 0.0, "c": 1.0, "d": 1.0},
        "r2": {"a": 1.0, "b": 0.0, "c": 0.0, "d": 1.0},
        "r3": {"a": 1.0, "b": 1.0, "c": 0.0},
    }
    result = rater_agreement(ratings, "nominal")
    assert result["raters"] == 3 and result["items"] == 4 and result["pairable_items"] == 4
    pair = result["pairs"][0]
    assert pair["raters"] == ["r1", "r2"] and pair["n"] == 4
    assert pair["kappa"] == pytest.approx(cohen_kappa_score([1, 0, 1, 1], [1, 0, 0, 1]))
    assert pair["percent_agreement"] == pytest.approx(0.75)
    units = [[1, 1, 1], [0, 0, 1], [1, 0, 0], [1, 1, None]]
    assert result["alpha"] == pytest.approx(krippendorff_alpha(units, "nominal"))


def test_self_agreement_over_repeats() -> None:
    result = self_agreement({"a": [1, 1, 1], "b": [0, 0, 1], "c": [1, 1, 1], "d": [0]}, "nominal")
    assert result["items"] == 3 and result["repeats"] == 3
    assert result["unanimous"] == pytest.approx(2 / 3)
    assert result["alpha"] == pytest.approx(krippendorff_alpha([[1, 1, 1], [0, 0, 1], [1, 1, 1]]))


def _run_with_items(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    return run


def test_inter_judge_agreement_on_equivalence_judges(tmp_path: Path) -> None:
    run = _run_with_items(tmp_path)
    a = [True, True, False, False, True, False, True, True]
    b = [True, False, False, False, True, True, True, True]
    c = [True, True, False, True, True, False, True, False]
    for name, verdicts in (("a", a), ("b", b), ("c", c)):
        write_judge(run, name, "equivalence", {f"q{i}": [v] for i, v in enumerate(verdicts)})
    result = inter_judge_agreement(run, ["a", "b", "c"])
    dim = result["dimensions"]["equivalent"]
    assert dim["pairs"][0]["kappa"] == pytest.approx(cohen_kappa_score(a, b))
    units = [[float(x), float(y), float(z)] for x, y, z in zip(a, b, c, strict=True)]
    assert dim["alpha"] == pytest.approx(krippendorff_alpha(units, "nominal"))


def test_inter_judge_agreement_on_rubric_judges_uses_repeats_and_skips_unparseable(
    tmp_path: Path,
) -> None:
    run = _run_with_items(tmp_path)
    rng = random.Random(3)
    first, second = {}, {}
    for index in range(20):
        base = {d: rng.randint(2, 9) for d in RUBRIC}
        first[f"q{index}"] = [base, {d: v + 1 for d, v in base.items()}]  # mean = base + 0.5
        second[f"q{index}"] = [{d: max(0, v - rng.randint(0, 2)) for d, v in base.items()}]
    second["q0"] = [None]  # unparseable: left out, never scored 0
    write_judge(run, "a", "rubric", first)
    write_judge(run, "b", "rubric", second)
    result = inter_judge_agreement(run, ["a", "b"])
    pair = result["dimensions"]["coherence"]["pairs"][0]
    assert pair["n"] == 19
    ids = [f"q{i}" for i in range(1, 20)]
    x = [first[i][0]["coherence"] + 0.5 for i in ids]
    y = [second[i][0]["coherence"] for i in ids]
    assert pair["spearman"] == pytest.approx(spearmanr(x, y).statistic)
    rounded = [math.floor(v + 0.5) for v in x]
    assert pair["kappa"] == pytest.approx(
        cohen_kappa_score(rounded, y, weights="quadratic", labels=list(range(11)))
    )


def test_inter_judge_agreement_refuses_one_judge_and_different_protocols(tmp_path: Path) -> None:
    run = _run_with_items(tmp_path)
    write_judge(run, "eq", "equivalence", {"q1": [True]})
    write_judge(run, "rub", "rubric", {"q1": [dict.fromkeys(RUBRIC, 5)]})
    with pytest.raises(MedlensError, match="two or more judges"):
        inter_judge_agreement(run, ["eq"])
    with pytest.raises(MedlensError, match="cannot be compared"):
        inter_judge_agreement(run, ["eq", "rub"])
    with pytest.raises(MedlensError, match=r"no judge named 'nope'.*eq, rub"):
        inter_judge_agreement(run, ["eq", "nope"])


def test_judge_self_agreement_over_repeats(tmp_path: Path) -> None:
    run = _run_with_items(tmp_path)
    write_judge(run, "eq", "equivalence",
                {"a": [True, True, True], "b": [True, False, True], "c": [False, False, None]})  # fmt: skip
    result = judge_self_agreement(run, "eq")["equivalent"]
    assert result["items"] == 3 and result["unanimous"] == pytest.approx(2 / 3)
    assert result["alpha"] == pytest.approx(krippendorff_alpha([[1, 1, 1], [1, 0, 1], [0, 0]]))


def test_unequal_clusters_take_the_slow_path_and_agree_with_it() -> None:
    rng = np.random.default_rng(5)
    clusters = [[(float(v), float(v + rng.integers(-1, 2)))] * int(rng.integers(1, 4))
                for v in rng.integers(0, 10, 25)]  # fmt: skip
    ci = cluster_bootstrap_ci(clusters, rank_correlation, 500, 0)
    assert ci is not None and -1 <= ci[0] < ci[1] <= 1
    equal = [c[:1] * 2 for c in clusters]
    fast = cluster_bootstrap_ci(equal, rank_correlation, 500, 0)
    slow = cluster_bootstrap_ci([*equal[:-1], equal[-1] * 2], rank_correlation, 500, 0)
    assert fast is not None and slow is not None
    assert fast == pytest.approx(slow, abs=0.1)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_alpha_ci_equals_alpha_recomputed_on_each_resample(level: str) -> None:
    from medlens.stats.agreement import krippendorff_alpha_ci
    from medlens.stats.bootstrap import bca_bounds

    rng = np.random.default_rng(8)
    units = [[float(v), float(v + rng.integers(-1, 2)), float(rng.integers(1, 6))]
             for v in rng.integers(1, 6, 30)]  # fmt: skip
    ci = krippendorff_alpha_ci(units, level, n_resamples=300, seed=4)  # type: ignore[arg-type]
    draws = np.random.default_rng(4).integers(0, 30, (300, 30))
    alphas = [krippendorff_alpha([units[i] for i in row], level) for row in draws]  # type: ignore[arg-type]
    point = krippendorff_alpha(units, level)  # type: ignore[arg-type]
    # BCa (issue 35): the acceleration from α recomputed without each unit
    jackknife = [krippendorff_alpha(units[:k] + units[k + 1 :], level) for k in range(30)]  # type: ignore[arg-type]
    assert point is not None and None not in jackknife
    expected = bca_bounds(np.array([a for a in alphas if a is not None]), point,
                          np.array(jackknife, dtype=float))  # fmt: skip
    assert ci == pytest.approx(list(expected))
    assert ci is not None and point is not None and ci[0] < point < ci[1]


def test_rater_pairs_carry_bootstrap_cis() -> None:
    rng = random.Random(1)
    a = {f"i{n}": float(rng.randint(0, 4)) for n in range(40)}
    b = {k: float(min(4, max(0, v + rng.choice([-1, 0, 0, 1])))) for k, v in a.items()}
    pair = rater_agreement({"a": a, "b": b}, "ordinal", "quadratic", [0.0, 1, 2, 3, 4])["pairs"][0]
    assert pair["kappa_ci"][0] < pair["kappa"] < pair["kappa_ci"][1]
    assert pair["spearman_ci"][0] < pair["spearman"] < pair["spearman_ci"][1]

"""Metrics checked against scikit-learn, scipy and independent reference computations on
randomised inputs, plus table-driven fixed cases and the bootstrap's statistical behaviour."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from medlens.core.items import Item
from medlens.scoring import metrics
from medlens.stats import bootstrap

LETTERS = "ABCDE"


@pytest.fixture
def rng() -> np.random.Generator:
    """A fresh generator per test: a test draws the same values alone, in any order, on any
    xdist worker."""
    return np.random.default_rng(20260829)


def _random_set(rng: np.random.Generator) -> str:
    chosen = [ch for ch in LETTERS if rng.random() < 0.45]
    return "".join(chosen) or LETTERS[int(rng.integers(5))]


def _indicator(answer: str) -> list[int]:
    return [int(ch in answer) for ch in LETTERS]


@pytest.mark.parametrize("trial", range(5))
def test_set_metrics_match_sklearn(trial: int) -> None:
    from sklearn.metrics import accuracy_score, jaccard_score, recall_score

    rng = np.random.default_rng(trial)
    gold = [_random_set(rng) for _ in range(200)]
    pred = [_random_set(rng) for _ in range(200)]
    y_true = np.array([_indicator(a) for a in gold])
    y_pred = np.array([_indicator(a) for a in pred])
    ours_j = [metrics.jaccard(p, g) for p, g in zip(pred, gold, strict=True)]
    ours_r = [metrics.recall(p, g) for p, g in zip(pred, gold, strict=True)]
    ours_e = [metrics.exact_set(p, g) for p, g in zip(pred, gold, strict=True)]
    assert np.mean(ours_j) == pytest.approx(jaccard_score(y_true, y_pred, average="samples"))
    assert np.mean(ours_r) == pytest.approx(recall_score(y_true, y_pred, average="samples"))
    assert np.mean(ours_e) == pytest.approx(accuracy_score(y_true, y_pred))  # subset accuracy


@pytest.mark.parametrize(
    ("pred", "gold", "jaccard", "recall", "exact"),
    [
        ("AC", "AC", 1.0, 1.0, 1.0),
        ("A,C", "CA", 1.0, 1.0, 1.0),
        ("A", "AC", 0.5, 0.5, 0.0),
        ("ABC", "AC", 2 / 3, 1.0, 0.0),
        ("D", "AC", 0.0, 0.0, 0.0),
    ],
)
def test_set_metric_table(
    pred: str, gold: str, jaccard: float, recall: float, exact: float
) -> None:
    assert metrics.jaccard(pred, gold) == pytest.approx(jaccard)
    assert metrics.recall(pred, gold) == pytest.approx(recall)
    assert metrics.exact_set(pred, gold) == exact


@pytest.mark.parametrize("trial", range(5))
def test_f1_matches_sklearn(trial: int) -> None:
    """micro-F1 equals accuracy (unanswered = a wrong label); macro-F1 over the class set."""
    from sklearn.metrics import accuracy_score, f1_score

    rng = np.random.default_rng(100 + trial)
    labels = ["benign", "malignant", "normal", "other"]
    gold = [labels[i] for i in rng.integers(0, 3, 300)]
    pred: list[str | None] = [labels[i] for i in rng.integers(0, 4, 300)]
    pred[::17] = [None] * len(pred[::17])
    filled = [p if p is not None else "none" for p in pred]
    assert metrics.micro_f1(gold, pred) == pytest.approx(accuracy_score(gold, filled))
    expected = f1_score(gold, filled, labels=labels, average="macro", zero_division=np.nan)
    assert metrics.macro_f1(gold, pred, labels) == pytest.approx(expected)
    default = f1_score(gold, filled, labels=sorted(set(gold) | set(pred) - {None}), average="macro")
    assert metrics.macro_f1(gold, pred) == pytest.approx(default)


def test_f1_cases_from_the_statistics_issue() -> None:
    # half unanswered: micro-F1 is accuracy (0.5), not 0.667
    assert metrics.micro_f1(["a", "b", "a", "b"], ["a", "b", None, None]) == pytest.approx(0.5)
    # a predicted class absent from gold counts: (2/3 + 1 + 0) / 3, not (2/3 + 1) / 2
    gold, pred = ["a", "a", "b"], ["a", "c", "b"]
    assert metrics.macro_f1(gold, pred) == pytest.approx(5 / 9)
    # "d" is named by neither side: left out, not counted as 0 (sklearn zero_division=nan)
    assert metrics.macro_f1(gold, pred, ["a", "b", "c", "d"]) == pytest.approx(5 / 9)


def test_auroc_needs_a_fixed_label_set() -> None:
    with pytest.raises(ValueError, match="outside the label set"):
        metrics.auroc(["A", "B"], [{"A": 0.9}, {"B": 0.8}], ["yes", "no"])


def _mann_whitney_auc(positive: np.ndarray, negative: np.ndarray) -> float:
    from scipy.stats import mannwhitneyu

    statistic = mannwhitneyu(positive, negative, alternative="two-sided").statistic
    return float(statistic) / (positive.size * negative.size)


@pytest.mark.parametrize("trial", range(3))
def test_auroc_matches_mann_whitney(trial: int) -> None:
    rng = np.random.default_rng(200 + trial)
    gold = [["yes", "no"][i] for i in rng.integers(0, 2, 150)]
    p_yes = np.clip(rng.normal(0.5, 0.2, 150) + 0.2 * np.array([g == "yes" for g in gold]), 0, 1)
    rows = [{"yes": float(p), "no": float(1 - p)} for p in p_yes]
    is_yes = np.array([g == "yes" for g in gold])
    expected = _mann_whitney_auc(p_yes[is_yes], p_yes[~is_yes])
    assert metrics.auroc(gold, rows, ["yes", "no"]) == pytest.approx(expected)


def test_multiclass_auroc_is_macro_one_vs_rest() -> None:
    rng = np.random.default_rng(7)
    gold = [LETTERS[i] for i in rng.integers(0, 4, 200)]
    raw = rng.random((200, 4)) + np.eye(4)[[LETTERS.index(g) for g in gold]] * 0.5
    rows = [dict(zip(LETTERS, map(float, row), strict=False)) for row in raw]
    probs = raw / raw.sum(axis=1, keepdims=True)
    expected = np.mean(
        [
            _mann_whitney_auc(probs[[g == c for g in gold], k], probs[[g != c for g in gold], k])
            for k, c in enumerate(LETTERS[:4])
        ]
    )
    assert metrics.auroc(gold, rows, list(LETTERS[:4])) == pytest.approx(expected)
    from sklearn.metrics import roc_auc_score

    assert metrics.auroc(gold, rows, list(LETTERS[:4])) == pytest.approx(
        roc_auc_score(gold, probs, labels=list(LETTERS[:4]), multi_class="ovr", average="macro")
    )


def _reference_token_f1(pred: str, gold: str) -> float:
    p, g = pred.split(), gold.split()
    common = Counter(p) & Counter(g)
    same = sum(common.values())
    if not p or not g:
        return float(p == g)
    return 0.0 if same == 0 else 2 * same / (len(p) + len(g))


VOCAB = ["lung", "left", "right", "mass", "lobe", "upper", "lower", "liver", "cyst", "node"]


def _sentence(rng: np.random.Generator, low: int = 1, high: int = 8) -> str:
    return " ".join(VOCAB[i] for i in rng.integers(0, len(VOCAB), int(rng.integers(low, high))))


@pytest.mark.parametrize("trial", range(5))
def test_token_f1_and_bleu1_match_references(trial: int) -> None:
    rng = np.random.default_rng(300 + trial)
    for _ in range(40):
        pred, gold = _sentence(rng), _sentence(rng)
        assert metrics.token_f1(pred, gold) == pytest.approx(_reference_token_f1(pred, gold))
        p, g = pred.split(), gold.split()
        clipped = sum((Counter(p) & Counter(g)).values())
        brevity = 1.0 if len(p) > len(g) else math.exp(1 - len(g) / len(p))
        assert metrics.bleu1(pred, gold) == pytest.approx(brevity * clipped / len(p))


def _lcs(a: list[str], b: list[str]) -> int:
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            table[i + 1][j + 1] = (
                table[i][j] + 1 if x == y else max(table[i][j + 1], table[i + 1][j])
            )
    return table[-1][-1]


@pytest.mark.parametrize("trial", range(5))
def test_rouge_l_matches_lcs_reference(trial: int) -> None:
    rng = np.random.default_rng(400 + trial)
    short = ["cat", "dog", "ant", "owl", "bee", "elk"]  # ≤ 3 letters: the Porter stemmer keeps them
    for _ in range(40):
        pred = [short[i] for i in rng.integers(0, 6, int(rng.integers(1, 12)))]
        gold = [short[i] for i in rng.integers(0, 6, int(rng.integers(1, 12)))]
        lcs = _lcs(pred, gold)
        expected = 0.0 if lcs == 0 else 2 * lcs / (len(pred) + len(gold))
        assert metrics.rouge_l(" ".join(pred), " ".join(gold)) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("pred", "gold", "exact", "f1"),
    [
        ("The left lung.", "left lung", 1.0, 1.0),
        ("left lower lobe", "left upper lobe", 0.0, 2 / 3),
        ("", "left", 0.0, 0.0),
        ("Pneumonia!", "pneumonia", 1.0, 1.0),
    ],
)
def test_open_answer_table(pred: str, gold: str, exact: float, f1: float) -> None:
    assert metrics.exact_match(pred, gold) == exact
    assert metrics.token_f1(pred, gold) == pytest.approx(f1)


def test_iou_matches_raster_count() -> None:
    rng = np.random.default_rng(500)
    for _ in range(200):
        a = rng.integers(0, 20, 4).astype(float)
        b = rng.integers(0, 20, 4).astype(float)
        grid_a, grid_b = np.zeros((20, 20), bool), np.zeros((20, 20), bool)
        for grid, box in ((grid_a, a), (grid_b, b)):
            x1, x2 = sorted((int(box[0]), int(box[2])))
            y1, y2 = sorted((int(box[1]), int(box[3])))
            grid[y1:y2, x1:x2] = True
        union = (grid_a | grid_b).sum()
        expected = (grid_a & grid_b).sum() / union if union else 0.0
        assert metrics.iou(tuple(a), tuple(b)) == pytest.approx(expected)  # type: ignore[arg-type]


def test_best_iou_uses_only_the_first_predicted_box() -> None:
    gold = [(0.0, 0.0, 10.0, 10.0)]
    assert metrics.best_iou([(0.0, 0.0, 10.0, 10.0), (50.0, 50.0, 60.0, 60.0)], gold) == 1.0
    assert metrics.best_iou([(50.0, 50.0, 60.0, 60.0), (0.0, 0.0, 10.0, 10.0)], gold) == 0.0
    assert metrics.best_iou([], gold) == 0.0


FOUR = {"A": "a", "B": "b", "C": "c", "D": "d"}
BASELINES = [
    (Item("1", "q", "choice", FOUR), 0.25),
    (Item("2", "q", "choice", {**FOUR, "E": "e"}), 0.2),
    (Item("3", "q", "multi_choice", FOUR), 1 / 15),
    (Item("4", "q", "yes_no"), 0.5),
    (Item("5", "q", "yes_no", meta={"answer_set": "yes/no/maybe"}), 1 / 3),
    (Item("6", "q", "classify", {"A": "x", "B": "y", "C": "z"}), 1 / 3),
    (Item("7", "q", "open"), None),
    (Item("8", "q", "report"), None),
    (Item("9", "q", "detect"), None),
]


@pytest.mark.parametrize(("item", "expected"), BASELINES)
def test_random_baseline(item: Item, expected: float | None) -> None:
    assert metrics.random_baseline(item) == (None if expected is None else pytest.approx(expected))


# ---------------------------------------------------------------- bootstrap


def test_bootstrap_matches_scipy_percentile_bootstrap(rng: np.random.Generator) -> None:
    from scipy.stats import bootstrap as scipy_bootstrap

    for values in (rng.random(400), (rng.random(400) < 0.3).astype(float)):
        ours = bootstrap.bootstrap_ci(values, n_resamples=4000, seed=1)
        theirs = scipy_bootstrap(
            (values,), np.mean, n_resamples=4000, method="percentile", random_state=1
        ).confidence_interval
        width = theirs.high - theirs.low
        assert ours[0] == pytest.approx(theirs.low, abs=0.06 * width)
        assert ours[1] == pytest.approx(theirs.high, abs=0.06 * width)


def test_bootstrap_is_seeded_and_respects_level(rng: np.random.Generator) -> None:
    values = rng.random(300)
    assert bootstrap.bootstrap_ci(values, seed=3) == bootstrap.bootstrap_ci(values, seed=3)
    assert bootstrap.bootstrap_ci(values, seed=3) != bootstrap.bootstrap_ci(values, seed=4)
    lo95, hi95 = bootstrap.bootstrap_ci(values)
    lo50, hi50 = bootstrap.bootstrap_ci(values, level=0.5)
    assert lo95 < lo50 < values.mean() < hi50 < hi95


def test_bootstrap_edge_cases() -> None:
    assert all(math.isnan(v) for v in bootstrap.bootstrap_ci(np.array([])))
    assert bootstrap.bootstrap_ci(np.array([1.0])) == (1.0, 1.0)
    assert bootstrap.bootstrap_ci(np.ones(50)) == (1.0, 1.0)


def test_cluster_bootstrap_widens_for_correlated_clusters(rng: np.random.Generator) -> None:
    # 200 images × 5 questions answered identically: the effective n is 200, not 1,000.
    per_image = (rng.random(200) < 0.6).astype(float)
    values = np.repeat(per_image, 5)
    clusters = np.repeat(np.arange(200), 5).astype(str)
    plain = np.subtract(*bootstrap.bootstrap_ci(values)[::-1])
    clustered = np.subtract(*bootstrap.bootstrap_ci(values, clusters)[::-1])
    assert clustered / plain == pytest.approx(math.sqrt(5), rel=0.2)


def test_singleton_clusters_equal_the_plain_bootstrap(rng: np.random.Generator) -> None:
    values = rng.random(300)
    ids = np.array([f"img{i}" for i in range(300)], dtype=object)
    assert bootstrap.bootstrap_ci(values, ids) == bootstrap.bootstrap_ci(values)


def test_grouped_bootstrap_matches_separate_calls_in_distribution(rng: np.random.Generator) -> None:
    groups = np.array(["ct", "mri", "xray"])[rng.integers(0, 3, 3000)]
    shift = np.select([groups == "ct", groups == "mri"], [0.2, 0.5], 0.8)
    for values in ((rng.random(3000) < shift).astype(float), rng.random(3000) * shift):
        lo, hi = bootstrap.bootstrap_ci_groups(values, groups, n_resamples=2000)
        for k, name in enumerate(np.unique(groups)):
            subset = values[groups == name]
            alone = bootstrap.bootstrap_ci(subset, n_resamples=2000, seed=9)
            width = alone[1] - alone[0]
            assert lo[k] == pytest.approx(alone[0], abs=0.08 * width)
            assert hi[k] == pytest.approx(alone[1], abs=0.08 * width)


def test_grouped_cluster_bootstrap_widths(rng: np.random.Generator) -> None:
    groups = np.repeat(np.array(["a", "b"]), 1000)
    values = np.repeat((rng.random(400) < 0.5).astype(float), 5)
    clusters = np.repeat(np.arange(400), 5)
    lo, hi = bootstrap.bootstrap_ci_groups(values, groups, clusters)
    lo_plain, hi_plain = bootstrap.bootstrap_ci_groups(values, groups)
    assert ((hi - lo) / (hi_plain - lo_plain)) == pytest.approx([math.sqrt(5)] * 2, rel=0.25)


def test_cluster_bootstrap_of_continuous_scores_widens_too(rng: np.random.Generator) -> None:
    # Continuous scores (e.g. ROUGE-L) take the resampling path rather than the typed one.
    values = np.repeat(rng.random(300), 4)
    clusters = np.repeat(np.arange(300), 4)
    plain = np.subtract(*bootstrap.bootstrap_ci(values)[::-1])
    clustered = np.subtract(*bootstrap.bootstrap_ci(values, clusters)[::-1])
    assert clustered / plain == pytest.approx(2.0, rel=0.2)
    assert (
        bootstrap.bootstrap_ci(values, clusters)[0]
        < values.mean()
        < bootstrap.bootstrap_ci(values, clusters)[1]
    )


# ---------------------------------------------------------------- group_cis: the reported CI


def test_group_cis_of_independent_binary_values_are_wilson_cc_intervals(
    rng: np.random.Generator,
) -> None:
    from scipy.stats import binomtest

    groups = rng.integers(0, 4, 500)
    values = (rng.random(500) < 0.1 + 0.2 * groups).astype(float)
    lo, hi = bootstrap.group_cis(values, groups, np.arange(500).astype(str))
    for g in range(4):
        n, k = int((groups == g).sum()), int(values[groups == g].sum())
        reference = binomtest(k, n).proportion_ci(method="wilsoncc")
        assert lo[g] == pytest.approx(reference.low, abs=1e-12)
        assert hi[g] == pytest.approx(reference.high, abs=1e-12)


def test_zero_and_full_binary_cells_have_a_width() -> None:
    lo, hi = bootstrap.group_cis(np.array([0.0] * 6 + [1.0] * 6), np.repeat(["none", "all"], 6))
    assert lo[1] == 0.0 and hi[1] > 0.4  # "none": 0/6 (np.unique order: all, none)
    assert hi[0] == 1.0 and lo[0] < 0.6


def test_clustered_interval_is_statsmodels_cluster_robust_t_or_the_wilson_envelope(
    rng: np.random.Generator,
) -> None:
    import statsmodels.api as sm
    from scipy.stats import binomtest

    per_image = rng.random(40) < 0.4
    clusters = np.repeat(np.arange(40), rng.integers(1, 6, 40))
    values = (rng.random(clusters.size) < np.where(per_image[clusters], 0.8, 0.2)).astype(float)
    fit = sm.OLS(values, np.ones(values.size)).fit(
        cov_type="cluster", cov_kwds={"groups": clusters}, use_t=True
    )
    cr_lo, cr_hi = fit.conf_int()[0]
    wilson = binomtest(int(values.sum()), values.size).proportion_ci(method="wilsoncc")
    spread = bootstrap.group_spread(values, np.zeros(values.size), clusters)
    assert spread.cluster_se[0] == pytest.approx(fit.bse[0], rel=1e-10)  # CR1, as statsmodels
    lo, hi = bootstrap.group_cis(values, np.zeros(values.size), clusters)
    # the envelope: CR t(G−1), item-level Wilson-cc and Wilson-cc at the effective n
    assert lo[0] <= min(cr_lo, wilson.low) + 1e-12 and hi[0] >= max(cr_hi, wilson.high) - 1e-12
    assert cr_hi - cr_lo > wilson.high - wilson.low  # correlated images: the CR one is wider


def test_fractional_interval_is_the_bounded_mean_interval(rng: np.random.Generator) -> None:
    """Issue 35, 45: up to 20 values, never narrower than the Wald interval of the values with
    z²/2 pseudo-values at 0 and at 1 added (Agresti–Coull's, here recomputed from the augmented
    weighted sample)."""
    from scipy.stats import norm

    z = norm.ppf(0.975)
    for _ in range(50):  # the reference is two-pass; medlens takes moments: ~1e-10 apart
        values = rng.random(20) ** 2
        data = np.r_[values, 0.0, 1.0]
        weights = np.r_[np.ones(20), z * z / 2, z * z / 2]
        mean = np.average(data, weights=weights)
        variance = np.average((data - mean) ** 2, weights=weights)
        half = z * np.sqrt(variance / weights.sum())
        lo, hi = bootstrap.group_cis(values, np.zeros(20))
        assert lo[0] <= mean - half + 1e-9 and hi[0] >= mean + half - 1e-9
    # the whole envelope against references: tests/stats/test_intervals_round4.py


@pytest.mark.parametrize("kind", ["binary", "fractional"])
def test_group_cis_of_a_group_do_not_depend_on_the_other_groups(
    kind: str, rng: np.random.Generator
) -> None:
    n = 900
    values = (rng.random(n) < 0.5).astype(float) if kind == "binary" else rng.random(n).round(2)
    groups = rng.integers(0, 3, n)
    clusters = (np.arange(n) // 3).astype(str)  # three questions per image
    lo, hi = bootstrap.group_cis(values, groups, clusters)
    for g in range(3):
        alone = groups == g
        order = rng.permutation(int(alone.sum()))  # item order does not matter either
        a_lo, a_hi = bootstrap.group_cis(
            values[alone][order], groups[alone], clusters[alone][order]
        )
        assert (a_lo[0], a_hi[0]) == (lo[g], hi[g])
    # with other groups around, the same group keeps its interval
    more = np.concatenate([groups, np.full(50, 7)])
    m_lo, m_hi = bootstrap.group_cis(
        np.concatenate([values, np.ones(50)]), more, np.concatenate([clusters, ["x"] * 50])
    )
    assert (m_lo[:3] == lo).all() and (m_hi[:3] == hi).all()


def test_group_cis_are_never_narrower_than_the_item_level_interval() -> None:
    # One image asked about 9 times: the cluster bootstrap alone would give a zero width.
    values = np.array([1.0, 0, 1, 1, 0, 1, 0, 1, 1])
    lo, hi = bootstrap.group_cis(values, np.zeros(9), np.zeros(9))
    plain_lo, plain_hi = bootstrap.group_cis(values, np.zeros(9))
    assert (lo[0], hi[0]) == (plain_lo[0], plain_hi[0]) and hi[0] - lo[0] > 0.4
    fractional = values * 0.5 + 0.25
    lo, hi = bootstrap.group_cis(fractional, np.zeros(9), np.zeros(9))
    assert lo[0] < fractional.mean() < hi[0]


def test_group_cis_widen_for_correlated_images(rng: np.random.Generator) -> None:
    per_image = (rng.random(200) < 0.6).astype(float)
    values, clusters = np.repeat(per_image, 5), np.repeat(np.arange(200), 5)
    plain = np.subtract(*bootstrap.group_cis(values, np.zeros(1000))[::-1])
    clustered = np.subtract(*bootstrap.group_cis(values, np.zeros(1000), clusters)[::-1])
    assert clustered[0] / plain[0] == pytest.approx(math.sqrt(5), rel=0.2)


def test_group_cis_edge_cases() -> None:
    assert bootstrap.group_cis(np.array([]), np.array([])) == (pytest.approx([]), pytest.approx([]))
    lo, hi = bootstrap.group_cis(np.ones(3), np.array(["a", "a", "b"]))
    assert (hi == 1.0).all() and (lo < 1.0).all() and lo[0] > lo[1]  # never zero width
    lo, hi = bootstrap.group_cis(np.array([0.25, 0.75]), np.array(["a", "a"]), np.array([1, 1]))
    assert lo[0] < 0.25 and hi[0] > 0.75  # one image, two values: the item-level t interval

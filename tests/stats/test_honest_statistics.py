"""Issue 11: intervals, tests and chance levels against scipy/statsmodels and the random model."""

from __future__ import annotations

import math

import numpy as np
import pytest

from medlens.core.items import Item
from medlens.extract import extract
from medlens.models.baselines import RandomModel
from medlens.scoring import metrics
from medlens.scoring.item_scores import item_scores, score
from medlens.stats.intervals import chance_corrected, chance_p, spread_bounds
from medlens.stats.paired import difference_ci, paired_ci, sign_flip_test

FOUR = {"A": "a", "B": "b", "C": "c", "D": "d"}


@pytest.fixture
def rng() -> np.random.Generator:
    """A fresh generator per test: a test draws the same values alone, in any order, on any
    xdist worker."""
    return np.random.default_rng(11)


# ---------------------------------------------------------------- chance levels = random model
KINDS = [
    ("choice, 4 options", Item("x", "q", "choice", FOUR, answer="B")),
    ("choice, 5 options", Item("x", "q", "choice", {**FOUR, "E": "e"}, answer="E")),
    ("multi, two-letter gold", Item("x", "q", "multi_choice", FOUR, answer="AC")),
    ("multi, one-letter gold", Item("x", "q", "multi_choice", FOUR, answer="D")),
    ("yes/no", Item("x", "q", "yes_no", answer="yes")),
    ("yes/no/maybe", Item("x", "q", "yes_no", answer="maybe", meta={"answer_set": "yes/no/maybe"})),
    ("classify, options", Item("x", "q", "classify", {"A": "cat", "B": "dog", "C": "owl"}, answer="B")),
    (
        "classify, labels only",
        Item("x", "q", "classify", answer="effusion", meta={"labels": "normal|pneumonia|effusion"}),
    ),
]  # fmt: skip


@pytest.mark.parametrize(("label", "template"), KINDS, ids=[k for k, _ in KINDS])
def test_random_model_mean_matches_the_printed_chance(label: str, template: Item) -> None:
    """The random model's simulated mean lies within 3 standard errors of the printed chance
    level, for the main score and for Jaccard and recall where they exist."""
    from dataclasses import replace

    model = RandomModel("random", seed=7)
    draws = 3000
    values: dict[str, list[float]] = {"score": []}
    for i in range(draws):
        item = replace(template, id=f"item-{i}")
        extraction = extract(item, model.answer(item), "medlens")
        values["score"].append(float(score(item, extraction) or 0.0))
        for name, value in item_scores(item, extraction).items():
            values.setdefault(name, []).append(value)
    chances = {"score": metrics.random_baseline(template), **metrics.secondary_baselines(template)}
    if template.kind == "multi_choice":
        assert set(chances) == {"score", "jaccard", "recall"}
    for name, chance in chances.items():
        assert chance is not None
        observed = np.array(values[name])
        se = observed.std(ddof=1) / math.sqrt(draws)
        assert abs(observed.mean() - chance) <= 3 * se + 1e-9, (name, observed.mean(), chance)


def test_open_kinds_have_no_chance_level() -> None:
    for kind in ("open", "report", "detect"):
        assert metrics.random_baseline(Item("x", "q", kind, answer="a")) is None  # type: ignore[arg-type]
    assert chance_corrected(0.5, None) is None
    assert chance_corrected(0.25, 0.25) == 0.0 and chance_corrected(1.0, 0.25) == 1.0


# ---------------------------------------------------------------- paired and two-group intervals
def test_unclustered_sign_flip_test_is_the_exact_mcnemar_test_with_its_mid_p(
    rng: np.random.Generator,
) -> None:
    from scipy.stats import binom, binomtest

    a = (rng.random(60) < 0.5).astype(float)
    b = (rng.random(60) < 0.7).astype(float)
    wins, losses = int((b > a).sum()), int((b < a).sum())
    p, mid = sign_flip_test(a, b)
    assert p == pytest.approx(binomtest(wins, wins + losses, 0.5).pvalue)
    low = min(wins, losses)
    expected_mid = 2 * (
        binom.cdf(low, wins + losses, 0.5) - 0.5 * binom.pmf(low, wins + losses, 0.5)
    )
    assert mid == pytest.approx(min(expected_mid, 1.0))
    assert sign_flip_test(a, a) == (1.0, 1.0)


def test_image_level_sign_flip_counts_images_not_questions() -> None:
    # 6 images, each with 8 questions B wins: 48 discordant pairs, but only 6 independent signs.
    a, b = np.zeros(48), np.ones(48)
    clusters = np.repeat(np.arange(6), 8)
    assert sign_flip_test(a, b)[0] < 1e-10
    assert sign_flip_test(a, b, clusters)[0] == pytest.approx(2 / 2**6)


def test_agresti_min_paired_interval_matches_statsmodels_weighted_wald(
    rng: np.random.Generator,
) -> None:
    from statsmodels.stats.weightstats import DescrStatsW

    a = (rng.random(40) < 0.5).astype(float)
    b = (rng.random(40) < 0.6).astype(float)
    n10, n01 = int(((b == 1) & (a == 0)).sum()), int(((a == 1) & (b == 0)).sum())
    ties = 40 - n10 - n01
    stats = DescrStatsW(np.array([1.0, -1.0, 0.0]), weights=[n10 + 0.5, n01 + 0.5, ties + 1.0])
    lo, hi = stats.zconfint_mean(alpha=0.05)
    scale = math.sqrt((stats.sum_weights - 1) / stats.sum_weights)  # zconfint uses ddof 1
    centre = stats.mean
    ours = paired_ci(a, b)
    assert ours[0] == pytest.approx(centre - (centre - lo) * scale)
    assert ours[1] == pytest.approx(centre + (hi - centre) * scale)
    same = paired_ci(np.ones(5), np.ones(5))
    assert same[0] < 0 < same[1]  # never [d, d]


def test_one_image_paired_interval_is_not_degenerate() -> None:
    a, b = np.zeros(12), np.r_[np.ones(3), np.zeros(9)]
    lo, hi = paired_ci(a, b, np.zeros(12))
    assert lo < 0.25 < hi and hi - lo > 0.2


def test_difference_ci_is_newcombe_or_welch(rng: np.random.Generator) -> None:
    from scipy.stats import ttest_ind
    from statsmodels.stats.proportion import confint_proportions_2indep

    x, y = (rng.random(30) < 0.4).astype(float), (rng.random(50) < 0.6).astype(float)
    values, first = np.r_[x, y], np.arange(80) < 30
    ref = confint_proportions_2indep(x.sum(), 30, y.sum(), 50, method="newcomb")
    assert difference_ci(values, first, ~first) == (pytest.approx(ref[0]), pytest.approx(ref[1]))
    u, v = rng.random(30), rng.random(50) ** 2
    ref_t = ttest_ind(u, v, equal_var=False).confidence_interval()
    got = difference_ci(np.r_[u, v], first, ~first)
    assert got == (pytest.approx(ref_t.low), pytest.approx(ref_t.high))
    # ten images, each asked on both sides, answered alike within a side: wider interval
    clusters = np.r_[np.arange(30) // 3, np.arange(50) // 5]
    shared = np.r_[np.repeat(rng.random(10) < 0.5, 3), np.repeat(rng.random(10) < 0.5, 5)]
    plain = difference_ci(shared.astype(float), first, ~first)
    clustered = difference_ci(shared.astype(float), first, ~first, clusters)
    assert plain and clustered and clustered[1] - clustered[0] > plain[1] - plain[0]


# ---------------------------------------------------------------- tests against chance
def test_chance_p_is_the_exact_one_sided_binomial_test() -> None:
    from scipy.stats import binomtest

    from medlens.stats.bootstrap import group_spread

    values = np.r_[np.ones(12), np.zeros(28)]
    spread = group_spread(values, np.zeros(40))
    above = chance_p(spread, np.array([0.2]), "above")[0]
    below = chance_p(spread, np.array([0.5]), "below")[0]
    assert above == pytest.approx(binomtest(12, 40, 0.2, alternative="greater").pvalue)
    assert below == pytest.approx(binomtest(12, 40, 0.5, alternative="less").pvalue)
    clustered = group_spread(values, np.zeros(40), np.arange(40) % 4)  # 4 images, 10 q each
    assert chance_p(clustered, np.array([0.2]), "above")[0] >= above


def test_leakage_suspects_adjust_and_skip_small_cells() -> None:
    from medlens.execution.probes import leakage_suspects

    def cell(n: int, p: float, images: int | None = None) -> dict[str, object]:
        return {"n": n, "images": images or n, "score": 0.5, "ci": [0.4, 0.6], "random": 0.25,
                "p_above_chance": p}  # fmt: skip

    results = {
        "overall": cell(400, 0.2),
        "by": {"task": {"a": cell(100, 0.001), "b": cell(100, 0.03), "c": cell(3, 1e-9),
                        "d": cell(200, 1e-6, images=4)}},
    }  # fmt: skip
    flagged = leakage_suspects(results)
    assert [(s.axis, s.value) for s in flagged] == [("task", "a")]
    assert flagged[0].p_adjusted == pytest.approx(0.003)  # Holm over 3 tested cells
    assert [s.value for s in leakage_suspects(results, adjust="bh")] == ["a", "b"]


def test_spread_bounds_clip_and_handle_single_fractional_values() -> None:
    from medlens.stats.bootstrap import group_spread

    spread = group_spread(np.array([0.3]), np.zeros(1))
    lo, hi = spread_bounds(spread)
    assert (lo[0], hi[0]) == (0.0, 1.0)  # one non-0/1 value says nothing about the spread


# ---------------------------------------------------------------- multiplicity
@pytest.mark.parametrize(("ours", "theirs"), [("holm", "holm"), ("bh", "fdr_bh")])
def test_adjusted_p_values_match_statsmodels(
    ours: str, theirs: str, rng: np.random.Generator
) -> None:
    from statsmodels.stats.multitest import multipletests

    from medlens.stats.multiplicity import adjust

    for p in (rng.random(40) ** 3, np.array([0.01, 0.01, 0.04, 0.5, 1.0]), np.array([0.2])):
        assert adjust(p, ours) == pytest.approx(multipletests(p, method=theirs)[1])
    assert adjust(np.array([0.01, 0.2]), "none").tolist() == [0.01, 0.2]
    assert adjust(np.array([]), "holm").size == 0


def test_worst_cells_are_below_chance_only_after_holm(rng: np.random.Generator) -> None:
    from medlens.analysis.score_table import ScoreTable
    from medlens.analysis.slices import cube, slice_table, worst_cells
    from medlens.stats.multiplicity import adjust

    n = 1200
    dept = np.array([f"d{i % 6}" for i in range(n)], dtype=object)
    # d0 answers nothing right (chance 25%); the others guess at chance
    score = np.where(dept == "d0", 0.0, (rng.random(n) < 0.25).astype(float))
    table = ScoreTable(
        ids=[str(i) for i in range(n)], score=score, vlmeval=score.copy(),
        random=np.full(n, 0.25), status=np.array(["ok"] * n, dtype=object),
        cluster=np.array([str(i) for i in range(n)], dtype=object), meta={"dept": dept},
    )  # fmt: skip
    cells = cube(slice_table(table), ["dept"])
    worst = worst_cells(cells, 3)
    assert worst[0].label == "dept=d0" and worst[0].below_chance is True
    ranked = [c for c in cells if c.key]
    expected = adjust([c.p_below_chance for c in ranked], "holm")
    flags = {c.label: bool(q < 0.05) for c, q in zip(ranked, expected, strict=True)}
    assert all(c.below_chance == flags[c.label] for c in worst)
    assert "below_chance" in worst[1].to_json() and "below_chance" not in cells[1].to_json()

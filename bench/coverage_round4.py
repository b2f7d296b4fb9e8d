"""Coverage and width of the intervals issue 45 rebuilt, by simulation (known truth).

    PYTHONPATH=src .venv/bin/python bench/coverage_round4.py [--reps 1000] [--quick]
        [--only SUBSTRING] [--seed 0]

Every case draws `--reps` data sets whose truth is known, runs medlens's own function on them
(vectorised over the repetitions where the function is) and prints, per cell:

- the share of 95% intervals holding the truth ± its Monte-Carlo standard error (target ≥ 93%),
  the share of zero-width intervals and of repetitions without an interval (with why);
- the mean width against a simple reference interval (the t interval, the cluster-robust t, the
  oracle: the 2.5–97.5% quantiles of the estimate over the repetitions) and the reference's own
  coverage, so "needlessly wide" is a number: aim ≤ 1.5× a reference that covers, never > 2×.

`--quick` runs 200 repetitions of a few cells per group (about a minute). The groups:
bounded means (rubric ratings, fractional scores; independent and on shared images), paired
fractional differences, screening points (sensitivity at a fixed specificity and the reverse),
per-group AUROC and the largest AUROC gap, MMBU's across-task Δ, corpus statistics and box
micro-F1 on few images, and ``estimate`` (bench/items.py holds the item-bank worlds).
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
from scipy import stats

from medlens.stats.bootstrap import group_cis

TARGET = 0.93


@dataclass
class Outcome:
    """One cell's intervals over the repetitions (NaN bounds: no interval)."""

    lo: np.ndarray
    hi: np.ndarray
    truth: np.ndarray | float
    ref_lo: np.ndarray | None = None
    ref_hi: np.ndarray | None = None
    reference: str = ""
    estimate: np.ndarray | None = None
    """Point estimates: the oracle reference is their 2.5–97.5% spread."""


Case = tuple[str, str, Callable[[np.random.Generator, int], Outcome]]
"""(group, label, (rng, reps) → outcome)."""


# -- bounded means --------------------------------------------------------------------------
def _rating_law(weights: list[float]) -> np.ndarray:
    p = np.asarray(weights, float)
    return p / p.sum()


RATINGS = {  # 0–10 rating → probability (judge-like rubric dimensions)
    "ceiling-heavy": _rating_law([1, 0, 0, 0, 1, 2, 3, 5, 13, 30, 45]),
    "floor-heavy": _rating_law([50, 20, 10, 5, 5, 3, 2, 2, 1, 1, 1]),
    "tight 7/8/9 (.2/.6/.2)": _rating_law([0, 0, 0, 0, 0, 0, 0, 20, 60, 20, 0]),
    "two-valued 8/9 (.9/.1)": _rating_law([0, 0, 0, 0, 0, 0, 0, 0, 90, 10, 0]),
    "two-valued 8/9 (.97/.03)": _rating_law([0, 0, 0, 0, 0, 0, 0, 0, 97, 3, 0]),
    "Binomial(10, .85)": stats.binom.pmf(np.arange(11), 10, 0.85),
    "rare 0, else 9-10": _rating_law([5, 0, 0, 0, 0, 0, 0, 0, 0, 45, 50]),
    "constant 8": _rating_law([0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0]),
}


def t_interval(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise t interval of (reps × n) values."""
    n = values.shape[1]
    half = stats.t.ppf(0.975, n - 1) * values.std(axis=1, ddof=1) / math.sqrt(n)
    mean = values.mean(axis=1)
    return mean - half, mean + half


def cluster_t(values: np.ndarray, image: np.ndarray, reps: int) -> tuple[np.ndarray, ...]:
    """Per repetition (values flattened, `image` global codes, rep = image // 1000): the
    cluster-robust t(G − 1) interval of the mean (CR1, ratio estimator)."""
    rep = image // 1000
    codes, inverse = np.unique(image, return_inverse=True)
    sums = np.bincount(inverse, values)
    sizes = np.bincount(inverse).astype(float)
    owner = codes // 1000
    n = np.bincount(owner, sizes, minlength=reps)
    mean = np.bincount(rep, values, minlength=reps) / n
    residual = sums - mean[owner] * sizes
    g = np.bincount(owner, minlength=reps).astype(float)
    se = np.sqrt(g / (g - 1) * np.bincount(owner, residual**2, minlength=reps)) / n
    half = stats.t.ppf(0.975, g - 1) * se
    return mean - half, mean + half


def rating_case(law: np.ndarray, n: int) -> Callable[..., Outcome]:
    truth = float(np.arange(11) @ law) / 10

    def run(rng: np.random.Generator, reps: int) -> Outcome:
        values = rng.choice(11, (reps, n), p=law) / 10
        lo, hi = group_cis(values.ravel(), np.repeat(np.arange(reps), n))
        t_lo, t_hi = t_interval(values)
        return Outcome(lo, hi, truth, t_lo, t_hi, "t")

    return run


def clustered_rating_case(law: np.ndarray, images: int, icc: float) -> Callable[..., Outcome]:
    """1–4 ratings per image; with probability `icc` an image's ratings are one draw repeated."""
    truth = float(np.arange(11) @ law) / 10

    def run(rng: np.random.Generator, reps: int) -> Outcome:
        sizes = rng.integers(1, 5, (reps, images)).ravel()
        image = np.repeat(np.arange(reps * images), sizes)
        image = (image // images) * 1000 + image % images
        shared = rng.random(reps * images) < icc
        own = rng.choice(11, image.size, p=law) / 10
        first = np.repeat(np.cumsum(sizes) - sizes, sizes)
        values = np.where(np.repeat(shared, sizes), own[first], own)
        lo, hi = group_cis(values, image // 1000, image)
        c_lo, c_hi = cluster_t(values, image, reps)
        return Outcome(lo, hi, truth, c_lo, c_hi, "cluster t")

    return run


def fractional_case(n: int) -> Callable[..., Outcome]:
    """ROUGE-like scores: 30% zeros, the rest Beta(2, 3) (mean 0.28)."""

    def run(rng: np.random.Generator, reps: int) -> Outcome:
        values = np.where(rng.random((reps, n)) < 0.3, 0.0, rng.beta(2, 3, (reps, n)))
        lo, hi = group_cis(values.ravel(), np.repeat(np.arange(reps), n))
        t_lo, t_hi = t_interval(values)
        return Outcome(lo, hi, 0.28, t_lo, t_hi, "t")

    return run


def bounded_cases(quick: bool) -> Iterator[Case]:
    sizes = (10, 40) if quick else (5, 10, 20, 30, 40, 60, 100, 200)
    for name, law in RATINGS.items():
        if quick and name not in (
            "ceiling-heavy",
            "two-valued 8/9 (.9/.1)",
            "tight 7/8/9 (.2/.6/.2)",
        ):
            continue
        for n in sizes:
            yield "rubric 0–10 mean", f"{name}, n={n}", rating_case(law, n)
    for images in (8, 20) if quick else (5, 8, 20, 40):
        for name in (
            "ceiling-heavy",
            "tight 7/8/9 (.2/.6/.2)",
            "two-valued 8/9 (.9/.1)",
            "rare 0, else 9-10",
            "constant 8",
        ):
            label = f"{name}, {images} images × 1-4, shared 50%"
            yield (
                "rubric 0–10 mean, clustered",
                label,
                clustered_rating_case(RATINGS[name], images, 0.5),
            )
    for n in (10, 40) if quick else (5, 10, 20, 40, 100):
        yield "fractional scores (ROUGE-like)", f"n={n}", fractional_case(n)


# -- paired fractional differences ---------------------------------------------------------
def paired_draw(world: str, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(a, b) on n items of one world (PAIRED_TRUTH holds E[b − a])."""
    if world == "ROUGE-like, B slightly better":
        a = np.where(rng.random(n) < 0.3, 0.0, rng.beta(2, 3, n))
        return a, np.clip(a + rng.normal(0.03, 0.1, n), 0, 1)
    if world == "ratings /10, tight":
        a = rng.choice(11, n, p=RATINGS["tight 7/8/9 (.2/.6/.2)"]) / 10
        return a, a + rng.choice([-0.1, 0.0, 0.1], n, p=[0.2, 0.5, 0.3])
    u = rng.random(n)  # token F1 of two models sharing the easy items
    a = np.where(u < 0.4, 0.0, np.where(u < 0.7, 1.0, rng.random(n)))
    b = np.where(rng.random(n) < 0.2, np.where(rng.random(n) < 0.55, 1.0, 0.0), a)
    return a, b


PAIRED_TRUTH = {
    "ROUGE-like, B slightly better": None,  # computed by simulation once (clipping)
    "ratings /10, tight": 0.01,
    "token F1, 20% of items redrawn": 0.2 * (0.55 - 0.45),
}


def paired_truth(world: str) -> float:
    known = PAIRED_TRUTH[world]
    if known is not None:
        return known
    a, b = paired_draw(world, np.random.default_rng(12345), 4_000_000)
    return float((b - a).mean())


def paired_case(world: str, n: int, images: int | None) -> Callable[..., Outcome]:
    from medlens.stats.paired import paired_ci

    truth = paired_truth(world)

    def run(rng: np.random.Generator, reps: int) -> Outcome:
        lo, hi = np.empty(reps), np.empty(reps)
        r_lo, r_hi = np.empty(reps), np.empty(reps)
        for r in range(reps):
            a, b = paired_draw(world, rng, n)
            clusters = None if images is None else np.sort(rng.integers(0, images, n))
            if clusters is not None:  # an image's items move together: one shift per image
                b = np.clip(b + rng.normal(0, 0.05, images)[clusters], -1, 2)
            lo[r], hi[r] = paired_ci(a, b, clusters)
            d = b - a
            if clusters is None:
                half = stats.t.ppf(0.975, n - 1) * d.std(ddof=1) / math.sqrt(n)
            else:
                sums = np.bincount(clusters, d - d.mean(), minlength=images)
                g = int((np.bincount(clusters, minlength=images) > 0).sum())
                half = stats.t.ppf(0.975, g - 1) * math.sqrt(g / (g - 1) * (sums**2).sum()) / n
            r_lo[r], r_hi[r] = d.mean() - half, d.mean() + half
        return Outcome(lo, hi, truth, r_lo, r_hi, "t" if images is None else "cluster t")

    return run


def paired_cases(quick: bool) -> Iterator[Case]:
    for world in PAIRED_TRUTH:
        for n in (10, 40) if quick else (10, 20, 40, 100, 200):
            yield (
                "paired_ci, fractional differences",
                f"{world}, n={n}",
                paired_case(world, n, None),
            )
        for images in () if quick else (10, 30):
            label = f"{world}, {3 * images} items on {images} images"
            yield "paired_ci, fractional differences", label, paired_case(world, 3 * images, images)


# -- corpus statistics on few images ---------------------------------------------------------
def box_world(rng: np.random.Generator, images: int, per: int) -> tuple[np.ndarray, np.ndarray]:
    """Items × (matched, predicted, gold) boxes: 1–3 gold boxes per item, found at an image-level
    rate Beta(3, 2), plus Poisson(0.6) false boxes."""
    rate = rng.beta(3, 2, images)
    image = np.repeat(np.arange(images), per)
    gold = rng.integers(1, 4, image.size)
    matched = rng.binomial(gold, rate[image])
    return np.column_stack([matched, matched + rng.poisson(0.6, image.size), gold]).astype(
        float
    ), image


def bleu_world(rng: np.random.Generator, images: int, per: int) -> tuple[np.ndarray, np.ndarray]:
    """sacrebleu's sentence statistics of reports whose n-gram precision varies by image."""
    quality = rng.beta(4, 3, images)
    image = np.repeat(np.arange(images), per)
    length = rng.integers(8, 30, image.size)
    reference = np.maximum(1, length + rng.integers(-4, 5, image.size))
    totals = np.stack([np.maximum(length - k, 0) for k in range(4)], axis=1)
    precision = np.clip(quality[image, None] * np.array([1.04, 0.72, 0.52, 0.39]), 0, 1)
    matches = rng.binomial(totals, precision)
    return np.column_stack([length, reference, matches, totals]).astype(float), image


def variant_world(rng: np.random.Generator, images: int, per: int) -> tuple[np.ndarray, np.ndarray]:
    """(tp, fp, fn) of variant calls per sample; recall and false calls vary by sample."""
    recall = rng.beta(8, 2, images)
    image = np.repeat(np.arange(images), per)
    truth = rng.poisson(6, image.size)
    tp = rng.binomial(truth, recall[image])
    return np.column_stack([tp, rng.poisson(1.0, image.size), truth - tp]).astype(float), image


def macro_world(rng: np.random.Generator, images: int, per: int) -> tuple[np.ndarray, np.ndarray]:
    """Three-class labels, accuracy Beta(6, 3) by image: (tp, gold, predicted) per class."""
    accuracy = rng.beta(6, 3, images)
    image = np.repeat(np.arange(images), per)
    gold = rng.integers(0, 3, image.size)
    right = rng.random(image.size) < accuracy[image]
    predicted = np.where(right, gold, (gold + rng.integers(1, 3, image.size)) % 3)
    g, p = np.eye(3)[gold], np.eye(3)[predicted]
    return np.hstack([g * p, g, p]), image


def corpus_case(world: str, images: int, per: int) -> Callable[..., Outcome]:
    from medlens.scoring import corpus_stats
    from medlens.scoring.corpus_metrics import corpus_ci

    draw, statistic = {
        "box micro-F1 (detect f1_50, MMBU)": (box_world, corpus_stats.box_f1_from_sums),
        "corpus BLEU-4": (bleu_world, corpus_stats.bleu_from_sums),
        "variant-calling F1": (variant_world, corpus_stats.f1_from_counts),
        "macro-F1, 3 classes": (macro_world, corpus_stats.macro_f1_from_sums),
    }[world]
    big, _ = draw(np.random.default_rng(99), 200_000, per)
    truth = float(statistic(big.sum(axis=0)[None])[0])

    def run(rng: np.random.Generator, reps: int) -> Outcome:
        lo, hi, estimate = np.empty(reps), np.empty(reps), np.empty(reps)
        for r in range(reps):
            sums, image = draw(rng, images, per)
            estimate[r] = float(statistic(sums.sum(axis=0)[None])[0])
            lo[r], hi[r] = corpus_ci(sums, image.astype(str), statistic)
        return Outcome(lo, hi, truth, estimate=estimate)

    return run


CORPUS_WORLDS = ("box micro-F1 (detect f1_50, MMBU)", "corpus BLEU-4", "variant-calling F1",
                 "macro-F1, 3 classes")  # fmt: skip


def corpus_cases(quick: bool) -> Iterator[Case]:
    for world in CORPUS_WORLDS:
        for images in (10,) if quick else (3, 5, 10, 20, 40):
            label = f"{world}, {images} images × 3 items"
            yield "corpus statistics (cluster jackknife)", label, corpus_case(world, images, 3)


# -- MMBU's across-task mean Δ ---------------------------------------------------------------
TASK_BASE = ((2.0, 0.6), (1.5, 0.2), (1.0, -0.2))
"""(closed, open) logits of the three tasks: Δ about 0.2–0.3, as MMBU reports."""


def task_rates(u: np.ndarray, v: np.ndarray, task: int) -> tuple[np.ndarray, np.ndarray]:
    """Closed and open success rates on images with effects u (shared by both forms) and v
    (open answers only, shared by every task on the image)."""
    closed, opened = TASK_BASE[task]
    return 1 / (1 + np.exp(-(closed + u))), 1 / (1 + np.exp(-(opened + u + v)))


def across_task_truth(spread: float) -> float:
    rng = np.random.default_rng(2024)
    u, v = rng.normal(0, 1, 2_000_000), rng.normal(0, spread, 2_000_000)
    return float(np.mean([np.subtract(*task_rates(u, v, t)).mean() for t in range(3)]))


def across_task_case(images: int, spread: float) -> Callable[..., Outcome]:
    """MMBU-like: every image is asked all three tasks, 1–2 samples each, closed and open."""
    from medlens.analysis.task_mean import TaskItems, task_mean_delta
    from medlens.scoring.closed_open import closed_open_delta

    truth = across_task_truth(spread)

    def run(rng: np.random.Generator, reps: int) -> Outcome:
        lo, hi, estimate = np.full(reps, np.nan), np.full(reps, np.nan), np.full(reps, np.nan)
        for r in range(reps):
            u, v = rng.normal(0, 1, images), rng.normal(0, spread, images)
            task, form, keys, score, image = [], [], [], [], []
            for t in range(3):
                closed, opened = task_rates(u, v, t)
                per = rng.integers(1, 3, images)
                img = np.repeat(np.arange(images), per)
                c = (rng.random(img.size) < closed[img]).astype(float)
                o = (rng.random(img.size) < opened[img]).astype(float)
                for k in range(img.size):
                    for f, value in (("closed", c[k]), ("open", o[k])):
                        task.append(str(t))
                        form.append(f)
                        keys.append(("s", f"{t}-{k}"))
                        score.append(value)
                        image.append(img[k])
            shared = TaskItems(np.array(task), np.array(form, dtype=object), keys,
                               np.array(score), np.array(image))  # fmt: skip
            by = {}
            for t in "012":
                chosen = np.flatnonzero(shared.task == t)
                by[t] = closed_open_delta(shared.form[chosen], [keys[i] for i in chosen.tolist()],
                                          shared.score[chosen], shared.image[chosen])  # fmt: skip
            found = task_mean_delta({"by": {"task": by}}, shared=shared)
            if found is not None:
                lo[r], hi[r] = found["ci"]
                estimate[r] = found["delta"]
        return Outcome(lo, hi, truth, estimate=estimate)

    return run


def across_task_cases(quick: bool) -> Iterator[Case]:
    for images in (20,) if quick else (10, 20, 40, 100):
        for spread in (0.0, 1.0, 2.0):
            label = f"{images} images × 3 tasks, open effect sd {spread:g} per image"
            yield "MMBU across-task mean Δ", label, across_task_case(images, spread)


# -- screening points, per-group AUROC, the largest AUROC gap -----------------------------------
def binormal(
    rng: np.random.Generator, n: int, prevalence: float, d: float, per_image: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(score, positive, image): negatives N(0, 1), positives N(d, 1); with `per_image` > 1 the
    items of one image share a N(0, 0.7) shift and their class (one patient, several views)."""
    images = math.ceil(n / per_image)
    positive = np.repeat(rng.random(images) < prevalence, per_image)[:n]
    image = np.repeat(np.arange(images), per_image)[:n]
    shift = rng.normal(0, 0.7, images)[image] if per_image > 1 else 0.0
    score = rng.normal(0, 1, n) + shift + d * positive
    return score, positive, image


def screening_truth(d: float, target: float, per_image: int, kind: str) -> float:
    spread = math.sqrt(1 + (0.49 if per_image > 1 else 0.0))
    if kind == "sensitivity":  # at specificity `target`
        cut = stats.norm.ppf(target) * spread
        return float(stats.norm.sf((cut - d) / spread))
    cut = d + stats.norm.ppf(1 - target) * spread  # specificity at sensitivity `target`
    return float(stats.norm.cdf(cut / spread))


def screening_case(
    n: int, prevalence: float, d: float, per_image: int, kind: str
) -> Callable[..., Outcome]:
    from medlens.stats.operating_point import sensitivity_at, specificity_at

    function, target = (sensitivity_at, 0.9) if kind == "sensitivity" else (specificity_at, 0.9)
    truth = screening_truth(d, target, per_image, kind)

    def run(rng: np.random.Generator, reps: int) -> Outcome:
        lo, hi, estimate = np.full(reps, np.nan), np.full(reps, np.nan), np.full(reps, np.nan)
        for r in range(reps):
            score, positive, image = binormal(rng, n, prevalence, d, per_image)
            found = function(score, positive, target, image)
            estimate[r] = np.nan if found.value is None else found.value
            if found.ci is not None:
                lo[r], hi[r] = found.ci
        return Outcome(lo, hi, truth, estimate=estimate)

    return run


def auroc_case(n: int, prevalence: float, d: float, per_image: int) -> Callable[..., Outcome]:
    from medlens.stats.auroc import auroc_ci

    spread = math.sqrt(2 * (1 + (0.49 if per_image > 1 else 0.0)))
    truth = float(stats.norm.cdf(d / spread))

    def run(rng: np.random.Generator, reps: int) -> Outcome:
        lo, hi, estimate = np.full(reps, np.nan), np.full(reps, np.nan), np.full(reps, np.nan)
        for r in range(reps):
            score, positive, image = binormal(rng, n, prevalence, d, per_image)
            value, ci = auroc_ci(np.column_stack([-score, score]), positive.astype(int),
                                 image if per_image > 1 else None)  # fmt: skip
            if value is not None and ci is not None:
                estimate[r], (lo[r], hi[r]) = value, ci
        return Outcome(lo, hi, truth, estimate=estimate)

    return run


def auroc_gap_case(
    group_n: int, aurocs: tuple[float, ...], prevalence: float
) -> Callable[..., Outcome]:
    """K groups of `group_n` items, binormal with the given AUROCs; the truth is their range."""
    from medlens.analysis.subgroup_gaps import largest_gap
    from medlens.scoring.corpus_metrics import item_weights

    shifts = [math.sqrt(2) * stats.norm.ppf(a) for a in aurocs]
    names = [f"g{k}" for k in range(len(aurocs))]
    groups = np.repeat(names, group_n).astype(object)
    weights = item_weights(np.arange(groups.size).astype(str))

    def run(rng: np.random.Generator, reps: int) -> Outcome:
        lo, hi, estimate = np.full(reps, np.nan), np.full(reps, np.nan), np.full(reps, np.nan)
        for r in range(reps):
            positive = rng.random(groups.size) < prevalence
            score = rng.normal(0, 1, groups.size) + np.repeat(shifts, group_n) * positive
            probs = {"matrix": np.column_stack([-score, score]), "truth": positive.astype(int)}
            cells = {}
            for k, name in enumerate(names):
                part = slice(k * group_n, (k + 1) * group_n)
                both = 0 < positive[part].sum() < group_n
                value = float(stats.mannwhitneyu(score[part][positive[part]],
                              score[part][~positive[part]]).statistic / (positive[part].sum()
                              * (~positive[part]).sum())) if both else None  # fmt: skip
                cells[name] = {"small": False, "auroc": value}
            gap = largest_gap(names, groups, weights, cells, "auroc", np.zeros(groups.size), probs)
            if gap is not None and gap["ci"] is not None and gap["groups"] == len(names):
                estimate[r], (lo[r], hi[r]) = gap["value"], gap["ci"]
        return Outcome(lo, hi, max(aurocs) - min(aurocs), estimate=estimate)

    return run


def subgroup_cases(quick: bool) -> Iterator[Case]:
    for kind in ("sensitivity", "specificity"):
        group = f"{kind} at {'specificity' if kind == 'sensitivity' else 'sensitivity'} 0.9"
        for n, prevalence in (
            ((100, 0.1),) if quick else ((50, 0.1), (100, 0.1), (300, 0.1), (50, 0.3), (300, 0.3))
        ):
            for d in (1.0, 3.0) if quick else (1.0, 2.0, 3.0):
                for per_image in (1, 3):
                    label = f"n={n}, prevalence {prevalence}, d={d:g}" + (
                        ", 3 per image" if per_image > 1 else ""
                    )
                    yield group, label, screening_case(n, prevalence, d, per_image, kind)
    for n, prevalence in (
        ((100, 0.1),) if quick else ((50, 0.1), (100, 0.1), (300, 0.1), (50, 0.3), (300, 0.3))
    ):
        for d in (2.5, 3.3) if quick else (1.0, 2.5, 3.3):
            for per_image in (1, 3):
                auc = stats.norm.cdf(d / math.sqrt(2 * (1 + (0.49 if per_image > 1 else 0))))
                label = f"n={n}, prevalence {prevalence}, AUROC {auc:.3f}" + (
                    ", 3 per image" if per_image > 1 else ""
                )
                yield "per-group AUROC", label, auroc_case(n, prevalence, d, per_image)
    for group_n in (60,) if quick else (50, 100):
        for aurocs in ((0.85, 0.85), (0.75, 0.9), (0.85, 0.85, 0.85), (0.75, 0.85, 0.95)):
            label = f"{len(aurocs)} groups × {group_n}, prevalence 0.1, AUROCs {'/'.join(map(str, aurocs))}"
            yield "largest AUROC gap", label, auroc_gap_case(group_n, aurocs, 0.1)


# -- the harness ----------------------------------------------------------------------------
def cases(quick: bool) -> Iterator[Case]:
    yield from bounded_cases(quick)
    yield from paired_cases(quick)
    yield from corpus_cases(quick)
    yield from across_task_cases(quick)
    yield from subgroup_cases(quick)


def summary(out: Outcome) -> dict[str, float]:
    truth = np.broadcast_to(np.asarray(out.truth, float), out.lo.shape)
    have = np.isfinite(out.lo) & np.isfinite(out.hi)
    lo, hi, t = out.lo[have], out.hi[have], truth[have]
    result = {
        "coverage": float(np.mean((lo - 1e-9 <= t) & (t <= hi + 1e-9))) if have.any() else math.nan,
        "done": float(have.sum()),
        "missing": float((~have).sum()),
        "zero": float(np.mean(hi - lo < 1e-12)) if have.any() else 0.0,
        "width": float(np.mean(hi - lo)) if have.any() else math.nan,
    }
    if out.ref_lo is not None and out.ref_hi is not None:
        ok = have & np.isfinite(out.ref_lo) & np.isfinite(out.ref_hi)
        r_lo, r_hi = out.ref_lo[ok], out.ref_hi[ok]
        result["ref_coverage"] = float(
            np.mean((r_lo - 1e-9 <= truth[ok]) & (truth[ok] <= r_hi + 1e-9))
        )
        reference = float(np.mean(r_hi - r_lo))
        result["ratio"] = (
            float(np.mean(out.hi[ok] - out.lo[ok])) / reference if reference > 1e-9 else math.inf
        )
    elif out.estimate is not None:
        finite = out.estimate[np.isfinite(out.estimate)]
        oracle = float(np.diff(np.percentile(finite, [2.5, 97.5]))[0]) if finite.size else math.nan
        result["ratio"] = result["width"] / oracle if oracle > 0 else math.nan
    return result


def line(label: str, s: dict[str, float], reference: str) -> str:
    if not s["done"]:
        return f"  {label:46s} no interval (by design: too few to be honest)"
    error = math.sqrt(max(s["coverage"] * (1 - s["coverage"]), 1e-12) / max(s["done"], 1))
    verdict = "meets" if s["coverage"] >= TARGET else "MISSES"
    text = f"  {label:46s} {100 * s['coverage']:5.1f}% ± {100 * error:3.1f} {verdict:6s}"
    if s.get("ratio") == math.inf:
        text += f"  ({reference or 'oracle'} zero-width)"
    elif "ratio" in s and math.isfinite(s["ratio"]):
        text += f"  width {s['ratio']:4.2f}× {reference or 'oracle'}"
        if "ref_coverage" in s:
            text += f" (covers {100 * s['ref_coverage']:5.1f}%)"
    if s["zero"]:
        text += f"  zero-width {100 * s['zero']:.1f}%"
    if s["missing"]:
        text += f"  no interval {int(s['missing'])}"
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="200 repetitions, a few cells")
    parser.add_argument("--only", default="", help="run the groups whose name holds this text")
    args = parser.parse_args()
    reps = 200 if args.quick else args.reps
    start, group, misses = time.perf_counter(), "", []
    for case_group, label, run in cases(args.quick):
        if args.only.lower() not in case_group.lower():
            continue
        rng = np.random.default_rng([args.seed, sum(map(ord, case_group + label))])
        out = run(rng, reps)
        s = summary(out)
        if case_group != group:
            group = case_group
            print(f"\n{group}", flush=True)
        print(line(label, s, out.reference), flush=True)
        if s["done"] and not s["coverage"] >= TARGET:
            misses.append(f"{case_group}: {label}")
    print(f"\n{reps} repetitions per cell, {time.perf_counter() - start:.0f} s")
    print("misses: " + ("; ".join(misses) if misses else "none"))


if __name__ == "__main__":
    main()

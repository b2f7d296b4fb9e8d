"""Coverage of the intervals added with judges, layouts and boards (issue 35), by simulation.

    PYTHONPATH=src .venv/bin/python bench/coverage_intervals.py [--reps 1000] [--seed 0]
        [--only SUBSTRING]

Every case draws data whose truth is known, runs medlens's own function on it and prints the
share of 95% intervals holding the truth ± its Monte-Carlo standard error, the share of
zero-width intervals, and the target (≥ 93%). The regimes are where the seed benchmarks live:
few images (3, 8, 20), scores near a ceiling, skewed 0–10 ratings, unbalanced images, few
labelled images, few items. bench/coverage.py holds the earlier rounds' cases.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from medlens.judges.calibration import calibrated_score
from medlens.judges.results import mean_ci
from medlens.ratings.winratio import win_ratios
from medlens.scoring.closed_open import closed_open_delta
from medlens.scoring.corpus_stats import box_f1_from_sums
from medlens.scoring.mmbu import box_f1_ci
from medlens.stats.agreement import krippendorff_alpha_ci
from medlens.stats.bootstrap import group_cis

Interval = tuple[float, float] | list[float] | None
Case = tuple[str, str, Callable[[np.random.Generator], tuple[Interval, float]]]
"""(group, label, one repetition → (interval, truth))."""
TARGET = 0.93


# -- closed − open Δ -------------------------------------------------------------------------
def delta_case(images: int, closed: float, opened: float, coupled: bool) -> Callable[..., Any]:
    """MMBU-like samples: 1–4 per image, each asked closed and open; image-level rates drawn
    Beta (ICC 0.2) around the two means, the forms of one sample comonotone (`coupled`: the
    open answer right ⇒ the closed one right when rates allow) or independent."""
    from scipy.stats import beta

    k = 1 / 0.2 - 1

    def run(rng: np.random.Generator) -> tuple[Interval, float]:
        sizes = rng.integers(1, 5, images)
        u = rng.random(images)
        rate_c = beta.ppf(u, closed * k, (1 - closed) * k)
        rate_o = beta.ppf(u, opened * k, (1 - opened) * k)
        image = np.repeat(np.arange(images), sizes)
        v = rng.random(image.size)
        w = v if coupled else rng.random(image.size)
        c, o = (v < rate_c[image]).astype(float), (w < rate_o[image]).astype(float)
        keys = [("s", str(i)) for i in range(image.size)] * 2
        forms = np.array(["closed"] * image.size + ["open"] * image.size, dtype=object)
        gap = closed_open_delta(forms, keys, np.r_[c, o], np.r_[image, image])
        return (None if gap is None else gap["delta_ci"]), closed - opened

    return run


# -- rubric 0–10 means -----------------------------------------------------------------------
RUBRIC = {  # rating 0…10 → probability
    "ceiling-heavy": [0.01, 0, 0, 0, 0.01, 0.02, 0.03, 0.05, 0.13, 0.3, 0.45],
    "floor-heavy": [0.5, 0.2, 0.1, 0.05, 0.05, 0.03, 0.02, 0.02, 0.01, 0.01, 0.01],
    "two-valued 8/10": [0, 0, 0, 0, 0, 0, 0, 0, 0.9, 0, 0.1],
    "rare zero, else 9-10": [0.05, 0, 0, 0, 0, 0, 0, 0, 0, 0.45, 0.5],
    "constant 8": [0, 0, 0, 0, 0, 0, 0, 0, 1.0, 0, 0],
}


def rubric_case(shape: str, n: int) -> Callable[..., Any]:
    p = np.array(RUBRIC[shape]) / sum(RUBRIC[shape])
    truth = float(np.arange(11) @ p)

    def run(rng: np.random.Generator) -> tuple[Interval, float]:
        values = rng.choice(11, n, p=p).astype(float)
        return mean_ci(values, np.arange(n).astype(str), 10.0)["ci"], truth

    return run


def rubric_clustered_case(images: int, a: float, b: float) -> Callable[..., Any]:
    """1–4 ratings per image, rating ~ Binomial(10, q_image), q ~ Beta(a, b)."""

    def run(rng: np.random.Generator) -> tuple[Interval, float]:
        sizes = rng.integers(1, 5, images)
        q = rng.beta(a, b, images)
        image = np.repeat(np.arange(images), sizes)
        values = rng.binomial(10, q[image]).astype(float)
        return mean_ci(values, image.astype(str), 10.0)["ci"], 10 * a / (a + b)

    return run


# -- PPI with whole images labelled --------------------------------------------------------------
def ppi_case(images: int, labelled_images: int) -> Callable[..., Any]:
    """bench/ppi.py's judge (misses 20% of right answers, accepts 5% of wrong ones) on
    `images` × 4 questions (ICC 0.3, μ = 0.6); people label `labelled_images` whole images."""
    mu, icc = 0.6, 0.3
    a, b = mu * (1 / icc - 1), (1 - mu) * (1 / icc - 1)

    def run(rng: np.random.Generator) -> tuple[Interval, float]:
        image = np.repeat(np.arange(images), 4)
        y = (rng.random(image.size) < rng.beta(a, b, images)[image]).astype(float)
        f = np.where(y == 1, rng.random(y.size) >= 0.2, rng.random(y.size) < 0.05).astype(float)
        ids = [f"i{k}" for k in range(y.size)]
        chosen = np.flatnonzero(np.isin(image, rng.choice(images, labelled_images, replace=False)))
        found = calibrated_score(
            dict(zip(ids, f.tolist(), strict=True)), ids, {ids[k]: float(y[k]) for k in chosen},
            {i: f"m{g}" for i, g in zip(ids, image.tolist(), strict=True)},
        )  # fmt: skip
        return found["ci"], mu

    return run


# -- scores of unbalanced cells -------------------------------------------------------------------
def unbalanced_case(images: int, p: float, share: float) -> Callable[..., Any]:
    """One image holds `share` of the cell's questions, the others 1–3 each; image rates Beta
    with mean p and ICC 0.3."""
    icc = 0.3
    a, b = p * (1 / icc - 1), (1 - p) * (1 / icc - 1)

    def run(rng: np.random.Generator) -> tuple[Interval, float]:
        sizes = rng.integers(1, 4, images)
        sizes[0] = max(1, round(share / (1 - share) * sizes[1:].sum()))
        image = np.repeat(np.arange(images), sizes)
        values = (rng.random(image.size) < rng.beta(a, b, images)[image]).astype(float)
        lo, hi = group_cis(values, np.zeros(values.size, np.intp), image)
        return (float(lo[0]), float(hi[0])), p

    return run


# -- box micro-F1 ---------------------------------------------------------------------------------
def box_case(images: int) -> Callable[..., Any]:
    """1–3 gold boxes per image, each found with an image-level rate r ~ Beta(3, 2), plus
    Poisson(0.6) false boxes: micro-F1 = 2·E[G]E[r] / (E[G]E[r] + 0.6 + E[G]) in the limit."""
    gold_mean, rate, false = 2.0, 0.6, 0.6
    truth = 2 * gold_mean * rate / (gold_mean * rate + false + gold_mean)

    def run(rng: np.random.Generator) -> tuple[Interval, float]:
        gold = rng.integers(1, 4, images).astype(float)
        matched = rng.binomial(gold.astype(int), rng.beta(3, 2, images)).astype(float)
        predicted = matched + rng.poisson(false, images)
        stats = np.stack([matched, predicted, gold], axis=1)
        if not np.isfinite(box_f1_from_sums(stats.sum(axis=0)[None])[0]):
            return None, truth
        return box_f1_ci(stats, np.arange(images).astype(str)), truth

    return run


# -- Krippendorff's α, win ratios, fractional scores ----------------------------------------------
def alpha_case(units: int, coders: int) -> Callable[..., Any]:
    """Coders rate yes/no independently with the same marginal (0.6 yes): α = 0."""

    def run(rng: np.random.Generator) -> tuple[Interval, float]:
        ratings = (rng.random((units, coders)) < 0.6).astype(float)
        return krippendorff_alpha_ci(ratings.tolist(), "nominal"), 0.0

    return run


def win_ratio_case(items: int, models: int) -> Callable[..., Any]:
    """People's and the judge's item scores drawn independently from one law per item and
    model (skill per model): the true people − judge win-ratio difference is 0."""

    def run(rng: np.random.Generator) -> tuple[Interval, float]:
        skill = np.linspace(0.4, 0.8, models)
        names = [f"m{k}" for k in range(models)]
        ids = [f"q{k}" for k in range(items)]
        ease = rng.beta(2, 2, items)

        def draw() -> list[dict[str, float]]:
            return [{i: float(rng.random() < (s + e) / 2) for i, e in zip(ids, ease, strict=True)}
                    for s in skill]  # fmt: skip

        out = win_ratios(names, draw(), draw())
        return out["models"]["m0"]["difference_ci"], 0.0

    return run


def fractional_case(n: int) -> Callable[..., Any]:
    """Token-F1-like scores: 40% zeros, 30% ones, 30% uniform (mean 0.45)."""

    def run(rng: np.random.Generator) -> tuple[Interval, float]:
        u = rng.random(n)
        values = np.where(u < 0.4, 0.0, np.where(u < 0.7, 1.0, rng.random(n)))
        lo, hi = group_cis(values, np.zeros(n, np.intp))
        return (float(lo[0]), float(hi[0])), 0.45

    return run


def cases() -> Iterator[Case]:
    for images in (3, 8, 20):
        for closed, opened in ((0.7, 0.5), (0.97, 0.95), (0.95, 0.95)):
            for coupled in (True, False):
                label = f"{images} images, {closed}/{opened}, " + (
                    "coupled" if coupled else "independent"
                )
                yield "closed−open Δ (paired)", label, delta_case(images, closed, opened, coupled)
    for shape in RUBRIC:
        for n in (10, 30, 100):
            yield "rubric 0–10 mean", f"{shape}, n={n}", rubric_case(shape, n)
    for images, a, b in ((8, 6, 1), (8, 2, 2), (20, 6, 1), (20, 9, 1)):
        label = f"{images} images × 1-4, Binomial(10, Beta({a},{b}))"
        yield "rubric 0–10 mean, clustered", label, rubric_clustered_case(images, a, b)
    for images, labelled in ((500, 10), (300, 6), (200, 4)):
        yield (
            "PPI, whole images labelled",
            f"{labelled} of {images} images",
            ppi_case(images, labelled),
        )
    for images in (10, 20, 40):
        for p in (0.3, 0.9):
            for share in (0.5, 0.8):
                label = f"{images} images, one holds {share:.0%}, p={p}"
                yield "unbalanced cells", label, unbalanced_case(images, p, share)
    for images in (5, 10, 20, 40):
        yield "box micro-F1", f"{images} images", box_case(images)
    for units in (30, 100):
        yield "Krippendorff's α (nominal, 2 coders)", f"α = 0, {units} units", alpha_case(units, 2)
    for items in (30, 100):
        yield "win-ratio difference (3 models)", f"{items} items", win_ratio_case(items, 3)
    for n in (3, 5, 10):
        yield "fractional scores (token-F1-like)", f"n={n}", fractional_case(n)


def measure(
    run: Callable[..., Any], reps: int, rng: np.random.Generator
) -> tuple[float, float, int]:
    """(coverage, zero-width share, repetitions without an interval)."""
    hits = zero = missing = 0
    for _ in range(reps):
        ci, truth = run(rng)
        if ci is None:
            missing += 1
            continue
        lo, hi = float(ci[0]), float(ci[1])
        hits += lo - 1e-9 <= truth <= hi + 1e-9
        zero += hi - lo < 1e-12
    done = max(reps - missing, 1)
    return hits / done, zero / done, missing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", default="", help="run the groups whose name holds this text")
    args = parser.parse_args()
    start, group, misses = time.perf_counter(), "", []
    for case_group, label, run in cases():
        if args.only.lower() not in case_group.lower():
            continue
        rng = np.random.default_rng([args.seed, len(label), sum(map(ord, case_group + label))])
        rate, zero, missing = measure(run, args.reps, rng)
        error = math.sqrt(max(rate * (1 - rate), 1e-12) / max(args.reps - missing, 1))
        if case_group != group:
            group = case_group
            print(f"\n{group}")
        met = rate >= TARGET
        extra = (f"  zero-width {100 * zero:.1f}%" if zero else "") + (
            f"  no interval {missing}" if missing else "")  # fmt: skip
        verdict = "meets" if met else "MISSES"
        print(f"  {label:48s} {100 * rate:5.1f}% ± {100 * error:3.1f}  ≥ 93%  {verdict}{extra}",
              flush=True)  # fmt: skip
        if not met:
            misses.append(f"{case_group}: {label}")
    print(f"\n{args.reps} repetitions per case, {time.perf_counter() - start:.0f} s")
    print("misses: " + ("; ".join(misses) if misses else "none"))


if __name__ == "__main__":
    main()

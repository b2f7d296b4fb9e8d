"""Coverage and error rates of medlens's intervals and tests, by simulation (issue 11).

    .venv/bin/python bench/coverage.py [--reps 400] [--seed 0]

Every case draws data whose truth is known, runs medlens's own functions on it (the
`random` model for guessers) and prints the share of 95% intervals holding the truth, or the
share of null runs with a (false) finding, ± its Monte-Carlo standard error, beside the target.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable, Iterator

import numpy as np

from medlens.analysis.compare import _Paired, by_axis
from medlens.analysis.results import by_axis as results_by_axis
from medlens.analysis.score_table import ScoreTable, cell
from medlens.analysis.slices import cube, slice_table, worst_cells
from medlens.core.items import Item
from medlens.execution.probes import leakage_suspects
from medlens.models.baselines import RandomModel
from medlens.stats.bootstrap import group_cis
from medlens.stats.paired import paired_ci, sign_flip_test

Case = tuple[str, str, float, Callable[[np.random.Generator], bool]]
"""(group, label, target, one repetition → hit)."""


def cover(lo: float, hi: float, truth: float) -> bool:
    return bool(lo - 1e-12 <= truth <= hi + 1e-12)


def one_cell_ci(values: np.ndarray, clusters: np.ndarray | None = None) -> tuple[float, float]:
    lo, hi = group_cis(values, np.zeros(values.size, np.intp), clusters)
    return float(lo[0]), float(hi[0])


def binary_case(n: int, p: float) -> Callable[[np.random.Generator], bool]:
    return lambda rng: cover(*one_cell_ci((rng.random(n) < p).astype(float)), p)


def clustered_draw(
    rng: np.random.Generator, images: int, p: float, icc: float
) -> tuple[np.ndarray, np.ndarray]:
    """1–8 questions per image; image-level success rates Beta with mean p and the given ICC."""
    sizes = rng.integers(1, 9, images)
    a, b = p * (1 / icc - 1), (1 - p) * (1 / icc - 1)
    rates = rng.beta(a, b, images)
    clusters = np.repeat(np.arange(images), sizes)
    return (rng.random(clusters.size) < rates[clusters]).astype(float), clusters


def clustered_case(images: int, p: float, icc: float) -> Callable[[np.random.Generator], bool]:
    def run(rng: np.random.Generator) -> bool:
        values, clusters = clustered_draw(rng, images, p, icc)
        return cover(*one_cell_ci(values, clusters), p)

    return run


def fractional_draw(rng: np.random.Generator, n: int, shape: str) -> np.ndarray:
    if shape == "rouge":  # 30% zeros, the rest Beta(2, 3): mean 0.28
        return np.where(rng.random(n) < 0.3, 0.0, rng.beta(2, 3, n))
    if shape == "token_f1":  # 40% zeros, 30% ones, 30% uniform: mean 0.45
        u = rng.random(n)
        return np.where(u < 0.4, 0.0, np.where(u < 0.7, 1.0, rng.random(n)))
    return rng.choice([0.0, 1 / 3, 0.5, 1.0], n, p=[0.4, 0.2, 0.2, 0.2])  # jaccard: mean 0.3333


FRACTIONAL_MEANS = {"rouge": 0.7 * 0.4, "token_f1": 0.3 + 0.3 * 0.5, "jaccard": 0.2 / 3 + 0.3}


def fractional_case(n: int, shape: str) -> Callable[[np.random.Generator], bool]:
    truth = FRACTIONAL_MEANS[shape]
    return lambda rng: cover(*one_cell_ci(fractional_draw(rng, n, shape)), truth)


def paired_null(
    rng: np.random.Generator, images: int, per_image: int | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two runs with image-specific success rates drawn independently from one law: no true
    difference overall, but differences that are correlated within an image."""
    sizes = np.ones(images, int) if per_image is None else rng.integers(1, per_image + 1, images)
    clusters = np.repeat(np.arange(images), sizes)
    rate_a, rate_b = rng.beta(2, 2, images), rng.beta(2, 2, images)
    a = (rng.random(clusters.size) < rate_a[clusters]).astype(float)
    b = (rng.random(clusters.size) < rate_b[clusters]).astype(float)
    return a, b, clusters


def paired_ci_case(images: int, per_image: int | None) -> Callable[[np.random.Generator], bool]:
    """With one image the interval speaks for that image only (its note says so): the truth is
    then the difference of that image's own rates, equal here (no difference on the image)."""

    def run(rng: np.random.Generator) -> bool:
        if images == 1:
            size = int(rng.integers(1, per_image or 1, endpoint=True))
            rate = rng.beta(2, 2)
            a, b = (rng.random((2, size)) < rate).astype(float)
            return cover(*paired_ci(a, b, np.zeros(size)), 0.0)
        a, b, clusters = paired_null(rng, images, per_image)
        return cover(*paired_ci(a, b, clusters), 0.0)

    return run


def mcnemar_case(images: int, per_image: int, plain: bool) -> Callable[[np.random.Generator], bool]:
    """Hit = a false positive (p < .05) under the null; `plain` ignores the images (old test)."""

    def run(rng: np.random.Generator) -> bool:
        a, b, clusters = paired_null(rng, images, per_image)
        p, _ = sign_flip_test(a, b, None if plain else clusters)
        return p < 0.05

    return run


# -- guessers: medlens's random model on GMAI-like items -----------------------------------------
GMAI_AXES = {"task": 18, "department": 18, "modality": 25, "granularity": 4}  # 65 cells


def gmai_items(rng: np.random.Generator, n: int, per_image: int) -> list[Item]:
    items = []
    for i in range(n):
        k = 5 if rng.random() < 0.3 else 4
        options = {chr(65 + j): f"option {j}" for j in range(k)}
        meta = {axis: f"{axis}-{rng.integers(0, m)}" for axis, m in GMAI_AXES.items()}
        meta["image_id"] = f"img{i // per_image}"
        items.append(
            Item(id=f"q{i}", question="?", kind="choice", options=options, answer="A", meta=meta)
        )
    return items


def guess_table(items: list[Item], seed: int) -> ScoreTable:
    """The ScoreTable of a `random?seed=…` run on `items` (0/1 scores, chance per item)."""
    model = RandomModel("random", seed)
    score = np.array([float(model.answer(it) == it.answer) for it in items])
    chance = np.array([1.0 / len(it.options) for it in items])
    keys = sorted(items[0].meta)
    return ScoreTable(
        ids=[it.id for it in items],
        score=score,
        vlmeval=score.copy(),
        random=chance,
        status=np.array(["ok"] * len(items), dtype=object),
        cluster=np.array([it.meta["image_id"] for it in items], dtype=object),
        meta={k: np.array([it.meta[k] for it in items], dtype=object) for k in keys},
    )


class Guessers:
    """Fresh GMAI-like items per repetition (their axis values drawn at random)."""

    def __init__(self, n: int, per_image: int) -> None:
        self.n, self.per_image, self.run = n, per_image, 0

    def table(self, rng: np.random.Generator) -> ScoreTable:
        self.run += 1
        return guess_table(gmai_items(rng, self.n, self.per_image), seed=self.run)


def leakage_case(n: int, per_image: int) -> Callable[[np.random.Generator], bool]:
    """Hit = a no-signal run (random model) flags at least one leakage suspect."""
    guessers = Guessers(n, per_image)

    def run(rng: np.random.Generator) -> bool:
        table = guessers.table(rng)
        everything = np.ones(n, dtype=bool)
        results = {"overall": cell(table, everything), "by": results_by_axis(table, GMAI_AXES)}
        return bool(leakage_suspects(results))

    return run


class WorstShare:
    """Share of listed worst cells of a pure guesser that are called below chance (pooled)."""

    def __init__(self, n: int, per_image: int) -> None:
        self.guessers = Guessers(n, per_image)
        self.listed = self.below = self.interval_below = self.own_below = 0

    def run(self, rng: np.random.Generator) -> bool:
        table = self.guessers.table(rng)
        cells = cube(slice_table(table), ["task", "granularity"], min_n=20)
        worst = worst_cells(cells, 10, min_n=20)
        self.listed += len(worst)
        self.below += sum(bool(c.below_chance) for c in worst)
        # the printed (simultaneous) interval, and the cell's own, wholly below chance
        self.interval_below += sum(c.ci is not None and c.random is not None and c.ci[1] < c.random
                                   for c in worst)  # fmt: skip
        self.own_below += sum(c.ci_unadjusted is not None and c.random is not None
                              and c.ci_unadjusted[1] < c.random for c in worst)  # fmt: skip
        return any(c.below_chance for c in worst)


def compare_by_case(n: int, per_image: int, values: int) -> Callable[[np.random.Generator], bool]:
    """Hit = two random-model runs on the same items show some adjusted p < .05 over `values`
    slices of one axis (Holm)."""

    def run(rng: np.random.Generator) -> bool:
        items = gmai_items(rng, n, per_image)
        for item, value in zip(items, rng.integers(0, values, n).tolist(), strict=True):
            item.meta["slice"] = f"s{value}"
        seed = int(rng.integers(0, 2**31))
        a, b = guess_table(items, seed), guess_table(items, seed + 1)
        paired = _Paired(a.score, b.score, a.random, a.cluster, {"slice": a.meta["slice"]})
        cells = by_axis(paired, "slice", adjust="holm")
        return any(c.p_adjusted is not None and c.p_adjusted < 0.05 for c in cells)

    return run


def cases(worst: WorstShare) -> Iterator[Case]:
    for n in (5, 10, 20, 50, 200):
        for p in (0.02, 0.2, 0.5, 0.98):
            yield "0/1 cells (coverage)", f"n={n}, p={p}", 0.93, binary_case(n, p)
    for images in (5, 10, 13, 20, 40):
        for icc in (0.1, 0.5):
            yield (
                "clustered cells (coverage)",
                f"{images} images, 1-8 q/image, p=0.3, ICC={icc}",
                (0.92 if images >= 10 else 0.0),
                clustered_case(images, 0.3, icc),
            )
    for n in (10, 20, 50):
        for shape in ("rouge", "token_f1", "jaccard"):
            yield (
                "non-0/1 scores (coverage)",
                f"{shape}-like, n={n}",
                0.92,
                fractional_case(n, shape),
            )
    for images, per_image in ((1, 20), (3, 8), (10, None), (10, 8), (30, 8), (100, None)):
        label = f"{images} images × " + ("1 q" if per_image is None else f"1-{per_image} q")
        yield "paired CI under the null (coverage)", label, 0.92, paired_ci_case(images, per_image)
    for images, per_image in ((10, 8), (40, 8), (200, 4)):
        for plain in (True, False):
            name = "plain McNemar (old)" if plain else "image-level sign-flip"
            yield (
                "McNemar false-positive rate",
                f"{name}, {images} images × 1-{per_image} q",
                (1.0 if plain else 0.06),
                mcnemar_case(images, per_image, plain),
            )
    yield (
        "leakage: no-signal runs with any suspect",
        "random model, 3,000 items, 65 cells",
        (0.05),
        leakage_case(3000, 3),
    )
    yield (
        "worst cells of a guesser below chance",
        "random model, 1,500 items, runs with any",
        (0.05),
        worst.run,
    )
    yield (
        "compare --by null pairs, any adjusted p < .05",
        "48 slices, 2,000 items, Holm",
        (0.05),
        compare_by_case(2000, 3, 48),
    )


def exact_binary_coverage() -> tuple[float, int, float]:
    """Exact (not simulated) minimum coverage of the 0/1 interval over n = 5…200 and 193 values
    of p in [.02, .98]: Σ_k P(k | n, p) over the k whose interval holds p. (min, n, p)."""
    from scipy.stats import binom

    from medlens.stats.intervals import wilson

    grid = np.linspace(0.02, 0.98, 193)
    worst = (1.0, 0, 0.0)
    for n in range(5, 201):
        k = np.arange(n + 1)
        lo, hi = wilson(k, np.full(n + 1, n))
        holds = (lo[:, None] <= grid + 1e-12) & (grid - 1e-12 <= hi[:, None])
        coverage = (binom.pmf(k[:, None], n, grid[None, :]) * holds).sum(axis=0)
        if coverage.min() < worst[0]:
            worst = (float(coverage.min()), n, float(grid[coverage.argmin()]))
    return worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    worst = WorstShare(1500, 3)
    start, group = time.perf_counter(), ""
    misses = []
    for case_group, label, target, run in cases(worst):
        rng = np.random.default_rng([args.seed, len(label), sum(map(ord, label))])
        hits = sum(run(rng) for _ in range(args.reps))
        rate = hits / args.reps
        error = math.sqrt(max(rate * (1 - rate), 1e-12) / args.reps)
        coverage = "coverage" in case_group
        met = rate >= target if coverage else rate <= target
        if case_group != group:
            group = case_group
            print(f"\n{group}")
        verdict = "" if target in (0.0, 1.0) else ("  meets" if met else "  MISSES")
        shown = "" if target in (0.0, 1.0) else f"{'≥' if coverage else '≤'} {100 * target:.0f}%"
        print(f"  {label:52s} {100 * rate:5.1f}% ± {100 * error:3.1f}  {shown:>6s}{verdict}")
        if verdict == "  MISSES":
            misses.append(f"{case_group}: {label}")
    low, at_n, at_p = exact_binary_coverage()
    print(f"\n  0/1 cells, exact minimum coverage over n = 5…200, p in [.02, .98]: "
          f"{100 * low:.1f}% (n={at_n}, p={at_p:.3f}) (≥ 93%)")  # fmt: skip
    share = worst.below / max(worst.listed, 1)
    print(f"\n  listed worst cells called below chance (pooled): {worst.below}/{worst.listed} = "
          f"{100 * share:.1f}% (≤ 5%)")  # fmt: skip
    print(f"  listed worst cells whose printed (simultaneous) interval lies below chance: "
          f"{worst.interval_below}/{worst.listed}; whose own 95% interval does: "
          f"{worst.own_below}/{worst.listed}")  # fmt: skip
    print(f"\n{args.reps} repetitions per case, {time.perf_counter() - start:.0f} s")
    print("misses: " + ("; ".join(misses) if misses else "none"))


if __name__ == "__main__":
    main()

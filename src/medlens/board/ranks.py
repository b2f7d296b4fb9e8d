"""The models table: each run's score and CI, its rank with a bootstrap rank interval, and the
groups of models that adjusted paired tests cannot tell apart.

* Score CI: :func:`medlens.bootstrap.group_cis`, the interval every medlens report prints.
* Rank interval: a paired bootstrap of items — every resample draws the same items (whole
  images when questions share one) for all runs, ranks the runs' means, and the interval is the
  2.5–97.5 percentile of each run's rank. A model that wins every resample gets [1, 1].
* Paired test of every two runs: exact McNemar when scores are 0/1 and no image holds two items
  (the test `medlens compare` prints); otherwise a cluster-robust (CR1) t test of the mean
  paired difference with G − 1 degrees of freedom (statsmodels' OLS with cluster covariance
  gives the same p), which is the paired t test when every image holds one item. p-values are
  Holm-adjusted over all pairs (:func:`medlens.significance.adjust_p`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from medlens.board.align import Aligned

RESAMPLE_BATCH_CELLS = 2_000_000
"""Resample × image counts held at once (× 8 bytes)."""
SMALL_N = 50
FEW_IMAGES = 10
"""A cell whose items come from fewer images is flagged small (its interval speaks for those)."""
ALPHA = 0.05


def is_small(n: int, images: int, min_n: int = SMALL_N) -> bool:
    """Too few items, or items drawn from too few images, for a stable score."""
    return n < min_n or (images < n and images < FEW_IMAGES)


def score_cells(aligned: Aligned, min_n: int = SMALL_N) -> list[dict[str, Any]]:
    """n, images, score, CI, small of each run over all aligned items (one group_cis call)."""
    from medlens.bootstrap import group_cis

    runs, n = aligned.scores.shape
    if n == 0:
        return [
            {"n": 0, "images": 0, "score": None, "ci": None, "small": True} for _ in range(runs)
        ]
    groups = np.repeat(np.arange(runs), n)
    lo, hi = group_cis(aligned.scores.ravel(), groups, np.tile(aligned.cluster, runs))
    images = aligned.n_images
    return [
        {
            "n": n,
            "images": images,
            "score": float(aligned.scores[r].mean()),
            "ci": [float(lo[r]), float(hi[r])],
            "small": is_small(n, images, min_n),
        }
        for r in range(runs)
    ]


def ranks_of(means: np.ndarray) -> np.ndarray:
    """Competition ranks (1 = best; equal scores share the better rank) along the last axis."""
    from scipy.stats import rankdata

    return np.asarray(rankdata(-np.round(means, 12), axis=-1, method="min"), dtype=np.int64)


def cluster_sums(aligned: Aligned) -> tuple[np.ndarray, np.ndarray]:
    """(runs, images) score sums per image and (images,) item counts per image."""
    g = aligned.n_images
    sizes = np.bincount(aligned.cluster, minlength=g).astype(float)
    sums = np.stack([np.bincount(aligned.cluster, row, minlength=g) for row in aligned.scores])
    return sums.reshape(aligned.scores.shape[0], g), sizes


def rank_intervals(
    aligned: Aligned, n_resamples: int = 1000, seed: int = 0, level: float = 0.95
) -> np.ndarray:
    """(runs, 2) percentile interval of each run's rank under a paired bootstrap of images."""
    sums, sizes = cluster_sums(aligned)
    runs, g = sums.shape
    if g == 0:
        return np.ones((runs, 2), dtype=np.int64)
    rng = np.random.default_rng(seed)
    batch = max(1, RESAMPLE_BATCH_CELLS // g)
    ranks = np.empty((n_resamples, runs), dtype=np.int64)
    for first in range(0, n_resamples, batch):
        rows = min(batch, n_resamples - first)
        picks = rng.integers(0, g, size=(rows, g)) + (np.arange(rows) * g)[:, None]
        counts = np.bincount(picks.ravel(), minlength=rows * g).reshape(rows, g).astype(float)
        means = (counts @ sums.T) / (counts @ sizes)[:, None]
        ranks[first : first + rows] = ranks_of(means)
    tail = (1.0 - level) / 2.0
    lo = np.quantile(ranks, tail, axis=0, method="inverted_cdf")
    hi = np.quantile(ranks, 1.0 - tail, axis=0, method="inverted_cdf")
    return np.stack([lo, hi], axis=1).astype(np.int64)


def pairwise_p(aligned: Aligned) -> tuple[np.ndarray, str]:
    """(runs, runs) raw two-sided p of each paired comparison, and the test's name."""
    scores = aligned.scores
    binary = bool(np.isin(scores, (0.0, 1.0)).all())
    if binary and aligned.n_images == scores.shape[1]:
        return mcnemar_matrix(scores), "exact McNemar"
    return cluster_t_matrix(aligned), "cluster-robust paired t (CR1, t(G−1))"


def mcnemar_matrix(scores: np.ndarray) -> np.ndarray:
    """Exact McNemar p of every pair of 0/1 score rows (binomial test on discordant items)."""
    from scipy.stats import binom

    only = (1.0 - scores) @ scores.T  # only[i, j]: items j got right and i got wrong
    discordant = only + only.T
    smaller = np.minimum(only, only.T)
    with np.errstate(invalid="ignore"):
        p = np.minimum(1.0, 2.0 * binom.cdf(smaller, discordant, 0.5))
    return np.where(discordant == 0, 1.0, p)


def cluster_t_matrix(aligned: Aligned) -> np.ndarray:
    """CR1 cluster-robust t test of each pair's mean item difference, t(G − 1)."""
    from scipy.stats import t as student

    sums, sizes = cluster_sums(aligned)
    n, g = aligned.scores.shape[1], sums.shape[1]
    means = aligned.scores.mean(axis=1)
    residual = sums - means[:, None] * sizes[None, :]  # Σ per image of (x − mean)
    gram = residual @ residual.T
    spread = np.diag(gram)[:, None] + np.diag(gram)[None, :] - 2.0 * gram
    variance = np.clip(spread, 0.0, None) * (g / max(g - 1, 1)) / max(n, 1) ** 2
    difference = means[:, None] - means[None, :]
    with np.errstate(divide="ignore", invalid="ignore"):
        statistic = np.abs(difference) / np.sqrt(variance)
        p = 2.0 * student.sf(statistic, max(g - 1, 1))
    exact_zero = np.isclose(variance, 0.0, atol=1e-24)
    p = np.where(exact_zero, np.where(np.isclose(difference, 0.0, atol=1e-12), 1.0, 0.0), p)
    return np.asarray(np.where(g < 2, 1.0, p), dtype=float)


def adjusted_pairs(p: np.ndarray) -> np.ndarray:
    """Holm-adjusted p over the upper triangle, mirrored; 1 on the diagonal."""
    from medlens.significance import adjust_p

    runs = p.shape[0]
    upper = np.triu_indices(runs, k=1)
    adjusted = np.ones_like(p)
    adjusted[upper] = adjust_p(p[upper])
    adjusted.T[upper] = adjusted[upper]
    return adjusted


def tied_groups(scores: np.ndarray, adjusted: np.ndarray, alpha: float = ALPHA) -> list[list[int]]:
    """Maximal runs of rank-adjacent models, no two of them significantly different.

    Walking down the ranking, each model starts the longest block whose every pair has an
    adjusted p ≥ alpha; a block inside the previous one is not repeated, and single models
    (different from all their neighbours) form no group. Groups may overlap, as in a compact
    letter display.
    """
    order = np.argsort(-np.round(scores, 12), kind="stable").tolist()
    groups: list[list[int]] = []
    last_end = -1
    for start in range(len(order)):
        end = start
        while end + 1 < len(order) and all(
            adjusted[order[end + 1], order[k]] >= alpha for k in range(start, end + 1)
        ):
            end += 1
        if end > start and end > last_end:
            groups.append(order[start : end + 1])
            last_end = end
    return groups

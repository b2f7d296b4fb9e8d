"""The models table: each run's score and CI, its rank with a bootstrap rank interval, and the
groups of models that adjusted paired tests cannot tell apart.

* Score CI: :func:`medlens.stats.bootstrap.group_cis`, the interval every medlens report prints.
* Rank interval: a paired bootstrap of items — every resample draws the same items (whole
  images when questions share one) for all runs, ranks the runs' means, and the interval is the
  2.5–97.5 percentile of each run's rank. A model that wins every resample gets [1, 1].
* Paired test of every two runs: exact McNemar when scores are 0/1 and no image holds two items
  (the test `medlens compare` prints); otherwise a cluster-robust (CR1) t test of the mean
  paired difference with G − 1 degrees of freedom (statsmodels' OLS with cluster covariance
  gives the same p), which is the paired t test when every image holds one item. p-values are
  Holm-adjusted over all pairs (:func:`medlens.stats.multiplicity.adjust`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from medlens.board.align import Aligned
from medlens.stats.cells import DEFAULT_MIN_N, is_small

RESAMPLE_BATCH_CELLS = 2_000_000
"""Resample × image counts held at once (× 8 bytes)."""
SMALL_N = DEFAULT_MIN_N
"""Cells are flagged small by the rule every report uses (`slices.is_small`: n or images)."""
ALPHA = 0.05

__all__ = ["is_small"]


def cell_cis(aligned: Aligned, codes: np.ndarray, n_codes: int) -> tuple[np.ndarray, np.ndarray]:
    """(runs, n_codes) 95% CI bounds of each run's mean over each code's items (NaN: no items).

    The interval every medlens report prints (:func:`medlens.stats.bootstrap.group_cis`). For 0/1
    scores on items that share no image, its units are only each cell's counts of zeros and
    ones, so they are built with bincount and handed to ``bootstrap.mean_cis`` directly,
    instead of sorting runs × items values.
    """
    from medlens.stats.bootstrap import group_cis, mean_cis
    from medlens.stats.units import Units

    keep = codes >= 0
    scores, kept = aligned.scores[:, keep], codes[keep]
    runs = scores.shape[0]
    cells = (np.arange(runs)[:, None] * n_codes + kept[None, :]).ravel()
    if aligned.n_images == aligned.ids.size and np.isin(scores, (0.0, 1.0)).all():
        ones = np.bincount(cells, scores.ravel(), minlength=runs * n_codes)
        zeros = np.bincount(cells, minlength=runs * n_codes) - ones
        group = np.repeat(np.arange(runs * n_codes), 2)
        counts = np.rint(np.stack([zeros, ones], axis=1).ravel()).astype(np.int64)
        some = counts > 0
        units = Units(group[some], np.tile([0.0, 1.0], runs * n_codes)[some],
                      np.ones(int(some.sum())), counts[some])  # fmt: skip
        lo, hi = mean_cis(units, None, runs * n_codes)
        return lo.reshape(runs, n_codes), hi.reshape(runs, n_codes)
    if np.isin(scores, (0.0, 1.0)).all():
        lo, hi = mean_cis(clustered_binary_units(scores, kept, aligned.cluster[keep], n_codes),
                          None, runs * n_codes)  # fmt: skip
        return lo.reshape(runs, n_codes), hi.reshape(runs, n_codes)
    present = np.unique(cells)
    lo_present, hi_present = group_cis(scores.ravel(), cells, tiled_clusters(aligned, runs, keep))
    lo, hi = np.full(runs * n_codes, np.nan), np.full(runs * n_codes, np.nan)
    lo[present], hi[present] = lo_present, hi_present
    return lo.reshape(runs, n_codes), hi.reshape(runs, n_codes)


def clustered_binary_units(
    scores: np.ndarray, codes: np.ndarray, cluster: np.ndarray, n_codes: int
) -> Any:
    """Collapsed (cell, image) units of 0/1 `scores` (runs × items) for cells run × code: the
    units ``bootstrap.group_cis`` builds from runs × items rows, made from the items' (code,
    image) pairs once and one bincount of the runs' sums, then merged by integer keys (the sums
    are counts), so 50 runs × 26,000 clustered items cost no sort of 1.3 million rows."""
    from medlens.stats.units import Units

    runs = scores.shape[0]
    pair_keys, pair_of = np.unique(
        codes.astype(np.int64) * (int(cluster.max(initial=0)) + 1) + cluster, return_inverse=True
    )
    pair_of = pair_of.ravel()
    pairs = pair_keys.size
    pair_code = np.empty(pairs, dtype=np.int64)
    pair_code[pair_of] = codes
    sizes = np.bincount(pair_of, minlength=pairs)
    offsets = (np.arange(runs, dtype=np.int64) * pairs)[:, None]
    sums = np.bincount((offsets + pair_of[None, :]).ravel(), scores.ravel(), runs * pairs)
    group = ((np.arange(runs, dtype=np.int64) * n_codes)[:, None] + pair_code[None, :]).ravel()
    base = int(sizes.max(initial=0)) + 1
    size = np.tile(sizes, runs)
    key = (group * base + np.rint(sums).astype(np.int64)) * base + size
    unique, count = np.unique(key, return_counts=True)
    return Units(
        (unique // (base * base)).astype(np.intp), ((unique // base) % base).astype(float),
        (unique % base).astype(float), count.astype(np.int64),
    )  # fmt: skip


def score_cells(aligned: Aligned, min_n: int = SMALL_N) -> list[dict[str, Any]]:
    """n, images, score, CI, small of each run over all aligned items."""
    runs, n = aligned.scores.shape
    if n == 0:
        return [
            {"n": 0, "images": 0, "score": None, "ci": None, "small": True} for _ in range(runs)
        ]
    lo, hi = cell_cis(aligned, np.zeros(n, dtype=np.intp), 1)
    lo, hi = lo[:, 0], hi[:, 0]
    images = aligned.n_images
    effective = n * n / float((np.bincount(aligned.cluster).astype(float) ** 2).sum())  # Kish
    return [
        {
            "n": n,
            "images": images,
            "score": float(aligned.scores[r].mean()),
            "ci": [float(lo[r]), float(hi[r])],
            "small": is_small(n, effective, min_n),
        }
        for r in range(runs)
    ]


def tiled_clusters(aligned: Aligned, times: int, keep: np.ndarray | None = None) -> Any:
    """Image codes repeated for `times` groups; None when no image holds two items (then
    group_cis gives the same intervals without pairing 1.3M (group, image) codes)."""
    if aligned.n_images == aligned.ids.size:
        return None
    cluster = aligned.cluster if keep is None else aligned.cluster[keep]
    return np.tile(cluster, times)


def ranks_of(means: np.ndarray) -> np.ndarray:
    """Competition ranks (1 = best; equal scores share the better rank) along the last axis:
    1 + the number of runs with a strictly higher mean (``scipy.stats.rankdata(-x, "min")``)."""
    rounded = np.round(np.asarray(means, dtype=float), 12)
    higher = rounded[..., None, :] > rounded[..., :, None]
    return np.asarray(1 + higher.sum(axis=-1), dtype=np.int64)


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
    only = (1.0 - scores) @ scores.T  # only[i, j]: items j got right and i got wrong
    return mcnemar_p(only, only.T)


def mcnemar_p(b_only: np.ndarray, a_only: np.ndarray) -> np.ndarray:
    """Two-sided exact McNemar p from discordant counts, elementwise (= scipy ``binomtest``
    at ½: twice the smaller tail, capped at 1; 1 without discordant items)."""
    from scipy.special import bdtr

    b_only, a_only = np.rint(b_only).astype(np.int64), np.rint(a_only).astype(np.int64)
    discordant = b_only + a_only
    smaller = np.minimum(b_only, a_only)
    p = np.minimum(1.0, 2.0 * bdtr(smaller, np.maximum(discordant, 1), 0.5))
    return np.asarray(np.where(discordant == 0, 1.0, p), dtype=float)


def cluster_t_matrix(aligned: Aligned) -> np.ndarray:
    """CR1 cluster-robust t test of each pair's mean item difference, t(G − 1)."""
    from scipy.special import stdtr

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
        p = 2.0 * stdtr(max(g - 1, 1), -statistic)
    exact_zero = np.isclose(variance, 0.0, atol=1e-24)
    p = np.where(exact_zero, np.where(np.isclose(difference, 0.0, atol=1e-12), 1.0, 0.0), p)
    return np.asarray(np.where(g < 2, 1.0, p), dtype=float)


def adjusted_pairs(p: np.ndarray) -> np.ndarray:
    """Holm-adjusted p over the upper triangle, mirrored; 1 on the diagonal."""
    from medlens.stats.multiplicity import adjust as adjust_p  # statsmodels' numbers, no import

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

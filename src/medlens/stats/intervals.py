"""Closed-form confidence intervals of means: Wilson, t, and cluster-robust t(G − 1).

One method per kind of cell (docs/statistics.md):

- independent 0/1 scores: the Wilson score interval with continuity correction (never zero
  width; coverage ≥ 95% at every n ≥ 5, p in [.02, .98]);
- other scores in [0, 1] (token F1, ROUGE-L, Jaccard, rubric ratings / 10): the bounded-mean
  interval (``stats.bounded``: pseudo-values at both bounds, Hall's skew-corrected t, Wilson
  on the observed range);
- items sharing images: the cluster-robust ratio-estimator interval, mean ± t(G_eff−1)·SE_CR with
  SE_CR² = G/(G−1)·Σ_g (s_g − p̂·m_g)² / M² and G_eff Kish's effective number of images,
  enveloped with the item-level interval at the effective sample size and with the item-level
  interval itself (a cell drawn from one image keeps the item-level interval).

Everything is computed from collapsed units (see ``units.Units``): a group's bounds depend on
its own units only, so a cell shows the same interval in report, slice, compare and board.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from medlens.stats.bounded import ItemShape, bounded_mean, item_shape
from medlens.stats.units import Units, collapse
from medlens.stats.wilson import wilson, wilson_plain

__all__ = [
    "Spread",
    "bounded_mean",
    "spread",
    "spread_bounds",
    "t_bounds",
    "wilson",
    "wilson_plain",
]


@dataclass(frozen=True)
class Spread:
    """What the interval of each group needs, as parallel arrays (one entry per group)."""

    n: np.ndarray
    """Items."""
    mean: np.ndarray
    images: np.ndarray
    """Clusters (resampling units: images, or items without images)."""
    item_se: np.ndarray
    """Item-level standard error s/√n of groups holding a non-0/1 score; NaN for 0/1 groups."""
    cluster_se: np.ndarray
    """Cluster-robust standard error of clustered groups with ≥ 2 images; NaN otherwise."""
    size_squares: np.ndarray
    """Σ over images of (items on the image)²: what :attr:`effective_images` needs."""
    shape: ItemShape | None = None
    """Skewness, range and 0/1-ness of each group's values (what :func:`bounded_mean` reads
    for non-0/1 groups); None: unknown (full pseudo-values)."""

    @property
    def effective_images(self) -> np.ndarray:
        """Kish's effective number of clusters n²/Σm² (≤ images; equal when images hold equal
        numbers of items): one image holding most of a cell's questions counts as about one.
        The degrees of freedom (at least 1) of every cluster-robust interval and the small-cell
        mark."""
        with np.errstate(invalid="ignore", divide="ignore"):
            kish = np.where(self.size_squares > 0, self.n**2 / self.size_squares, 0.0)
        return np.minimum(kish, self.images)

    def bounds(self, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
        return spread_bounds(self, level)

    def row(self, index: int) -> Spread:
        """The one-group Spread of group `index`."""
        pick = slice(index, index + 1)
        shape = None if self.shape is None else self.shape.pick(pick)
        return Spread(
            self.n[pick], self.mean[pick], self.images[pick], self.item_se[pick],
            self.cluster_se[pick], self.size_squares[pick], shape,
        )  # fmt: skip


def spread(
    clusters: Units, items: Units | None, n_groups: int, *, continuous: bool = False
) -> Spread:
    """Per-group n, mean, image count and standard errors from collapsed units.

    `clusters`: one unit per (group, image); `items`: one unit per (group, item value), needed
    only when some value is not 0/1 (None: all are). `continuous`: every group is a continuous
    metric, whose interval is not Wilson's even when its values are all 0 or 1.
    """
    # collapsed and rounded as the bootstrap did, so DuckDB's and numpy's sums give one interval
    clusters = collapse(clusters.group, clusters.sum, clusters.size, clusters.count)
    if items is not None:
        items = collapse(items.group, items.sum, items.size, items.count)
    weight = clusters.count.astype(float)
    n = np.bincount(clusters.group, clusters.size * weight, minlength=n_groups)
    total = np.bincount(clusters.group, clusters.sum * weight, minlength=n_groups)
    images = np.bincount(clusters.group, weight, minlength=n_groups)
    size_squares = np.bincount(clusters.group, weight * clusters.size**2, minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = total / n
        # rounded as the sums are: the residue of p̂·m (0.8·3 ≠ 2.4 in binary) is no spread,
        # and read as one it sent an all-equal cell's effective sample size to 1 ([0, 10])
        residual = clusters.sum - mean[clusters.group] * clusters.size
        residual[np.abs(residual) < 1e-9] = 0.0
        squares = np.bincount(clusters.group, weight * residual**2, minlength=n_groups)
        cluster_se = np.sqrt(images / (images - 1) * squares) / n
    clustered = np.bincount(clusters.group, clusters.size > 1, minlength=n_groups) > 0
    cluster_se[~clustered | (images < 2)] = np.nan
    item_se, shape = np.full(n_groups, np.nan), None
    if items is not None:
        odd = (items.sum != 0) & (items.sum != 1)
        fractional = (np.bincount(items.group, odd, minlength=n_groups) > 0) | continuous
        deviation = items.sum - mean[items.group]
        count = items.count.astype(float)
        ss = np.bincount(items.group, count * deviation**2, minlength=n_groups)
        with np.errstate(invalid="ignore", divide="ignore"):
            se = np.where(n > 1, np.sqrt(ss / np.maximum(n - 1, 1) / n), np.inf)
        item_se[fractional] = se[fractional]
        shape = item_shape(items.group, items.sum, items.count, mean, n_groups)
    return Spread(n, mean, images, item_se, cluster_se, size_squares, shape)


def spread_bounds(s: Spread, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bounds at `level`, clipped to [0, 1]; NaN for empty groups."""
    lo, hi = np.full(s.n.size, np.nan), np.full(s.n.size, np.nan)
    some = s.n > 0
    binary = some & np.isnan(s.item_se)
    lo[binary], hi[binary] = wilson(s.mean[binary] * s.n[binary], s.n[binary], level)
    fractional = some & ~binary
    lo[fractional], hi[fractional] = bounded_mean(
        s.mean[fractional], _item_variance(s)[fractional], s.n[fractional], level,
        None if s.shape is None else s.shape.pick(fractional),
    )  # fmt: skip
    clustered = some & ~np.isnan(s.cluster_se)
    df = np.maximum(s.effective_images[clustered] - 1, 1.0)  # ≥ 1 from 2 images on
    c_lo, c_hi = t_bounds(s.mean[clustered], s.cluster_se[clustered], df, level)
    lo[clustered] = np.fmin(lo[clustered], c_lo)
    hi[clustered] = np.fmax(hi[clustered], c_hi)
    e_lo, e_hi = _effective_item_interval(s, clustered, level)
    lo[clustered] = np.fmin(lo[clustered], e_lo)
    hi[clustered] = np.fmax(hi[clustered], e_hi)
    return np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)


def _item_variance(s: Spread) -> np.ndarray:
    """Per group, the items' variance (divided by n) from the item-level SE; 0 for one item."""
    with np.errstate(invalid="ignore"):
        return np.where(s.n > 1, s.item_se**2 * (s.n - 1), 0.0)


def _effective_item_interval(
    s: Spread, mask: np.ndarray, level: float
) -> tuple[np.ndarray, np.ndarray]:
    """The item-level interval (Wilson-cc for 0/1 values, :func:`bounded_mean` else) at the
    effective sample size of clustered groups (Korn & Graubard 1998): n_eff = σ̂²/SE_CR² ·
    (z/t)², t with (effective images − 1) degrees of freedom, at most n (σ̂² = p̂(1 − p̂) for 0/1
    values; the effective images when SE_CR is 0). Keeps the interval asymmetric near 0 and 1 where the symmetric t interval of few,
    alike images undercovers."""
    from scipy.special import ndtri, stdtrit

    p, se, n = s.mean[mask], s.cluster_se[mask], s.n[mask]
    binary = np.isnan(s.item_se[mask])
    variance = np.where(binary, p * (1 - p), _item_variance(s)[mask])
    z = float(ndtri(1 - (1 - level) / 2))
    t = stdtrit(np.maximum(s.effective_images[mask] - 1, 1), 1 - (1 - level) / 2)
    with np.errstate(invalid="ignore", divide="ignore"):
        # no spread to see (every item alike): each image counts once rather than each item
        n_eff = np.where(
            (se > 0) & (variance > 0), variance / se**2 * (z / t) ** 2, s.effective_images[mask]
        )
    n_eff = np.clip(np.nan_to_num(n_eff, nan=1.0), 1.0, n)
    w_lo, w_hi = wilson(p * n_eff, n_eff, level)
    shape = None if s.shape is None else s.shape.pick(mask)
    b_lo, b_hi = bounded_mean(p, variance, n_eff, level, shape)
    return np.where(binary, w_lo, b_lo), np.where(binary, w_hi, b_hi)


def t_bounds(
    mean: np.ndarray, se: np.ndarray, df: np.ndarray, level: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """mean ± t(df)·se (an infinite or NaN se, or df < 1, gives an unbounded interval)."""
    from scipy.special import stdtrit

    df = np.asarray(df, float)
    with np.errstate(invalid="ignore"):
        quantile = np.where(df >= 1, stdtrit(np.maximum(df, 1), 1 - (1 - level) / 2), np.inf)
        half = np.where(np.isfinite(se), quantile * se, np.inf)
    return mean - half, mean + half


def t_sf(statistic: np.ndarray, df: np.ndarray) -> np.ndarray:
    """Upper tail P(T_df ≥ statistic) (scipy ``t.sf``), 1.0 where df < 1."""
    from scipy.special import stdtr

    df = np.asarray(df, float)
    with np.errstate(invalid="ignore"):
        return np.where(df >= 1, 1.0 - stdtr(np.maximum(df, 1), statistic), 1.0)


def chance_p(s: Spread, chance: np.ndarray, side: str = "above") -> np.ndarray:
    """One-sided p-value of "mean > chance" (`side` "above") or "mean < chance" ("below").

    0/1 groups: the exact binomial test of k successes in n against the group's mean chance
    (scipy ``binomtest(k, n, chance, alternative="greater"|"less")``). With items of different
    chance levels the count is Poisson-binomial, whose tails beyond the mean are never heavier
    than the binomial's at the mean chance (Hoeffding 1956), so the test stays valid. Other
    groups: the t test with the item-level SE. Clustered groups also take the cluster-robust t
    test with G − 1 degrees of freedom, and the larger (more cautious) p-value is kept. 1.0 where
    nothing can be tested (no items, no chance level).
    """
    from scipy.special import bdtr, bdtrc

    chance = np.asarray(chance, float)
    sign = 1.0 if side == "above" else -1.0
    p = np.ones(s.n.size)
    ok = (s.n > 0) & ~np.isnan(chance)
    binary = ok & np.isnan(s.item_se)
    k = np.nan_to_num(np.round(s.mean * s.n)).astype(np.int64)
    whole = np.rint(s.n).astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        tail = bdtrc(k - 1, whole, chance) if side == "above" else bdtr(k, whole, chance)
        p[binary] = np.where(k[binary] <= 0, 1.0, tail[binary]) if side == "above" else tail[binary]
        fractional = ok & ~np.isnan(s.item_se)
        p[fractional] = t_sf(sign * (s.mean - chance) / s.item_se, s.n - 1)[fractional]
        clustered = ok & ~np.isnan(s.cluster_se)
        cluster_p = t_sf(
            sign * (s.mean - chance) / s.cluster_se, np.maximum(s.effective_images - 1, 1.0)
        )
    p[clustered] = np.fmax(p[clustered], cluster_p[clustered])
    return np.clip(np.nan_to_num(p, nan=1.0), 0.0, 1.0)


def chance_corrected(score: float | None, chance: float | None) -> float | None:
    """(score − chance)/(1 − chance): 0 at chance, 1 at perfect; None without a chance level."""
    if score is None or chance is None or chance >= 1:
        return None
    return (score - chance) / (1 - chance)

"""Confidence intervals of means, vectorised over many groups at once.

:func:`group_cis` and :func:`mean_cis` are the single entry points for a reported score's CI;
their closed-form methods live in ``medlens.stats.intervals``. The percentile bootstrap below
(resampling whole clusters) serves statistics other than a reported score and comparisons with
the earlier method; scipy's `bootstrap` handles one statistic of one sample per call.
"""

from __future__ import annotations

import math

import numpy as np

from medlens.stats.intervals import Spread, spread
from medlens.stats.units import Units, collapse

_BATCH_CELLS = 4_000_000
"""Resampled values held in memory at once (× 8 bytes): bounds memory for 26,000+ items."""
_TYPED_MIN_UNITS = 16
"""A group is drawn by kind of unit once it has this many units per kind (see _kind_means)."""


def group_cis(
    values: np.ndarray,
    groups: np.ndarray,
    clusters: np.ndarray | None = None,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[np.ndarray, np.ndarray]:
    """The CI of each group's mean that medlens reports for every score (see :func:`mean_cis`).

    `groups` holds any labels (bounds follow ``np.unique(groups)`` order); `clusters` holds
    ``image_id``s. Integer codes for both are faster than strings.
    """
    return group_spread(values, groups, clusters).bounds(level)


def group_spread(
    values: np.ndarray,
    groups: np.ndarray,
    clusters: np.ndarray | None = None,
    *,
    continuous: bool = False,
) -> Spread:
    """n, mean, images and standard errors per group (``np.unique(groups)`` order).

    `continuous`: the values are a continuous metric (BLEU, ROUGE, token F1, IoU) even when the
    ones observed happen to be 0 or 1, so they take the interval of non-0/1 means, not Wilson's.
    """
    values = np.asarray(values, dtype=float)
    names, codes = np.unique(np.asarray(groups), return_inverse=True)
    codes = codes.ravel()
    by_image = _cluster_units(values, codes, clusters)
    items = collapse(codes, values, np.ones(values.size))
    fractional = continuous or bool(((values != 0) & (values != 1)).any())
    return spread(by_image, items if fractional else None, names.size, continuous=continuous)


def ratio_ci(
    sums: np.ndarray, sizes: np.ndarray, clusters: np.ndarray, level: float = 0.95
) -> tuple[float, float]:
    """CI of Σsums/Σsizes when each unit of size counts one 0/1 event and `sums` the events
    that succeeded (box micro-F1 = 2·matched / (predicted + gold)), events sharing an image
    correlated: the interval of a clustered 0/1 cell (Wilson-cc, enveloped with the
    cluster-robust t and Wilson-cc at the effective sample size; ``intervals.spread_bounds``)
    on one unit per image. NaN without events."""
    codes = np.unique(np.asarray(clusters).astype(str), return_inverse=True)[1].ravel()
    total = np.bincount(codes, np.asarray(sums, float))
    size = np.bincount(codes, np.asarray(sizes, float))
    keep = size > 0
    if not keep.any():
        return float("nan"), float("nan")
    units = collapse(np.zeros(int(keep.sum()), np.intp), total[keep], size[keep])
    lo, hi = spread(units, None, 1).bounds(level)
    return float(lo[0]), float(hi[0])


def mean_cis(
    clusters: Units,
    items: Units | None,
    n_groups: int,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[np.ndarray, np.ndarray]:
    """Per-group CIs of the mean from collapsed units (NaN: empty group).

    `clusters`: units per (group, image); `items`: units per (group, item value), needed only
    when some value is not 0/1 (None: all are). The method is closed-form (see
    ``medlens.stats.intervals``): Wilson for independent 0/1 values, the t interval for other values,
    and for groups whose images hold several items the cluster-robust t(G−1) interval enveloped
    with the item-level one, so it is never narrower than Wilson. `n_resamples` and `seed` are
    kept for callers written for the earlier percentile bootstrap and no longer change a bound.
    Bounds depend on a group's own units only, so a cell gets the same interval in every table.
    """
    return spread(clusters, items, n_groups).bounds(level)


def bootstrap_ci(
    values: np.ndarray,
    clusters: np.ndarray | None = None,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float]:
    """Monte-Carlo percentile bootstrap CI of the mean, resampling whole clusters (images).

    The plain bootstrap, for statistics other than a reported score (a paired difference);
    scores get :func:`group_cis`.
    """
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return float("nan"), float("nan")
    lo, hi = bootstrap_ci_groups(
        values, np.zeros(values.size, dtype=np.intp), clusters,
        n_resamples=n_resamples, seed=seed, level=level,
    )  # fmt: skip
    return float(lo[0]), float(hi[0])


def bootstrap_ci_groups(
    values: np.ndarray,
    groups: np.ndarray,
    clusters: np.ndarray | None = None,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[np.ndarray, np.ndarray]:
    """Per-group Monte-Carlo percentile bootstrap CIs (``np.unique(groups)`` order), by cluster."""
    values = np.asarray(values, dtype=float)
    names, codes = np.unique(np.asarray(groups), return_inverse=True)
    units = _cluster_units(values, codes.ravel(), clusters)
    return resampled_cis(units, names.size, n_resamples=n_resamples, seed=seed, level=level)


def _cluster_units(values: np.ndarray, codes: np.ndarray, clusters: np.ndarray | None) -> Units:
    """One unit per (group, cluster): its value sum and item count (per item without clusters)."""
    if clusters is None:
        return collapse(codes, values, np.ones(values.size))
    cluster_codes = np.unique(np.asarray(clusters), return_inverse=True)[1].ravel()
    pair = codes.astype(np.int64) * (int(cluster_codes.max(initial=0)) + 1) + cluster_codes
    unit_keys, unit_index = np.unique(pair, return_inverse=True)
    unit_index = unit_index.ravel()
    sums = np.bincount(unit_index, weights=values, minlength=unit_keys.size)
    sizes = np.bincount(unit_index, minlength=unit_keys.size).astype(float)
    unit_group = np.empty(unit_keys.size, dtype=np.intp)
    unit_group[unit_index] = codes
    return collapse(unit_group, sums, sizes)


def _select(units: Units, wanted: np.ndarray) -> Units:
    keep = wanted[units.group]
    return Units(units.group[keep], units.sum[keep], units.size[keep], units.count[keep])


def resampled_cis(
    units: Units, n_groups: int, *, n_resamples: int = 1000, seed: int = 0, level: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile CI of Σsum/Σsize per group, resampling each group's units with replacement.

    Every group is drawn as if by a generator of its own seeded with `seed`, over its units in
    (sum, size) order, so its bounds depend on its own units alone, never on the other groups
    of the call (nor on how a caller ordered or collapsed them). NaN for groups without units.
    """
    units = collapse(units.group, units.sum, units.size, units.count)
    present, starts, kinds = np.unique(units.group, return_index=True, return_counts=True)
    m = np.add.reduceat(units.count, starts) if starts.size else np.zeros(0, np.int64)
    means = np.empty((n_resamples, present.size))
    typed = kinds * _TYPED_MIN_UNITS <= m
    for column in np.flatnonzero(typed).tolist():
        part = slice(starts[column], starts[column] + kinds[column])
        means[:, column] = _kind_means(
            units.sum[part], units.size[part], units.count[part], n_resamples, seed
        )
    if not typed.all():
        rows = np.repeat(~typed, kinds)
        means[:, ~typed] = _index_means(
            np.repeat(units.sum[rows], units.count[rows]),
            np.repeat(units.size[rows], units.count[rows]),
            m[~typed],
            n_resamples,
            seed,
        )
    lo, hi = np.full(n_groups, np.nan), np.full(n_groups, np.nan)
    lo[present], hi[present] = percentiles(means, level)
    return lo, hi


def _kind_means(
    sums: np.ndarray, sizes: np.ndarray, counts: np.ndarray, n_resamples: int, seed: int
) -> np.ndarray:
    """Resampled Σsum/Σsize of one group with many units of few kinds (sum, size).

    Drawn as a multinomial over kinds, one conditional binomial per kind: the same distribution
    as drawing units (0/1 scores, small images), at a cost that does not grow with the group.
    """
    rng = np.random.default_rng(seed)
    m = int(counts.sum())
    remaining, left = np.full(n_resamples, m, dtype=np.int64), m
    total, size = np.zeros(n_resamples), np.zeros(n_resamples)
    for count, kind_sum, kind_size in zip(
        counts.tolist(), sums.tolist(), sizes.tolist(), strict=True
    ):
        drawn = rng.binomial(remaining, count / left) if count < left else remaining
        remaining, left = remaining - drawn, left - count
        total += drawn * kind_sum
        size += drawn * kind_size
    return total / size


def _index_means(
    sums: np.ndarray, sizes: np.ndarray, m: np.ndarray, n_resamples: int, seed: int
) -> np.ndarray:
    """(n_resamples, groups) Σsum/Σsize from drawing unit indices; `sums`/`sizes` hold the
    groups' units one after the other, `m` their numbers of units.

    A group of m units draws ⌊indices⌋ with a fresh generator seeded with `seed`, in batches
    that depend on m only; groups of equal size therefore share one draw, taken once.
    """
    offsets = np.concatenate(([0], np.cumsum(m)[:-1])).astype(np.int64)
    clustered = bool((sizes != 1).any())
    out = np.empty((n_resamples, m.size))
    for size_m in np.unique(m).tolist():
        columns = np.flatnonzero(m == size_m)
        rng = np.random.default_rng(seed)
        batch = max(1, _BATCH_CELLS // size_m)
        for first in range(0, n_resamples, batch):
            rows = min(batch, n_resamples - first)
            picks = rng.integers(0, size_m, size=(rows, size_m))
            step = max(1, _BATCH_CELLS // (rows * size_m))
            for chunk in range(0, columns.size, step):
                these = columns[chunk : chunk + step]
                index = offsets[these, None, None] + picks[None]
                total = sums[index].sum(axis=2)
                size = sizes[index].sum(axis=2) if clustered else size_m
                out[first : first + rows, these] = (total / size).T
    return out


def percentiles(means: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    tail = (1.0 - level) / 2.0 * 100.0
    if means.size == 0:
        return np.full(means.shape[1], np.nan), np.full(means.shape[1], np.nan)
    lo, hi = np.percentile(means, [tail, 100.0 - tail], axis=0)
    return np.asarray(lo, float), np.asarray(hi, float)


def binomial_percentile_ci(
    n: np.ndarray, p: np.ndarray, level: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile-bootstrap CI of a mean of n independent 0/1 values with mean p, exactly."""
    tail = (1.0 - level) / 2
    n = np.asarray(n, dtype=np.int64)
    p = np.clip(np.asarray(p, dtype=float), 0.0, 1.0)
    return binomial_quantile(tail, n, p) / n, binomial_quantile(1.0 - tail, n, p) / n


def binomial_quantile(q: float, n: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Smallest k with P(Binomial(n, p) ≤ k) ≥ q, per element, by bisection on scipy's CDF.

    Same values as ``scipy.stats.binom.ppf``; ``scipy.special`` alone imports in a third of
    the time of ``scipy.stats``, which matters for a command that answers in about a second.
    """
    from scipy.special import bdtr

    low, high = np.zeros(n.shape, dtype=np.int64), n.copy()
    while (open_ := low < high).any():
        middle = (low + high) // 2
        reached = bdtr(middle, n, p) >= q * (1 - 1e-12)
        high = np.where(open_ & reached, middle, high)
        low = np.where(open_ & ~reached, middle + 1, low)
    return low.astype(float)


def bca_bounds(
    replicates: np.ndarray, observed: float, jackknife: np.ndarray, level: float = 0.95
) -> tuple[float, float]:
    """Efron's BCa bounds from bootstrap `replicates`, the `observed` statistic and its
    leave-one-unit-out `jackknife` values (scipy.stats.bootstrap's method="BCa" on the same
    replicates); the percentile bounds where the correction is undefined."""
    from scipy.special import ndtr, ndtri

    tail = (1 - level) / 2
    share = (np.sum(replicates < observed) + 0.5 * np.sum(replicates == observed)) / replicates.size
    deviation = jackknife.mean() - jackknife if jackknife.size else np.zeros(0)
    spread = float((deviation**2).sum())
    if not 0 < share < 1 or math.isnan(observed) or spread == 0:
        low, high = np.percentile(replicates, [100 * tail, 100 * (1 - tail)])
        return float(low), float(high)
    bias = float(ndtri(share))
    acceleration = float((deviation**3).sum()) / (6 * spread**1.5)
    bounds = []
    for z in (ndtri(tail), ndtri(1 - tail)):
        shifted = bias + (bias + z) / (1 - acceleration * (bias + z))
        bounds.append(float(np.percentile(replicates, 100 * float(ndtr(shifted)))))
    return bounds[0], bounds[1]

"""Paired and two-group differences: intervals that never collapse, and image-level tests.

- :func:`paired_ci`: CI of mean(b − a) over the same items. 0/1 pairs: the Agresti–Min interval
  (Wald on the 2×2 table with ½ added to each cell, never zero width); other scores: the t
  interval of the differences, enveloped with the same pseudo-counts (never zero width). When items share images, enveloped with the cluster-robust
  t(G−1) interval of the differences (the safeguards of ``medlens.stats.intervals``).
- :func:`sign_flip_test`: image-level sign-flip permutation test of mean(b − a) = 0. Without
  shared images and with 0/1 scores it is the exact McNemar test; with shared images it flips
  whole images, so questions about one image count once. Exact (by convolution) for 0/1
  scores, Monte-Carlo otherwise; the mid-p value comes with it.
- :func:`difference_ci`: CI of mean(group 1) − mean(group 2) over different items that may share
  images (closed − open, box − image): Newcombe's hybrid score interval for 0/1 scores, Welch's
  t otherwise, enveloped with the cluster-robust linearised interval.
"""

from __future__ import annotations

import numpy as np

from medlens.stats.intervals import t_bounds
from medlens.stats.wilson import wilson_plain

FLIPS = 20_000
"""Monte-Carlo sign flips for non-0/1 differences."""


def _cluster_codes(clusters: np.ndarray | None, n: int) -> np.ndarray:
    if clusters is None:
        return np.arange(n)
    return np.unique(np.asarray(clusters).astype(str), return_inverse=True)[1].ravel()


def _binary(*arrays: np.ndarray) -> bool:
    return all(bool(np.isin(a, (0.0, 1.0)).all()) for a in arrays)


def paired_ci(
    a: np.ndarray, b: np.ndarray, clusters: np.ndarray | None = None, level: float = 0.95
) -> tuple[float, float]:
    """CI of mean(b − a), clipped to [−1, 1]; NaN for no items."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    n = a.size
    if n == 0:
        return float("nan"), float("nan")
    d = b - a
    binary = _binary(a, b)
    lo, hi = _agresti_min(d, level) if binary else _fractional(d, level)
    codes = _cluster_codes(clusters, n)
    sizes = np.bincount(codes)
    groups = int((sizes > 0).sum())
    if (sizes > 1).any() and groups >= 2:
        c_lo, c_hi, se = _cluster_t(d, np.ones(n), codes, level)
        effective = float(n * n / (sizes**2).sum())
        e_lo, e_hi = _effective_agresti_min(d, se, effective, level, binary)
        lo, hi = min(lo, c_lo, e_lo), max(hi, c_hi, e_hi)
    return max(lo, -1.0), min(hi, 1.0)


def _effective_agresti_min(
    d: np.ndarray, se: float, effective_images: float, level: float, binary: bool = True
) -> tuple[float, float]:
    """The pseudo-count interval at the Korn–Graubard effective sample size of clustered pairs
    (n_eff = var(d)/SE_CR²·(z/t)², t with Kish's effective images − 1 degrees of freedom, at
    most n; Kish's effective images when no difference varies): keeps few alike images' pairs
    from the symmetric t interval's undercoverage."""
    from scipy.special import ndtri, stdtrit

    n = d.size
    z = float(ndtri(1 - (1 - level) / 2))
    t = float(stdtrit(max(effective_images - 1, 1.0), 1 - (1 - level) / 2))
    variance = float(d.var())
    # no spread to see (every pair agrees): count each image once rather than each pair
    n_eff = variance / se**2 * (z / t) ** 2 if se > 0 and variance > 0 else effective_images
    n_eff = min(max(n_eff, 1.0), float(n))
    return _agresti_min(d, level, n_eff) if binary else _fractional(d, level, n_eff)


def _agresti_min(
    d: np.ndarray, level: float, n_eff: float | None = None, weight: float = 1.0
) -> tuple[float, float]:
    """Agresti & Min (2005): Wald interval of mean(d) after adding ½ to every cell of the 2×2
    table, i.e. pseudo-differences +1 and −1 of weight ½ and 0 of weight 1 (all × `weight`).
    For 0/1 pairs it is their interval exactly."""
    from scipy.special import ndtri

    z = float(ndtri(1 - (1 - level) / 2))
    scale = 1.0 if n_eff is None else n_eff / d.size  # items weighed down to n_eff
    total = scale * d.size + 2.0 * weight
    centre = scale * float(d.sum()) / total
    second = (scale * float((d * d).sum()) + weight) / total
    half = z * np.sqrt(max(second - centre**2, 0.0) / total)
    return centre - half, centre + half


def _fractional(d: np.ndarray, level: float, n_eff: float | None = None) -> tuple[float, float]:
    """Differences in [−1, 1] that are not all 0/±1 pairs (token F1, rubric ratings, box F1):
    the envelope of ``stats.bounded`` on (d + 1)/2, with Agresti–Min's pseudo-counts in place
    of its pseudo-values: at full weight up to 20 pairs, when every difference is equal, and
    when they are all −1, 0 or 1, fading beyond (× (20/n)⁴), where Hall's skew-corrected t and
    the Wilson interval on the observed range cover (the full pseudo-counts at every n made
    the interval 1.4–2.1× a t interval that covered)."""
    from medlens.stats.bounded import (
        GUARD_FULL_N,
        guard_weight,
        hall_t,
        item_shape,
        range_wilson,
    )

    n = float(d.size) if n_eff is None else n_eff
    y = (d + 1) / 2  # on [0, 1]: what the bounded-mean interval is written for
    shape = item_shape(np.zeros(d.size, np.intp), y, np.ones(d.size), np.array([y.mean()]), 1)
    lattice = bool(np.isin(d, (-1.0, 0.0, 1.0)).all())
    full = float(guard_weight(np.array([1.0]), level, shape)[0])  # z²/2 at this level
    weight = 1.0 if lattice else float(guard_weight(np.array([n]), level, shape)[0]) / full
    lo, hi = _agresti_min(d, level, n_eff, weight)
    if n > 1 and shape.high[0] > shape.low[0]:
        mean, variance = np.array([y.mean()]), np.array([y.var()])
        r_lo, r_hi = range_wilson(mean, variance, np.array([n]), shape.low, shape.high, level)
        lo, hi = min(lo, 2 * float(r_lo[0]) - 1), max(hi, 2 * float(r_hi[0]) - 1)
        if n > GUARD_FULL_N:  # Hall's expansion is for moderate n (see stats.bounded)
            h_lo, h_hi = hall_t(mean, variance, np.array([n]), shape.skew, level)
            lo, hi = min(lo, 2 * float(h_lo[0]) - 1), max(hi, 2 * float(h_hi[0]) - 1)
    return lo, hi


def _cluster_t(
    values: np.ndarray, sizes: np.ndarray, codes: np.ndarray, level: float
) -> tuple[float, float, float]:
    """Cluster-robust t interval of Σvalues/Σsizes (ratio estimator, CR1 scaling) with
    Kish's effective number of clusters − 1 degrees of freedom, and its standard error."""
    sums = np.bincount(codes, values)
    counts = np.bincount(codes, sizes)
    keep = counts > 0
    sums, counts = sums[keep], counts[keep]
    groups = sums.size
    mean = sums.sum() / counts.sum()
    squares = float(((sums - mean * counts) ** 2).sum())
    se = np.sqrt(groups / (groups - 1) * squares) / counts.sum()
    effective = min(float(counts.sum() ** 2 / (counts**2).sum()), float(groups))
    df = max(effective - 1.0, 1.0)  # at least 1 from 2 clusters on
    lo, hi = t_bounds(np.array([mean]), np.array([se]), np.array([df]), level)
    return float(lo[0]), float(hi[0]), float(se)


def sign_flip_test(
    a: np.ndarray, b: np.ndarray, clusters: np.ndarray | None = None, seed: int = 0
) -> tuple[float, float]:
    """Two-sided (p, mid-p) of mean(b − a) = 0, flipping the sign of each image's total.

    Exact for 0/1 scores (equal to scipy's ``binomtest(wins, wins + losses, 0.5)`` when no image
    holds two items); Monte-Carlo with :data:`FLIPS` flips (p = (1 + hits)/(1 + flips)) else.
    """
    a, b = np.asarray(a, float), np.asarray(b, float)
    totals = np.bincount(_cluster_codes(clusters, a.size), b - a) if a.size else np.zeros(0)
    totals = totals[np.abs(totals) > 1e-12]
    if totals.size == 0:
        return 1.0, 1.0
    if _binary(a, b):
        return _exact_flip(np.rint(totals).astype(np.int64))
    rng = np.random.default_rng(seed)
    observed = abs(float(totals.sum())) - 1e-9
    batch = max(1, 4_000_000 // totals.size)  # bounds memory for runs of 26,000 images
    hits = 0
    for first in range(0, FLIPS, batch):
        signs = rng.choice((-1.0, 1.0), size=(min(batch, FLIPS - first), totals.size))
        hits += int((np.abs(signs @ totals) >= observed).sum())
    p = (1 + hits) / (1 + FLIPS)
    return p, p


def _exact_flip(totals: np.ndarray) -> tuple[float, float]:
    """Exact (p, mid-p) of |Σ ε_g·|t_g|| ≥ |Σ t_g| over independent fair signs ε_g.

    The flipped sum is a sum, over each distinct magnitude m with c images, of m·(2·B − c) with
    B ~ Binomial(c, ½): few distinct magnitudes, so few convolutions of short arrays.
    """
    from scipy.special import bdtr

    observed = abs(int(totals.sum()))
    magnitudes, counts = np.unique(np.abs(totals), return_counts=True)
    pmf = np.ones(1)  # over the sums −S…S in steps of 1, S = Σ magnitudes so far
    for magnitude, count in zip(magnitudes.tolist(), counts.tolist(), strict=True):
        j = np.arange(count + 1)
        binomial = np.diff(np.concatenate(([0.0], bdtr(j, count, 0.5))))
        step = np.zeros(2 * magnitude * count + 1)
        step[2 * magnitude * j] = binomial
        pmf = _convolve(pmf, step)
    span = (pmf.size - 1) // 2
    values = np.abs(np.arange(-span, span + 1))
    p = float(pmf[values >= observed].sum())
    mid = p - 0.5 * float(pmf[values == observed].sum())
    return min(p, 1.0), min(mid, 1.0)


def _convolve(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """np.convolve, through the FFT when both arrays are long."""
    if min(x.size, y.size) < 512:
        return np.convolve(x, y)
    size = x.size + y.size - 1
    out = np.fft.irfft(np.fft.rfft(x, size) * np.fft.rfft(y, size), size)
    return np.clip(out, 0.0, None)


def difference_ci(
    values: np.ndarray,
    first: np.ndarray,
    second: np.ndarray,
    clusters: np.ndarray | None = None,
    level: float = 0.95,
) -> tuple[float, float] | None:
    """CI of mean(values[first]) − mean(values[second]) (boolean masks over the same items).

    None when a side is empty. Clipped to [−1, 1].
    """
    values = np.asarray(values, float)
    x, y = values[first], values[second]
    if x.size == 0 or y.size == 0:
        return None
    if _binary(x, y):
        lo, hi = _newcombe(x, y, level)
    else:
        lo, hi = _welch(x, y, level)
    codes = _cluster_codes(clusters, values.size)
    both = first | second
    used = codes[both]
    if np.unique(used).size >= 2 and np.bincount(used).max() > 1:
        c_lo, c_hi = _linearised(values, first, second, codes, level)
        lo, hi = min(lo, c_lo), max(hi, c_hi)
    return max(lo, -1.0), min(hi, 1.0)


def _newcombe(x: np.ndarray, y: np.ndarray, level: float) -> tuple[float, float]:
    """Newcombe's hybrid score interval (method 10), from plain Wilson bounds of each side."""
    k1, n1, k2, n2 = x.sum(), x.size, y.sum(), y.size
    (l1,), (u1,) = wilson_plain(np.array([k1]), np.array([n1]), level)
    (l2,), (u2,) = wilson_plain(np.array([k2]), np.array([n2]), level)
    p1, p2 = k1 / n1, k2 / n2
    d = p1 - p2
    lo = d - np.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    hi = d + np.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return float(lo), float(hi)


def _welch(x: np.ndarray, y: np.ndarray, level: float) -> tuple[float, float]:
    """Welch's t interval of mean(x) − mean(y) (unbounded when a side has one item)."""
    if x.size < 2 or y.size < 2:
        return -1.0, 1.0
    v1, v2 = x.var(ddof=1) / x.size, y.var(ddof=1) / y.size
    se = np.sqrt(v1 + v2)
    df = (v1 + v2) ** 2 / (v1**2 / (x.size - 1) + v2**2 / (y.size - 1)) if se > 0 else 1.0
    lo, hi = t_bounds(np.array([x.mean() - y.mean()]), np.array([se]), np.array([df]), level)
    return float(lo[0]), float(hi[0])


def _linearised(
    values: np.ndarray, first: np.ndarray, second: np.ndarray, codes: np.ndarray, level: float
) -> tuple[float, float]:
    """Cluster-robust interval of a difference of two ratio means sharing clusters: the
    linearised residual e_g = (s₁ − p₁m₁)/M₁ − (s₂ − p₂m₂)/M₂ per image, t(G−1)."""
    size = int(codes.max()) + 1
    s1 = np.bincount(codes[first], values[first], minlength=size)
    m1 = np.bincount(codes[first], minlength=size).astype(float)
    s2 = np.bincount(codes[second], values[second], minlength=size)
    m2 = np.bincount(codes[second], minlength=size).astype(float)
    keep = (m1 + m2) > 0
    s1, m1, s2, m2 = s1[keep], m1[keep], s2[keep], m2[keep]
    p1, p2 = s1.sum() / m1.sum(), s2.sum() / m2.sum()
    residual = (s1 - p1 * m1) / m1.sum() - (s2 - p2 * m2) / m2.sum()
    groups = residual.size
    se = np.sqrt(groups / (groups - 1) * float((residual**2).sum()))
    lo, hi = t_bounds(np.array([p1 - p2]), np.array([se]), np.array([groups - 1.0]), level)
    return float(lo[0]), float(hi[0])

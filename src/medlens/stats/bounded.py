"""The interval of a mean of values in [0, 1] that are not all 0/1 (token F1, ROUGE-L, a 0–10
rubric rating / 10): :func:`bounded_mean`, the one such interval every table prints.

Three intervals, enveloped, each covering where the others do not (``bench/coverage_round4.py``
checks the envelope on ceiling- and floor-heavy, tight judge-like, two-valued, rare-extreme and
continuous scores at n = 5…200):

- **Pseudo-values at 0 and 1** (Agresti & Coull's interval for 0/1 values), weight z²/2 each up
  to :data:`GUARD_FULL_N` values, fading as (GUARD_FULL_N / n)⁴ beyond, and at full weight at
  every n when the values are all 0/1 or all equal (nothing is known about their spread). They
  keep small samples from missing values not yet seen (a rare 0 among 9s and 10s) and a constant
  set of ratings from a zero-width interval. At full weight on every n (the round-3 interval)
  they made tight ratings' intervals 2–6× the width of a t interval that covered.
- **Hall's skewness-corrected t** (:func:`hall_t`), beyond GUARD_FULL_N values (an expansion
  in 1/√n: at 3 values it can span [−0.3, 2.5]): covers skewed means near a bound from about 40
  values on, where the plain t interval falls to 91–93%.
- **Wilson on the observed range** (:func:`range_wilson`): values mapped onto [min, max], the
  Wilson interval at n* = n·ȳ(1 − ȳ)/s²ᵧ (n itself for two-valued scores, more for spread-out
  ones, where it is about the Wald interval). Two-valued ratings (8 or 9) are a proportion in
  disguise; the t interval's coverage then is the Wald interval's, 90–93% at any n.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from medlens.stats.wilson import wilson_plain

GUARD_FULL_N = 20
"""Up to this many values the pseudo-values weigh z²/2 each (see the module docstring)."""


@dataclass(frozen=True)
class ItemShape:
    """Per group, what :func:`bounded_mean` needs beyond mean and variance (parallel arrays)."""

    skew: np.ndarray
    """Skewness (third standardised moment) of the values; 0 where they do not vary."""
    low: np.ndarray
    """Smallest value."""
    high: np.ndarray
    """Largest value."""
    zero_one: np.ndarray
    """The values are all 0 or 1 (a continuous metric that happened to be 0/1)."""

    def pick(self, index: slice | np.ndarray) -> ItemShape:
        return ItemShape(self.skew[index], self.low[index], self.high[index], self.zero_one[index])


def item_shape(
    group: np.ndarray, values: np.ndarray, counts: np.ndarray, mean: np.ndarray, n_groups: int
) -> ItemShape:
    """The shape of each group's values from collapsed (group, value, count) units."""
    deviation = np.round(values - mean[group], 12)  # a constant group has no spread at all
    weight = counts.astype(float)
    n = np.bincount(group, weight, minlength=n_groups)
    second = np.bincount(group, weight * deviation**2, minlength=n_groups)
    third = np.bincount(group, weight * deviation**3, minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        skew = np.where(second > 0, (third / n) / (second / n) ** 1.5, 0.0)
    low, high = np.full(n_groups, np.inf), np.full(n_groups, -np.inf)
    np.minimum.at(low, group, values)
    np.maximum.at(high, group, values)
    odd = np.bincount(group, (values != 0) & (values != 1), minlength=n_groups)
    return ItemShape(np.nan_to_num(skew), low, high, odd == 0)


def guard_weight(n: np.ndarray, level: float, shape: ItemShape | None) -> np.ndarray:
    """Weight of each pseudo-value at 0 and at 1 when `n` values were seen (module docstring);
    z²/2 without a shape."""
    z = _z(level)
    n = np.asarray(n, float)
    if shape is None:
        return np.full(n.shape, z * z / 2)
    fade = np.minimum(1.0, (GUARD_FULL_N / np.maximum(n, 1.0)) ** 4)
    unknown_spread = shape.zero_one | (shape.high <= shape.low)
    return np.asarray(z * z / 2 * np.where(unknown_spread, 1.0, fade))


def bounded_mean(
    mean: np.ndarray,
    variance: np.ndarray,
    n: np.ndarray,
    level: float = 0.95,
    shape: ItemShape | None = None,
    seen: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Interval of the mean of n values in [0, 1] with mean `mean` and variance `variance`
    (divided by n), clipped to [0, 1]; [0, 1] for a single value. Without `shape` it is the
    pseudo-value interval at full weight (Agresti–Coull's for 0/1 values); with it, the
    envelope of the module docstring. `n` may be an effective sample size (clustered cells);
    `seen`, the values actually looked at (default n), sets the pseudo-values' weight."""
    mean, variance, n = (np.asarray(x, float) for x in (mean, variance, n))
    z = _z(level)
    pseudo = guard_weight(n if seen is None else seen, level, shape)
    total = n + 2 * pseudo
    centre = (mean * n + pseudo) / total
    second = (n * (variance + mean**2) + pseudo) / total
    half = z * np.sqrt(np.maximum(second - centre**2, 0.0) / total)
    half = np.where(n > 1, half, np.inf)  # one value says nothing about the spread
    lo, hi = centre - half, centre + half
    if shape is not None:
        h_lo, h_hi = hall_t(mean, variance, n, shape.skew, level)
        # Hall's expansion is for moderate n: at n = 3 it can span [−0.3, 2.5]
        faded = n > GUARD_FULL_N
        r_lo, r_hi = range_wilson(mean, variance, n, shape.low, shape.high, level)
        lo = np.fmin(np.fmin(lo, np.where(faded, h_lo, np.nan)), r_lo)
        hi = np.fmax(np.fmax(hi, np.where(faded, h_hi, np.nan)), r_hi)
    return np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)


def hall_t(
    mean: np.ndarray, variance: np.ndarray, n: np.ndarray, skew: np.ndarray, level: float = 0.95
) -> tuple[np.ndarray, np.ndarray]:
    """Hall's (1992) skewness-corrected t interval of a mean: T = √n(x̄ − μ)/s transformed by
    g(T) = T + γT²/(3√n) + γ²T³/(27n) + γ/(6√n) (γ the skewness; g is monotone), the set of μ
    with |g(T)| ≤ t(n − 1); scipy's t interval when γ = 0. `variance` is divided by n; NaN
    where n < 2."""
    from scipy.special import stdtrit

    skew = np.asarray(skew, float)
    with np.errstate(invalid="ignore", divide="ignore"):
        root_n = np.sqrt(n)
        se = np.sqrt(variance * n / (n - 1)) / root_n
        quantile = stdtrit(np.maximum(n - 1, 1), 1 - (1 - level) / 2)
        a = skew / (3 * root_n)
        safe = np.where(a == 0, 1.0, a)

        def inverse(y: np.ndarray) -> np.ndarray:
            # g less its constant is ((1 + aT)³ − 1)/(3a); its inverse is T itself when a = 0
            return np.where(a == 0, y, (np.cbrt(1 + 3 * safe * y) - 1) / safe)

        shift = skew / (6 * root_n)
        t_low, t_high = inverse(-quantile - shift), inverse(quantile - shift)
    ok = n > 1
    return np.where(ok, mean - t_high * se, np.nan), np.where(ok, mean - t_low * se, np.nan)


def range_wilson(
    mean: np.ndarray,
    variance: np.ndarray,
    n: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    level: float = 0.95,
) -> tuple[np.ndarray, np.ndarray]:
    """The Wilson interval of the values mapped onto their observed range [low, high], at
    n* = n·ȳ(1 − ȳ)/s²ᵧ, mapped back (module docstring); NaN where the values do not vary."""
    width = np.asarray(high, float) - np.asarray(low, float)
    varies = width > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        y = np.where(varies, (mean - low) / np.where(varies, width, 1.0), 0.5)
        spread = variance / np.where(varies, width, 1.0) ** 2
        n_star = np.where(spread > 0, n * y * (1 - y) / spread, n)
    w_lo, w_hi = wilson_plain(y * n_star, n_star, level)
    return (
        np.where(varies, low + width * w_lo, np.nan),
        np.where(varies, low + width * w_hi, np.nan),
    )


def _z(level: float) -> float:
    from scipy.special import ndtri

    return float(ndtri(1 - (1 - level) / 2))

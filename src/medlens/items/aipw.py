"""The design-based estimator of a population mean from a stratified sample of units, augmented
by an item model's predictions (numbers only).

With predictions f for every population item, units u (clusters of items) drawn by stratified
simple random sampling (M_h units in stratum h, m_h drawn), Y_u and F_u a unit's summed scores and
predictions, and N population items:

    μ̂ = [ λ · Σ_population f  +  Σ_h (M_h / m_h) Σ_{u drawn in h} (Y_u − λ F_u) ] / N

For any fixed λ and any predictions this is unbiased over the design (the second sum is the
Horvitz–Thompson estimator of Σ (y − λf)); λ = 1 is AIPW / prediction-powered inference, λ = 0
the plain stratified (π-weighted) mean. λ is tuned to minimise the estimated variance (clipped to
[0, 1], as power-tuned PPI++ does): bad predictions are then down-weighted instead of widening
the interval beyond the plain sample's. It is **cross-fitted**: each drawn unit's residual takes
the λ tuned on the other drawn units (leave one unit out), and the population's predictions the
average λ̄ of those (weighted by w_u F_u, w_u = M_h/m_h), so

    μ̂ = [ λ̄ · Σ_population f  +  Σ_h (M_h / m_h) Σ_{u drawn in h} (Y_u − λ₋ᵤ F_u) ] / N

(the same as above when every λ₋ᵤ is one λ). A λ tuned on the very units it is applied to
fitted their noise: with image units and n ≤ 100 (~17–40 images) the interval covered 87–94%
(issue 45).

    Var̂(μ̂) = Σ_h M_h² (1 − m_h / M_h) s_h² / m_h / N²,   s_h² = sample variance of Y_u − λ₋ᵤF_u

(finite-population corrected). The units are what the design drew: single items (``items sample
--unit item``), whose design variance is exactly this with one item a unit, however the items
share images, since the draw never takes an image's questions together; or images with all their
questions (``--unit image``), whose totals Y_u make the variance cluster-aware. The 95% interval
is μ̂ ± t(df)·SE with df = Σ m_h − H, enveloped with Wilson's interval at Korn & Graubard's
effective sample size n_eff = μ̂(1 − μ̂)/SE²·(z/t)², clipped to [0, 1]: near a ceiling the residuals
are skewed and the symmetric interval covered 87–90% (issue 45); the Wilson interval there is
asymmetric, and elsewhere about the t interval.

When a stratum is sampled (m_h < M_h) yet the estimated variance is 0 — every drawn unit of each
stratum has the same residual, as when a model gets every sampled item right — the plug-in
variance says nothing about the unsampled items, and μ̂ ± t·0 would be a point. The interval is
then the Wilson interval (with continuity correction) at μ̂ on the Σ m_h drawn units: the rule of
Korn & Graubard (1998) for a design whose estimated variance is 0 (effective sample size = n).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from medlens.stats.wilson import wilson, wilson_plain


@dataclass(frozen=True)
class StratumSample:
    """One stratum's population size (units) and its drawn units' totals."""

    population_units: int
    observed: np.ndarray
    """Y_u: summed scores of each drawn unit."""
    predicted: np.ndarray
    """F_u: summed predictions of the same units."""
    items: int = 0
    """Items the drawn units hold (0: not recorded, counted as one per unit)."""

    @property
    def weight(self) -> float:
        """M_h² (1 − m_h/M_h) / m_h: the stratum's factor in the variance of a total."""
        m, big_m = len(self.observed), self.population_units
        return big_m * big_m * (1 - m / big_m) / m


@dataclass(frozen=True)
class DesignEstimate:
    """μ̂, its standard error, the t degrees of freedom and the tuning λ used."""

    estimate: float
    se: float
    df: int
    tuning: float
    degenerate_units: int = 0
    """Σ m_h when a stratum was sampled but the estimated variance is 0 (module docstring);
    0 otherwise."""
    items: int = 0
    """Items the drawn units hold."""

    def interval(self, level: float = 0.95) -> tuple[float, float]:
        """μ̂ ± t(df)·SE, enveloped with Wilson's interval at the Korn–Graubard effective sample
        size (module docstring); Wilson's on the drawn units when the variance estimate is 0."""
        from scipy.special import ndtri, stdtrit

        if self.degenerate_units:
            n = np.array([float(self.degenerate_units)])
            w_lo, w_hi = wilson(n * self.estimate, n, level)
            return float(w_lo[0]), float(w_hi[0])
        t = float(stdtrit(max(self.df, 1), 1 - (1 - level) / 2))
        lo, hi = self.estimate - t * self.se, self.estimate + t * self.se
        p = min(max(self.estimate, 0.0), 1.0)
        if self.se > 0 and 0 < p < 1:
            z = float(ndtri(1 - (1 - level) / 2))
            n_eff = p * (1 - p) / self.se**2 * (z / t) ** 2
            k_lo, k_hi = wilson_plain(np.array([p * n_eff]), np.array([n_eff]), level)
            lo, hi = min(lo, float(k_lo[0])), max(hi, float(k_hi[0]))
        return max(0.0, float(lo)), min(1.0, float(hi))


def _variance_parts(strata: Sequence[StratumSample]) -> tuple[float, float, float]:
    """Σ_h c_h var(Y), Σ_h c_h cov(Y, F), Σ_h c_h var(F) over strata with m_h ≥ 2."""
    parts = [_stratum_parts(s) for s in strata]
    return (sum(p[0] for p in parts), sum(p[1] for p in parts), sum(p[2] for p in parts))


def _stratum_parts(stratum: StratumSample) -> tuple[float, float, float]:
    """c_h var(Y), c_h cov(Y, F), c_h var(F) of one stratum (zeros below 2 drawn units; c_h uses
    the stratum's own m_h)."""
    if len(stratum.observed) < 2:
        return 0.0, 0.0, 0.0
    cov = np.cov(stratum.observed, stratum.predicted, ddof=1)
    w = stratum.weight
    return w * float(cov[0, 0]), w * float(cov[0, 1]), w * float(cov[1, 1])


def tuned(strata: Sequence[StratumSample]) -> float:
    """The λ in [0, 1] minimising the estimated variance."""
    _, cyf, vf = _variance_parts(strata)
    return float(np.clip(cyf / vf, 0.0, 1.0)) if vf > 0 else 0.0


def design_estimate(
    population_n: int,
    predicted_total: float,
    strata: Sequence[StratumSample],
    tuning: float | None = None,
) -> DesignEstimate:
    """μ̂ and its variance (module docstring); `tuning` None = λ cross-fitted (each unit's from
    the other units, :func:`cross_fitted`), a number = that λ for every unit."""
    tunings = (
        cross_fitted(strata) if tuning is None
        else [np.full(len(s.observed), float(tuning)) for s in strata]
    )  # fmt: skip
    weight = [s.population_units / len(s.observed) for s in strata]
    applied = sum(
        w * float(np.sum(t * s.predicted)) for w, t, s in zip(weight, tunings, strata, strict=True)
    )
    spread = sum(w * float(np.sum(s.predicted)) for w, s in zip(weight, strata, strict=True))
    mean_tuning = (
        applied / spread if spread > 0 else float(np.mean(np.concatenate(tunings)))
    )  # λ̄: what the population's predictions are weighted by
    total = mean_tuning * predicted_total
    variance = 0.0
    for w, t, stratum in zip(weight, tunings, strata, strict=True):
        residual = stratum.observed - t * stratum.predicted
        total += w * float(np.sum(residual))
        if len(residual) >= 2:
            variance += stratum.weight * float(np.var(residual, ddof=1))
    drawn = sum(len(s.observed) for s in strata)
    sampled = any(len(s.observed) < s.population_units for s in strata)
    variance = variance if variance > 1e-24 else 0.0
    return DesignEstimate(
        estimate=total / population_n,
        se=float(np.sqrt(variance)) / population_n,
        df=max(drawn - len(strata), 1),
        tuning=mean_tuning,
        degenerate_units=drawn if sampled and variance == 0 else 0,
        items=drawn_items(strata),
    )


def cross_fitted(strata: Sequence[StratumSample]) -> list[np.ndarray]:
    """Per stratum, each drawn unit's λ tuned on every other drawn unit (leave one unit out),
    so no unit's residual is taken with a weight fitted to it: λ tuned on the ~17 images it
    was applied to made the variance estimate optimistic (87–94% at n ≤ 100, issue 45)."""
    parts = [_stratum_parts(s) for s in strata]
    _, cyf, vf = (sum(p[k] for p in parts) for k in range(3))
    out = []
    for stratum, own in zip(strata, parts, strict=True):
        lams = np.empty(len(stratum.observed))
        for u in range(len(stratum.observed)):
            keep = np.arange(len(stratum.observed)) != u
            left = _stratum_parts(StratumSample(stratum.population_units,
                                                stratum.observed[keep], stratum.predicted[keep]))  # fmt: skip
            c = cyf - own[1] + left[1]
            f = vf - own[2] + left[2]
            lams[u] = float(np.clip(c / f, 0.0, 1.0)) if f > 0 else 0.0
        out.append(lams)
    return out


def drawn_items(strata: Sequence[StratumSample]) -> int:
    """Items the drawn units hold (when the sample records them; else the units)."""
    return sum(s.items if s.items else len(s.observed) for s in strata)

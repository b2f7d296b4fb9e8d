"""The design-based estimator of a population mean from a stratified sample of units, augmented
by an item model's predictions (numbers only).

With predictions f for every population item, units u (clusters of items) drawn by stratified
simple random sampling (M_h units in stratum h, m_h drawn), Y_u and F_u a unit's summed scores and
predictions, and N population items:

    μ̂ = [ λ · Σ_population f  +  Σ_h (M_h / m_h) Σ_{u drawn in h} (Y_u − λ F_u) ] / N

For any fixed λ and any predictions this is unbiased over the design (the second sum is the
Horvitz–Thompson estimator of Σ (y − λf)); λ = 1 is AIPW / prediction-powered inference, λ = 0
the plain stratified (π-weighted) mean. λ is tuned on the sample to minimise the estimated
variance (clipped to [0, 1], as power-tuned PPI++ does): bad predictions are then down-weighted
instead of widening the interval beyond the plain sample's.

    Var̂(μ̂) = Σ_h M_h² (1 − m_h / M_h) s_h² / m_h / N²,   s_h² = sample variance of Y_u − λF_u

(finite-population corrected). The units are what the design drew: single items (``items sample
--unit item``), whose design variance is exactly this with one item a unit, however the items
share images, since the draw never takes an image's questions together; or images with all their
questions (``--unit image``), whose totals Y_u make the variance cluster-aware. The 95% interval
is μ̂ ± t(df)·SE with df = Σ m_h − H, clipped to [0, 1].

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

from medlens.stats.intervals import wilson


@dataclass(frozen=True)
class StratumSample:
    """One stratum's population size (units) and its drawn units' totals."""

    population_units: int
    observed: np.ndarray
    """Y_u: summed scores of each drawn unit."""
    predicted: np.ndarray
    """F_u: summed predictions of the same units."""

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

    def interval(self, level: float = 0.95) -> tuple[float, float]:
        from scipy.special import stdtrit

        if self.degenerate_units:
            n = np.array([float(self.degenerate_units)])
            lo, hi = wilson(n * self.estimate, n, level)
            return float(lo[0]), float(hi[0])
        half = float(stdtrit(max(self.df, 1), 1 - (1 - level) / 2)) * self.se
        return max(0.0, self.estimate - half), min(1.0, self.estimate + half)


def _variance_parts(strata: Sequence[StratumSample]) -> tuple[float, float, float]:
    """Σ_h c_h var(Y), Σ_h c_h cov(Y, F), Σ_h c_h var(F) over strata with m_h ≥ 2."""
    vy = cyf = vf = 0.0
    for stratum in strata:
        if len(stratum.observed) < 2:
            continue
        cov = np.cov(stratum.observed, stratum.predicted, ddof=1)
        vy += stratum.weight * float(cov[0, 0])
        cyf += stratum.weight * float(cov[0, 1])
        vf += stratum.weight * float(cov[1, 1])
    return vy, cyf, vf


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
    """μ̂ and its variance (module docstring); `tuning` None = the variance-minimising λ."""
    lam = tuned(strata) if tuning is None else tuning
    total = lam * predicted_total
    for stratum in strata:
        m = len(stratum.observed)
        total += (
            stratum.population_units / m * float(np.sum(stratum.observed - lam * stratum.predicted))
        )
    vy, cyf, vf = _variance_parts(strata)
    variance = max(vy - 2 * lam * cyf + lam * lam * vf, 0.0)
    drawn = sum(len(s.observed) for s in strata)
    sampled = any(len(s.observed) < s.population_units for s in strata)
    return DesignEstimate(
        estimate=total / population_n,
        se=float(np.sqrt(variance)) / population_n,
        df=max(drawn - len(strata), 1),
        tuning=lam,
        degenerate_units=drawn if sampled and variance == 0 else 0,
    )

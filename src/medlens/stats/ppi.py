"""Prediction-powered inference for a mean (Angelopoulos et al., Science 382, 2023; PPI++ power
tuning, Angelopoulos, Duchi & Zrnic, arXiv 2311.01453): a judge's scores on every item, corrected
with human labels on a random subset, give an unbiased estimate of the human-aligned mean.

Numbers only. With ``n`` labelled items (label ``y``, judge score ``f``) and ``N`` other items
(judge score only), two disjoint samples as in ppi_py::

    θ̂ = λ·mean(f_U) + mean(y_L − λ·f_L)

- **iid** (no item shares an image with another): ppi_py's ``ppi_mean_ci`` exactly — λ̂ =
  cov_n(y, f) / ((1 + n/N)·var₁(f_L ∪ f_U)) clipped to [0, 1]; se² = λ²·var₀(f_U)/N +
  var₀(y − λf)/n; a normal quantile.
- **clustered** (questions sharing an image): the whole estimator linearised and its influence
  contributions summed per image, so the covariance between labelled and unlabelled items of
  one image is counted: V = Σ_g Ψ_g² with the CR1 factor G_s/(G_s − 1) of each stratum (images
  with labels, images without), λ̂ minimising V (clipped to [0, 1]), and a t(G_L − 2) quantile
  (G_L images hold a label; λ̂ spends a degree of freedom). With fewer than 30 labelled images
  the interval is widened to plain PPI's (λ = 1), whose variance is not minimised on the same
  few images (bench/coverage_intervals.py: 4–10 labelled images, 84–91% → ≥ 93%).

For 0/1 labels and verdicts, :func:`with_wilson_envelope` widens the interval to the Wilson
score interval (continuity-corrected) at the Korn–Graubard effective sample size, the rule of
every clustered 0/1 cell in medlens (``intervals._effective_wilson``): it lifts the coverage
of few labels (40 items: 92.4% → 93.8% in ``bench/ppi.py``'s design) for a ~4% wider interval.

A constant judge has no variance to use: λ = 0 (the human-only mean), said in ``notes``. Why
written here rather than imported: ppi_py (``ppi-python``) pulls numba and llvmlite and silences
every warning process-wide on import, and has no cluster-robust variance; the golden numbers of
the tests were checked against ppi_py 0.2.3.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np


@dataclass(frozen=True)
class PPIMean:
    """A prediction-powered estimate of a mean, with its interval."""

    estimate: float
    se: float
    ci: tuple[float, float]
    """Raw bounds (not clipped to [0, 1]: that is for display)."""
    lam: float
    """The λ used (power-tuned and clipped, or given)."""
    lam_unclipped: float | None
    n: int
    """Labelled items."""
    n_unlabelled: int
    clusters: int
    clusters_labelled: int
    clustered: bool
    quantile: float
    notes: tuple[str, ...] = field(default_factory=tuple)
    ci_ppi: tuple[float, float] | None = None
    """The PPI interval itself when ``ci`` was widened (:func:`with_wilson_envelope`)."""


def with_wilson_envelope(fit: PPIMean, alpha: float = 0.05) -> PPIMean:
    """`fit` with its interval widened to Wilson-cc at the effective sample size
    n_eff = p̂(1 − p̂)/se²·(z/q)² (at most every item), for 0/1 labels and judge scores."""
    from scipy.special import ndtri

    from medlens.stats.intervals import wilson

    p = min(1.0, max(0.0, fit.estimate))
    total = fit.n + fit.n_unlabelled
    z = float(ndtri(1 - alpha / 2))
    if fit.se > 0 and np.isfinite(fit.quantile):
        n_eff = p * (1 - p) / fit.se**2 * (z / fit.quantile) ** 2
    else:
        n_eff = float(total)
    n_eff = float(min(max(n_eff, 1.0), total))
    lo, hi = wilson(np.array(p * n_eff), np.array(n_eff), 1 - alpha)
    widened = (min(fit.ci[0], float(lo)), max(fit.ci[1], float(hi)))
    return replace(fit, ci=widened, ci_ppi=fit.ci)


def _clip(value: float) -> float:
    return float(min(1.0, max(0.0, value)))


def iid_lambda(y: np.ndarray, f_l: np.ndarray, f_u: np.ndarray) -> float | None:
    """ppi_py's power-tuned λ for a mean (unclipped); None when the judge scores never vary."""
    n, big_n = len(y), len(f_u)
    variance = float(np.var(np.concatenate([f_l, f_u]), ddof=1))
    if variance == 0.0:
        return None
    covariance = float(np.mean((y - y.mean()) * (f_l - f_l.mean())))
    return covariance / ((1.0 + n / big_n) * variance)


def _cluster_sums(
    values: np.ndarray, clusters: np.ndarray, index: dict[object, int], groups: int
) -> np.ndarray:
    sums = np.zeros(groups)
    np.add.at(sums, np.array([index[c] for c in clusters], dtype=int), values)
    return sums


def cluster_terms(
    y: np.ndarray, f_l: np.ndarray, f_u: np.ndarray, c_l: np.ndarray, c_u: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per image g: A_g = Σ_{L∩g}(y − ȳ)/n and B_g = Σ_{U∩g}(f − f̄_U)/N − Σ_{L∩g}(f − f̄_L)/n,
    so that the influence sum of image g is Ψ_g(λ) = A_g + λ·B_g."""
    labels = list(dict.fromkeys([*c_l.tolist(), *c_u.tolist()]))
    index = {label: k for k, label in enumerate(labels)}
    n, big_n = len(y), len(f_u)
    a = _cluster_sums((y - y.mean()) / n, c_l, index, len(labels))
    b = _cluster_sums((f_u - f_u.mean()) / big_n, c_u, index, len(labels))
    b -= _cluster_sums((f_l - f_l.mean()) / n, c_l, index, len(labels))
    return a, b


def ppi_mean(
    y: Sequence[float],
    f_labelled: Sequence[float],
    f_unlabelled: Sequence[float],
    *,
    clusters_labelled: Sequence[object] | None = None,
    clusters_unlabelled: Sequence[object] | None = None,
    lam: float | None = None,
    alpha: float = 0.05,
) -> PPIMean:
    """The PPI++ estimate of E[y] with a (1 − alpha) interval; clusters (image ids) given for
    both samples switch to the cluster-robust variance. `lam` fixes λ (1: plain PPI, 0: the
    human-only mean); None tunes it."""
    y_a, f_l, f_u = (np.asarray(v, dtype=float) for v in (y, f_labelled, f_unlabelled))
    if len(y_a) != len(f_l):
        raise ValueError("every labelled item needs a judge score")
    if len(y_a) < 2 or len(f_u) < 1:
        raise ValueError("PPI needs at least two labelled items and one unlabelled item")
    if clusters_labelled is None or clusters_unlabelled is None:
        return _iid(y_a, f_l, f_u, lam, alpha)
    c_l = np.asarray(list(clusters_labelled), dtype=object)
    c_u = np.asarray(list(clusters_unlabelled), dtype=object)
    return _clustered(y_a, f_l, f_u, (c_l, c_u), lam, alpha)


def _iid(
    y: np.ndarray, f_l: np.ndarray, f_u: np.ndarray, lam: float | None, alpha: float
) -> PPIMean:
    from scipy.special import ndtri

    notes: list[str] = []
    raw = iid_lambda(y, f_l, f_u) if lam is None else lam
    if raw is None:
        notes.append("the judge gave every item the same score: λ = 0 (the human-only mean)")
    used = _clip(raw) if lam is None and raw is not None else (0.0 if raw is None else float(raw))
    estimate = used * f_u.mean() + (y - used * f_l).mean()
    se = float(np.sqrt(used**2 * np.var(f_u) / len(f_u) + np.var(y - used * f_l) / len(y)))
    z = float(ndtri(1 - alpha / 2))
    return PPIMean(
        float(estimate), se, (float(estimate - z * se), float(estimate + z * se)), used,
        raw, len(y), len(f_u), len(y) + len(f_u), len(y), False, z, tuple(notes),
    )  # fmt: skip


FEW_LABELLED_IMAGES = 30
"""Below this many labelled images the power-tuned interval is widened to plain PPI's (λ = 1):
λ̂ minimises a variance estimated from those few images, which then reads low."""


def _clustered(
    y: np.ndarray,
    f_l: np.ndarray,
    f_u: np.ndarray,
    clusters: tuple[np.ndarray, np.ndarray],
    lam: float | None,
    alpha: float,
) -> PPIMean:
    from scipy.special import stdtrit

    c_l, c_u = clusters
    a, b = cluster_terms(y, f_l, f_u, c_l, c_u)
    groups, labelled = len(a), len(set(c_l.tolist()))
    notes: list[str] = []
    raw: float | None = lam
    if lam is None:
        raw = -float(a @ b) / float(b @ b) if float(b @ b) > 0 else None
        if raw is None:
            notes.append("the judge gave every item the same score: λ = 0 (the human-only mean)")
    used = 0.0 if raw is None else (_clip(raw) if lam is None else float(raw))
    estimate = used * f_u.mean() + (y - used * f_l).mean()
    psi = a + used * b
    variance = _stratified_cr1(psi, _labelled_mask(c_l, c_u), groups)
    se = float(np.sqrt(variance))
    if labelled < 2:
        notes.append("fewer than two labelled images: no interval")
    df = labelled - 1 - (lam is None and raw is not None and labelled > 2)  # λ̂ spends one
    quantile = float(stdtrit(df, 1 - alpha / 2)) if labelled >= 2 else float("inf")
    ci = (float(estimate - quantile * se), float(estimate + quantile * se))
    if lam is None and used != 1.0 and 2 <= labelled < FEW_LABELLED_IMAGES:
        plain = _clustered(y, f_l, f_u, clusters, 1.0, alpha)
        ci = (min(ci[0], plain.ci[0]), max(ci[1], plain.ci[1]))
    return PPIMean(
        float(estimate), se, ci, used, raw, len(y), len(f_u), groups, labelled, True, quantile,
        tuple(notes),
    )  # fmt: skip


def _labelled_mask(c_l: np.ndarray, c_u: np.ndarray) -> np.ndarray:
    """Per image of ``cluster_terms``' order: does it hold a labelled item."""
    labels = list(dict.fromkeys([*c_l.tolist(), *c_u.tolist()]))
    held = set(c_l.tolist())
    return np.array([label in held for label in labels], dtype=bool)


def _stratified_cr1(psi: np.ndarray, labelled: np.ndarray, groups: int) -> float:
    """Σ Ψ_g² with the CR1 factor G_s/(G_s − 1) of each stratum (images with labels, images
    without): with labels on few images the labelled part carries most of the variance and
    its G_L/(G_L − 1), not the whole benchmark's G/(G − 1), is the small-sample correction."""
    if groups < 2:
        return float("inf")
    total = 0.0
    for stratum in (labelled, ~labelled):
        g = int(stratum.sum())
        squares = float(psi[stratum] @ psi[stratum])
        total += squares * (g / (g - 1) if g > 1 else (1.0 if squares == 0 else 2.0))
    return total

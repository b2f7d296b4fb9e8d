"""The item response model: a 2-parameter logistic with a fixed guessing floor (numbers only).

P(run i answers item j right) = c_j + (1 − c_j) · σ(a_j (θ_i − b_j)), where c_j is the item's
chance level (1/k for a k-option choice item, 0 for open answers), a_j its discrimination, b_j its
difficulty and θ_i the run's ability. Fitted by joint maximum a posteriori estimation: abilities
and item parameters of the Bernoulli log likelihood plus weak Gaussian priors (θ ~ N(0, 1), b ~ N(0, 3²), a ~ N(1, 1)) and box bounds. The priors and bounds keep
items every run gets right (or wrong) finite, fix the scale and the sign of the latent axis, and
make the fit a smooth problem with one answer from one fixed start (deterministic). The
optimiser alternates vectorised Fisher-scoring steps (all items' (a, b) as 2 × 2 systems, then all
abilities): it needs tens of passes over the matrix where L-BFGS-B over the 2J + R parameters
needed hundreds. Scores in
[0, 1] (a partial credit) enter as fractional outcomes of the same likelihood; missing cells
(errored items, items a run lacks) are masked out.

Everything is vectorised over the (runs × items) matrix: one evaluation of the objective and its
gradient is a handful of array operations, so 50 runs × 26,000 items fit in seconds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import expit

THETA_BOUND = 6.0
B_BOUND = 8.0
A_BOUNDS = (-3.0, 5.0)
PRIOR_THETA_SD = 1.0
PRIOR_B_SD = 3.0
PRIOR_A_MEAN, PRIOR_A_SD = 1.0, 1.0
NEW_RUN_PRIOR_SD = 3.0
"""A run scored against a fixed bank gets a weak prior only: its ability may lie far outside the
calibration runs' range (the case the estimator's extrapolation check is about)."""
EPS = 1e-9
MAX_STEP = 1.0
MAX_ITERATIONS = 500
HALVINGS = 6
TOLERANCE = 1e-6


@dataclass(frozen=True)
class ItemFit:
    """Result of :func:`fit_items`."""

    theta: np.ndarray
    theta_se: np.ndarray
    difficulty: np.ndarray
    discrimination: np.ndarray
    guess: np.ndarray
    log_likelihood: float
    converged: bool
    iterations: int


def probability(theta: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """P(correct) for every (run, item) pair: shape (len(theta), len(a))."""
    s = expit(a[None, :] * (theta[:, None] - b[None, :]))
    return c[None, :] + (1.0 - c[None, :]) * s


def log_likelihood(y: np.ndarray, mask: np.ndarray, p: np.ndarray) -> float:
    """Bernoulli log likelihood of the observed cells (`y` may hold fractions)."""
    p = np.clip(p, EPS, 1 - EPS)
    terms = y * np.log(p) + (1 - y) * np.log1p(-p)
    return float(np.sum(terms, where=mask))


def log_posterior(
    theta: np.ndarray, a: np.ndarray, b: np.ndarray, y: np.ndarray, mask: np.ndarray, c: np.ndarray
) -> float:
    """The fit's objective: log likelihood plus the log priors (up to a constant)."""
    prior = (
        np.sum(theta**2) / PRIOR_THETA_SD**2
        + np.sum((a - PRIOR_A_MEAN) ** 2) / PRIOR_A_SD**2
        + np.sum(b**2) / PRIOR_B_SD**2
    )
    return log_likelihood(y, mask, probability(theta, a, b, c)) - 0.5 * float(prior)


def _scores(
    theta: np.ndarray, a: np.ndarray, b: np.ndarray, y: np.ndarray, w: np.ndarray, c: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per cell: d loglik / dz and the Fisher weight (dp/dz)² / p(1 − p), with z = a(θ − b);
    `w` is the observation mask as 0/1 weights."""
    s = expit(a[None, :] * (theta[:, None] - b[None, :]))
    p = np.clip(c[None, :] + (1.0 - c[None, :]) * s, EPS, 1 - EPS)
    slope = (1.0 - c[None, :]) * s * (1.0 - s)
    inverse = w / (p * (1.0 - p))
    return (y - p) * slope * inverse, slope * slope * inverse


def _cell_loglik(
    theta: np.ndarray, a: np.ndarray, b: np.ndarray, y: np.ndarray, w: np.ndarray, c: np.ndarray
) -> np.ndarray:
    p = np.clip(probability(theta, a, b, c), EPS, 1 - EPS)
    return np.asarray(w * (y * np.log(p) + (1 - y) * np.log1p(-p)))


def _item_prior(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.asarray(0.5 * ((a - PRIOR_A_MEAN) ** 2 / PRIOR_A_SD**2 + b**2 / PRIOR_B_SD**2))


def _item_step(
    theta: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    c: np.ndarray,
    cells: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One Fisher-scoring step on every item's (a, b) at once (2 × 2 systems, vectorised), halved
    for the items whose log posterior it would lower (up to HALVINGS times, else no move).
    `cells`: the cell log likelihoods at (θ, a, b); returned for the new point (no pass spent
    recomputing what the accepted trial already computed)."""
    r, weight = _scores(theta, a, b, y, w, c)
    centred = theta[:, None] - b[None, :]
    g_a = np.sum(r * centred, axis=0) - (a - PRIOR_A_MEAN) / PRIOR_A_SD**2
    g_b = -a * r.sum(axis=0) - b / PRIOR_B_SD**2
    wc = weight * centred
    i_aa = np.sum(wc * centred, axis=0) + 1 / PRIOR_A_SD**2
    i_bb = a * a * weight.sum(axis=0) + 1 / PRIOR_B_SD**2
    i_ab = -a * wc.sum(axis=0)
    det = i_aa * i_bb - i_ab * i_ab
    step_a = np.clip((i_bb * g_a - i_ab * g_b) / det, -MAX_STEP, MAX_STEP)
    step_b = np.clip((i_aa * g_b - i_ab * g_a) / det, -MAX_STEP, MAX_STEP)
    before = cells.sum(axis=0) - _item_prior(a, b)
    new_a, new_b, cells = a, b, cells.copy()
    pending = np.ones_like(a, dtype=bool)
    for _ in range(HALVINGS):
        trial_a = np.where(pending, np.clip(a + step_a, *A_BOUNDS), new_a)
        trial_b = np.where(pending, np.clip(b + step_b, -B_BOUND, B_BOUND), new_b)
        trial = _cell_loglik(theta, trial_a, trial_b, y, w, c)
        accept = pending & (trial.sum(axis=0) - _item_prior(trial_a, trial_b) >= before)
        new_a, new_b = np.where(accept, trial_a, new_a), np.where(accept, trial_b, new_b)
        cells[:, accept] = trial[:, accept]
        pending &= ~accept
        if not pending.any():
            break
        step_a, step_b = step_a / 2, step_b / 2
    return new_a, new_b, cells


def _run_step(
    theta: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    y: np.ndarray,
    w: np.ndarray,
    c: np.ndarray,
    cells: np.ndarray,
) -> tuple[np.ndarray, float, np.ndarray]:
    """One Fisher-scoring step on every run's ability at once (halved as items' are); also the
    log likelihood plus the abilities' log prior at the new point, and its cell log likelihoods."""
    r, weight = _scores(theta, a, b, y, w, c)
    gradient = r @ a - theta / PRIOR_THETA_SD**2
    information = weight @ (a * a) + 1 / PRIOR_THETA_SD**2
    step = np.clip(gradient / information, -MAX_STEP, MAX_STEP)
    best = cells.sum(axis=1) - 0.5 * theta**2 / PRIOR_THETA_SD**2
    new, cells = theta, cells.copy()
    pending = np.ones_like(theta, dtype=bool)
    for _ in range(HALVINGS):
        trial = np.where(pending, np.clip(theta + step, -THETA_BOUND, THETA_BOUND), new)
        trial_cells = _cell_loglik(trial, a, b, y, w, c)
        value = trial_cells.sum(axis=1) - 0.5 * trial**2 / PRIOR_THETA_SD**2
        accept = pending & (value >= best)
        new, best = np.where(accept, trial, new), np.where(accept, value, best)
        cells[accept] = trial_cells[accept]
        pending &= ~accept
        if not pending.any():
            break
        step = step / 2
    return np.asarray(new), float(best.sum()), cells


def _start(
    y: np.ndarray, w: np.ndarray, c: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Abilities from the runs' standardised logit accuracy, difficulties from the items'."""
    run_rate = np.sum(y * w, axis=1) / np.maximum(w.sum(axis=1), 1)
    item_rate = np.sum(y * w, axis=0) / np.maximum(w.sum(axis=0), 1)
    run_logit = np.log(np.clip(run_rate, 0.02, 0.98) / np.clip(1 - run_rate, 0.02, 0.98))
    spread = float(run_logit.std()) or 1.0
    theta = (run_logit - run_logit.mean()) / spread
    above = np.clip((item_rate - c) / np.maximum(1 - c, EPS), 0.02, 0.98)
    b = np.clip(-np.log(above / (1 - above)), -B_BOUND, B_BOUND)
    return theta, np.ones_like(c), b


def fit_items(
    y: np.ndarray,
    mask: np.ndarray,
    guess: np.ndarray,
    max_iterations: int = MAX_ITERATIONS,
    tolerance: float = TOLERANCE,
    start: ItemFit | None = None,
) -> ItemFit:
    """Joint MAP fit of abilities and item parameters on a (runs × items) score matrix.

    Block coordinate ascent: a Fisher-scoring step on all items' (a, b), then on all abilities
    (steps capped at 1 logit and halved until they do not lower the objective), until one round
    raises the log posterior by less than `tolerance` per observed cell (the flat directions
    left then move predictions by far less than their sampling error)."""
    mask = np.asarray(mask, dtype=bool)
    w = mask.astype(np.float64)
    y = np.where(mask, np.nan_to_num(np.asarray(y, dtype=np.float64)), 0.0)
    c = np.asarray(guess, dtype=np.float64)
    if start is None:
        theta, a, b = _start(y, w, c)
    else:  # warm start, e.g. from the fit without the held-out cells
        theta, a, b = start.theta.copy(), start.discrimination.copy(), start.difficulty.copy()
    cells = _cell_loglik(theta, a, b, y, w, c)
    converged, iterations, previous = False, 0, -np.inf
    limit = tolerance * max(float(w.sum()), 1.0)
    while iterations < max_iterations:
        iterations += 1
        a, b, cells = _item_step(theta, a, b, y, w, c, cells)
        theta, value, cells = _run_step(theta, a, b, y, w, c, cells)
        value -= 0.5 * float(
            np.sum((a - PRIOR_A_MEAN) ** 2) / PRIOR_A_SD**2 + np.sum(b**2) / PRIOR_B_SD**2
        )
        if value - previous < limit:
            converged = True
            break
        previous = value
    return ItemFit(
        theta=theta,
        theta_se=_ability_se(theta, a, b, c, mask, PRIOR_THETA_SD),
        difficulty=b,
        discrimination=a,
        guess=c,
        log_likelihood=log_likelihood(y, mask, probability(theta, a, b, c)),
        converged=converged,
        iterations=iterations,
    )


def _ability_se(
    theta: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    c: np.ndarray,
    mask: np.ndarray,
    prior_sd: float,
) -> np.ndarray:
    """Standard error of each ability from its Fisher information (item parameters held fixed)."""
    s = expit(a[None, :] * (theta[:, None] - b[None, :]))
    p = np.clip(c[None, :] + (1 - c[None, :]) * s, EPS, 1 - EPS)
    slope = (1 - c[None, :]) * s * (1 - s) * a[None, :]
    information = np.sum(np.where(mask, slope**2 / (p * (1 - p)), 0.0), axis=1)
    return np.asarray(1.0 / np.sqrt(information + 1.0 / prior_sd**2))


def ability(y: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray) -> tuple[float, float]:
    """MAP ability (and its standard error) of one run from its scores on items of a fixed bank,
    under a weak N(0, 3²) prior; bounded to ±2·THETA_BOUND."""

    def negative(theta: float) -> float:
        p = np.clip(c + (1 - c) * expit(a * (theta - b)), EPS, 1 - EPS)
        loglik = float(np.sum(y * np.log(p) + (1 - y) * np.log1p(-p)))
        return -loglik + 0.5 * theta**2 / NEW_RUN_PRIOR_SD**2

    limit = 2 * THETA_BOUND
    found = minimize_scalar(negative, bounds=(-limit, limit), method="bounded",
                            options={"xatol": 1e-6})  # fmt: skip
    theta = float(found.x)
    mask = np.ones((1, len(a)), dtype=bool)
    se = _ability_se(np.array([theta]), a, b, c, mask, NEW_RUN_PRIOR_SD)
    return theta, float(se[0])

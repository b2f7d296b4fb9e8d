"""The item model against a direct maximum-a-posteriori fit with scipy on small data."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit

from medlens.items import irt


def reference_fit(y: np.ndarray, c: np.ndarray) -> np.ndarray:
    """The same posterior written out independently and maximised by L-BFGS-B (bounds and
    priors as documented in medlens.items.irt)."""
    runs, n = y.shape

    def negative(x: np.ndarray) -> float:
        theta, a, b = x[:runs], x[runs : runs + n], x[runs + n :]
        p = c + (1 - c) * expit(a * (theta[:, None] - b))
        loglik = np.sum(y * np.log(p) + (1 - y) * np.log(1 - p))
        prior = np.sum(theta**2) + np.sum((a - 1) ** 2) + np.sum(b**2) / 9
        return float(-loglik + prior / 2)

    bounds = [(-6, 6)] * runs + [(-3, 5)] * n + [(-8, 8)] * n
    x0 = np.concatenate([np.zeros(runs), np.ones(n), np.zeros(n)])
    found = minimize(negative, x0, method="L-BFGS-B", bounds=bounds,
                     options={"maxiter": 20000, "maxfun": 200000, "ftol": 1e-14, "gtol": 1e-9})  # fmt: skip
    return np.asarray(found.x)


@pytest.fixture
def small() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(3)
    theta = rng.normal(0, 1, 12)
    a, b = rng.lognormal(0, 0.3, 15), rng.normal(0, 1, 15)
    c = np.where(np.arange(15) % 3 == 0, 0.0, 0.25)
    p = c + (1 - c) * expit(a * (theta[:, None] - b))
    y = (rng.random(p.shape) < p).astype(float)
    y[:, 0] = 1.0  # an item every run gets right
    y[:, 1] = 0.0  # and one every run gets wrong
    return y, c


def test_fit_matches_a_direct_scipy_map_fit(small: tuple[np.ndarray, np.ndarray]) -> None:
    y, c = small
    fit = irt.fit_items(y, np.ones_like(y, dtype=bool), c, tolerance=1e-12, max_iterations=5000)
    x = reference_fit(y, c)
    runs, n = y.shape
    assert fit.converged
    np.testing.assert_allclose(fit.theta, x[:runs], atol=2e-3)
    np.testing.assert_allclose(fit.discrimination, x[runs : runs + n], atol=5e-3)
    np.testing.assert_allclose(fit.difficulty, x[runs + n :], atol=5e-3)
    mine = irt.log_posterior(
        fit.theta, fit.discrimination, fit.difficulty, y, np.ones_like(y, bool), c
    )
    theirs = irt.log_posterior(
        x[:runs], x[runs : runs + n], x[runs + n :], y, np.ones_like(y, bool), c
    )
    assert mine >= theirs - 1e-6


def test_all_right_and_all_wrong_items_get_bounded_estimates(
    small: tuple[np.ndarray, np.ndarray],
) -> None:
    y, c = small
    fit = irt.fit_items(y, np.ones_like(y, dtype=bool), c)
    assert np.all(np.isfinite(fit.difficulty)) and np.all(np.abs(fit.difficulty) <= irt.B_BOUND)
    assert fit.difficulty[0] <= fit.difficulty[2:].min() + 1e-9
    assert fit.difficulty[1] >= fit.difficulty[2:].max() - 1e-9
    assert np.all(fit.guess == c)


def test_missing_cells_are_left_out_and_the_fit_is_deterministic(
    small: tuple[np.ndarray, np.ndarray],
) -> None:
    y, c = small
    mask = np.ones_like(y, dtype=bool)
    mask[0, 3] = False
    changed = y.copy()
    changed[0, 3] = 1 - changed[0, 3]
    one = irt.fit_items(y, mask, c)
    two = irt.fit_items(changed, mask, c)
    np.testing.assert_array_equal(one.difficulty, two.difficulty)
    np.testing.assert_array_equal(one.theta, two.theta)


def test_a_new_runs_ability_matches_a_direct_fit(small: tuple[np.ndarray, np.ndarray]) -> None:
    y, c = small
    fit = irt.fit_items(y, np.ones_like(y, dtype=bool), c)
    answers = y[4]
    theta, se = irt.ability(answers, fit.discrimination, fit.difficulty, c)

    def negative(t: np.ndarray) -> float:
        p = c + (1 - c) * expit(fit.discrimination * (t[0] - fit.difficulty))
        return float(-np.sum(answers * np.log(p) + (1 - answers) * np.log(1 - p)) + t[0] ** 2 / 18)

    assert theta == pytest.approx(minimize(negative, np.zeros(1)).x[0], abs=1e-4)
    assert 0 < se < 2

"""The adaptive design's numbers (``items.adaptive_design``): every draw's increment has the
full-benchmark score as its expectation whatever the predictor, the variance estimate is right
on average, no item is asked twice, every item keeps the floor probability, and the stopping
rule's interval covers in a small world."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from medlens.items import adaptive_design as ad


def small_model(n: int, seed: int, baseline: bool = False, bank: bool = True) -> ad.ItemModel:
    rng = np.random.default_rng(seed)
    group = rng.integers(0, 2, n)
    base = (rng.random((1, n)) < 0.6).astype(float) if baseline else None
    if not bank:
        return ad.ItemModel(None, None, None, group, 2, group, 2, base)
    return ad.ItemModel(
        discrimination=rng.lognormal(0.0, 0.3, n), difficulty=rng.normal(0, 1.2, n),
        guess=np.full(n, 0.25), group=group, n_groups=2, cell=group, n_cells=2, baseline=base,
    )  # fmt: skip


def population(n: int, seed: int) -> np.ndarray:
    """Scores a model that the predictor describes badly gets (0/1, some partial credit)."""
    rng = np.random.default_rng(seed + 100)
    y = (rng.random(n) < 0.55).astype(float)
    y[:3] = 0.5
    return y


def step(
    model: ad.ItemModel, state: ad.DesignState, y: np.ndarray, u: np.ndarray
) -> ad.DesignState:
    chosen = ad.choose(model, state, u)
    asked = chosen.order[:, -u.shape[1] :]
    return ad.absorb(
        model, chosen, np.take_along_axis(np.broadcast_to(y, (len(u), len(y))), asked, axis=1)
    )


@pytest.mark.parametrize(("baseline", "bank"), [(False, True), (True, True), (True, False)])
def test_every_draws_increment_has_the_score_as_expectation(baseline: bool, bank: bool) -> None:
    n = 25
    model = small_model(n, 1, baseline, bank)
    y = population(n, 1)
    state = step(model, ad.start_state(model, 1), y, np.array([[0.1, 0.7, 0.4]]))
    ability, calibration = ad.fit(model, state)
    f = ad.predictions(model, replace(state, ability=ability, calibration=calibration))
    v = ad._variances(model, state, f)
    left = np.ones((1, n), dtype=bool)
    left[0, state.order[0]] = False
    q = ad.selection(np.sqrt(v), left)[0]
    edges = np.concatenate([[0.0], np.cumsum(q)])
    expectation = 0.0
    for j in np.nonzero(q)[0]:  # force each item in turn: u in the middle of its slice
        middle = np.array([[(edges[j] + edges[j + 1]) / 2 / edges[-1]]])
        after = step(model, state, y, middle)
        assert after.order[0, -1] == j and after.probability[0, -1] == pytest.approx(q[j])
        expectation += q[j] * ad.increments(model, after)[0, -1]
    assert expectation == pytest.approx(y.mean(), abs=1e-12)
    assert q[left[0]].min() >= ad.FLOOR_SHARE / left.sum() - 1e-15  # the floor


def test_the_estimate_is_unbiased_and_its_variance_right_for_a_poor_predictor() -> None:
    n, reps = 60, 4000
    model = small_model(n, 2, baseline=True)
    y = population(n, 2)
    rng = np.random.default_rng(3)
    state = ad.start_state(model, reps)
    model = replace(model, baseline=np.broadcast_to(model.baseline, (reps, n)))
    for _ in range(3):
        state = step(model, state, y, rng.random((reps, 8)))
    found = ad.interval(model, state)
    error = found.estimate - y.mean()
    assert abs(error.mean()) < 4 * error.std() / np.sqrt(reps)
    assert np.mean(found.empirical_se**2) == pytest.approx(error.var(), rel=0.1)
    for row in state.order:
        assert len(set(row.tolist())) == 24  # never the same item twice


def test_the_design_asks_more_where_the_predictor_is_unsure() -> None:
    n = 200
    model = small_model(n, 4)
    sure = np.abs(model.difficulty) > 2.5  # type: ignore[arg-type]
    state = ad.start_state(model, 400)
    chosen = ad.choose(model, state, np.random.default_rng(5).random((400, 8)))
    asked = np.bincount(chosen.order.ravel(), minlength=n) / 400
    assert asked[~sure].mean() > asked[sure].mean() > 0


@pytest.mark.slow
def test_stopping_at_the_target_keeps_coverage() -> None:
    n, reps, target = 400, 600, 0.06
    model = small_model(n, 6)
    rng = np.random.default_rng(7)
    theta = rng.normal(0.3, 0.8, (reps, 1))
    a, b = model.discrimination, model.difficulty
    p = 0.25 + 0.75 / (1 + np.exp(-a * (theta - b) + rng.normal(0, 0.5, (reps, n))))
    y = (rng.random((reps, n)) < p).astype(float)
    state, active = ad.start_state(model, reps), np.arange(reps)
    covered = np.zeros(reps, dtype=bool)
    while len(active):
        chosen = ad.choose(model, state, rng.random((len(active), 8)))
        state = ad.absorb(
            model, chosen, np.take_along_axis(y[active], chosen.order[:, -8:], axis=1)
        )
        found = ad.interval(model, state)
        stop = (found.half_width <= target) & (state.calls >= 40) | (state.calls >= n - 8)
        truth = y[active[stop]].mean(axis=1)
        covered[active[stop]] = (found.low[stop] <= truth) & (truth <= found.high[stop])
        assert (found.half_width[stop & (state.calls < n - 8)] <= target).all()
        state, active = ad.take(state, np.nonzero(~stop)[0]), active[~stop]
    assert covered.mean() >= 0.93

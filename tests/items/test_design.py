"""The design: exhaustive enumeration on a tiny population shows the estimator is unbiased and
every unit's inclusion probability is the recorded m_h / M_h."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

from medlens.core.errors import SpecError
from medlens.items import aipw, design

# two strata of units; units are clusters of items with scores y and fixed predictions f
POPULATION = {
    "h1": {"u1": [1.0, 0.0], "u2": [1.0], "u3": [0.0, 0.0, 1.0], "u4": [1.0, 1.0]},
    "h2": {"u5": [0.0], "u6": [1.0, 0.0], "u7": [0.0]},
}
PREDICTION = {"u1": [0.7, 0.2], "u2": [0.9], "u3": [0.1, 0.3, 0.4], "u4": [0.8, 0.6],
              "u5": [0.5], "u6": [0.4, 0.4], "u7": [0.2]}  # fmt: skip
SEATS = {"h1": 2, "h2": 2}


def samples() -> list[dict[str, tuple[str, ...]]]:
    """Every possible stratified sample, each equally likely under the design."""
    per_stratum = [list(itertools.combinations(units, SEATS[h])) for h, units in POPULATION.items()]
    return [dict(zip(POPULATION, combo, strict=True)) for combo in itertools.product(*per_stratum)]


def estimate(sample: dict[str, tuple[str, ...]], tuning: float | None) -> aipw.DesignEstimate:
    strata = [
        aipw.StratumSample(
            population_units=len(POPULATION[h]),
            observed=np.array([sum(POPULATION[h][u]) for u in units]),
            predicted=np.array([sum(PREDICTION[u]) for u in units]),
        )
        for h, units in sample.items()
    ]
    total = sum(sum(v) for v in PREDICTION.values())
    return aipw.design_estimate(
        sum(len(v) for s in POPULATION.values() for v in s.values()), total, strata, tuning
    )


TRUE_MEAN = np.mean([y for s in POPULATION.values() for v in s.values() for y in v])


@pytest.mark.parametrize("tuning", [0.0, 0.5, 1.0])
def test_estimator_is_design_unbiased_for_any_fixed_tuning(tuning: float) -> None:
    values = [estimate(s, tuning).estimate for s in samples()]
    assert np.mean(values) == pytest.approx(TRUE_MEAN, abs=1e-12)


@pytest.mark.parametrize("tuning", [0.0, 1.0])
def test_variance_estimator_is_design_unbiased(tuning: float) -> None:
    results = [estimate(s, tuning) for s in samples()]
    true_variance = np.var([r.estimate for r in results])
    assert np.mean([r.se**2 for r in results]) == pytest.approx(true_variance, rel=1e-9)


def test_every_units_inclusion_probability_is_the_recorded_one() -> None:
    every = samples()
    for h, units in POPULATION.items():
        recorded = design.Stratum(
            h, {u: [u] for u in units}, list(units)[: SEATS[h]]
        ).inclusion_probability
        for unit in units:
            share = sum(unit in s[h] for s in every) / len(every)
            assert share == pytest.approx(recorded)


def test_draw_is_a_seeded_uniform_sample_within_each_stratum() -> None:
    strata = {"h1": list("abcdef"), "h2": list("xyz")}
    first = design.draw(strata, {"h1": 3, "h2": 1}, seed=7)
    assert first == design.draw(strata, {"h1": 3, "h2": 1}, seed=7)
    assert len(first["h1"]) == 3 and set(first["h1"]) <= set("abcdef")
    expected = sorted(random.Random("7:h1").sample(range(6), 3))
    assert first["h1"] == [strata["h1"][k] for k in expected]


def test_allocation_is_neyman_with_floors_and_caps() -> None:
    seats = design.allocate({"a": 100, "b": 100, "c": 3}, {"a": 0.5, "b": 0.1, "c": 0.5}, 40)
    assert sum(seats.values()) == 40
    assert seats["a"] > seats["b"] >= 2
    assert seats["c"] <= 3
    with pytest.raises(SpecError, match="too few"):
        design.allocate({"a": 10, "b": 10, "c": 10}, {"a": 1, "b": 1, "c": 1}, 5)


def test_units_group_items_sharing_an_image() -> None:
    units = design.units_of(["q1", "q2", "q3"], ["img", "", "img"])
    assert units == {"img": ["q1", "q3"], "q2": ["q2"]}

"""Issue 45: ``estimate``'s extrapolating flag tells a model beyond the calibration runs, and its
interval near the ceiling is asymmetric (the figures: ``bench/items.py --only round4``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from medlens.core.items import Item
from medlens.items import irt
from medlens.items.bank import Bank
from medlens.items.estimate import RunDesign, _estimate
from medlens.items.sample import _design

N_ITEMS = 600


def _world(rng: np.random.Generator) -> tuple[list[Item], Bank]:
    """A bank with known parameters (four options, chance 1/4), calibration abilities −1…1."""
    items = [
        Item(id=f"q{j}", question="q", kind="choice", options={k: k for k in "ABCD"}, answer="A",
             meta={"department": "ab"[j % 2], "image_id": f"i{j // 2}"})
        for j in range(N_ITEMS)
    ]  # fmt: skip
    bank = Bank(
        path=Path("bank.json"), benchmark={"content_hash": "sim"}, ids=[i.id for i in items],
        difficulty=rng.normal(0, 1.2, N_ITEMS), discrimination=rng.lognormal(0.2, 0.3, N_ITEMS),
        guess=np.full(N_ITEMS, 0.25), p_correct=np.full(N_ITEMS, 0.5),
        abilities={f"m{k}": (float(t), 0.1) for k, t in enumerate(np.linspace(-1, 1, 20))},
        sha256="",
    )  # fmt: skip
    return items, bank


def _run(items: list[Item], bank: Bank, theta: float, seed: int, n: int, unit: str) -> object:
    rng = np.random.default_rng(seed)
    p = irt.probability(np.array([theta]), bank.discrimination, bank.difficulty, bank.guess)[0]
    y = (rng.random(N_ITEMS) < p).astype(float)
    layout = _design(bank, items, n, seed, ("department",), unit)
    scores = {item.id: float(v) for item, v in zip(items, y, strict=True)}
    return _estimate(bank, RunDesign(Path("run"), layout, scores), None)


def test_a_model_just_beyond_the_strongest_calibration_run_is_told_extrapolating() -> None:
    """Ability 1.25 against a calibration range ending at 1.0, 100 items: the ability point
    compared with the range told it about half the time."""
    items, bank = _world(np.random.default_rng(0))
    fired = [_run(items, bank, 1.25, seed, 100, "item").extrapolating for seed in range(60)]
    assert np.mean(fired) >= 0.9
    found = _run(items, bank, 1.25, 0, 100, "item")
    assert any("calibration runs' range" in reason for reason in found.reasons)


def test_a_model_in_the_middle_of_the_calibration_range_is_rarely_told_extrapolating() -> None:
    items, bank = _world(np.random.default_rng(0))
    fired = [_run(items, bank, 0.0, seed, 100, "item").extrapolating for seed in range(60)]
    assert np.mean(fired) <= 0.1


def test_near_the_ceiling_the_interval_is_asymmetric() -> None:
    """A strong model on 50 items in image units: the interval reaches further below the estimate
    than above it (Wilson's at the effective n), where μ̂ ± t·SE was symmetric."""
    items, bank = _world(np.random.default_rng(0))
    found = _run(items, bank, 3.0, 3, 50, "image")
    lo, hi = found.ci
    assert found.estimate > 0.85 and found.estimate - lo > hi - found.estimate

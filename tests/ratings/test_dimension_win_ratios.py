"""Med-CMR's judge validation per rubric dimension: win ratios by people and by the judge on
each dimension, and the largest per-dimension difference against the paper's 0.0449."""

from __future__ import annotations

import pytest

from medlens.ratings.human import WIN_RATIO_CRITERION, dimension_win_ratios
from medlens.ratings.winratio import win_ratios


def test_win_ratios_per_dimension_by_hand() -> None:
    # two models, three items; people and the judge agree on coherence and differ on accuracy
    human = [
        {"coherence": {"a": 5, "b": 7, "c": 2}, "visual_accuracy": {"a": 9, "b": 1, "c": 4}},
        {"coherence": {"a": 3, "b": 7, "c": 6}, "visual_accuracy": {"a": 2, "b": 5, "c": 4}},
    ]
    judge = [
        {"coherence": {"a": 6, "b": 8, "c": 1}, "visual_accuracy": {"a": 3, "b": 3, "c": 9}},
        {"coherence": {"a": 2, "b": 8, "c": 5}, "visual_accuracy": {"a": 2, "b": 5, "c": 1}},
    ]
    result = dimension_win_ratios(["m1", "m2"], human, judge)
    coherence = result["dimensions"]["coherence"]
    # people: m1 wins a, ties b, loses c → (1 + .5 + 0)/3; the judge reads the same order
    assert coherence["models"]["m1"]["human"] == pytest.approx(1.5 / 3)
    assert coherence["models"]["m1"]["judge"] == pytest.approx(1.5 / 3)
    assert coherence["largest_difference"] == pytest.approx(0.0)
    accuracy = result["dimensions"]["visual_accuracy"]
    # people: m1 wins a, loses b, ties c → 1.5/3; judge: m1 wins a, loses b, wins c → 2/3
    assert accuracy["models"]["m1"]["human"] == pytest.approx(1.5 / 3)
    assert accuracy["models"]["m1"]["judge"] == pytest.approx(2 / 3)
    assert accuracy == win_ratios(["m1", "m2"], [h["visual_accuracy"] for h in human],
                                  [j["visual_accuracy"] for j in judge])  # fmt: skip
    largest = result["largest_dimension_difference"]
    assert largest == {"dimension": "visual_accuracy", "value": pytest.approx(0.5 / 3),
                       "criterion": WIN_RATIO_CRITERION, "within": False}  # fmt: skip
    assert WIN_RATIO_CRITERION == 0.0449

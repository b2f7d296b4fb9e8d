"""Model-level win ratios by people and by a judge (Med-CMR §4.3's judge validation).

Win ratio of a model = over every item that people rated in *all* the runs, and every other
model, the share of comparisons whose item score is higher than the other model's (a tie counts
½). Computed once from the human item scores and once from the judge's on the same items; the
figure that validates a judge is the largest |human − judge| over the models (Med-CMR: ≤ 0.045).
Intervals: percentile bootstrap over items (scipy), 2,000 resamples.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np


def item_contributions(scores: Sequence[Mapping[str, float]], items: Sequence[str]) -> np.ndarray:
    """models × items: mean over the other models of 1 (higher), ½ (tie), 0 (lower)."""
    table = np.array([[s[i] for i in items] for s in scores], dtype=float)
    m = len(scores)
    out = np.zeros_like(table)
    for a in range(m):
        for b in range(m):
            if a != b:
                out[a] += (table[a] > table[b]) + 0.5 * (table[a] == table[b])
    return out / (m - 1)


def _mean_ci(values: np.ndarray, seed: int) -> list[float] | None:
    from scipy.stats import bootstrap

    if values.size < 2 or np.all(values == values[0]):
        return [float(values[0]), float(values[0])] if values.size else None
    result = bootstrap((values,), np.mean, n_resamples=2000, method="percentile",
                       rng=np.random.default_rng(seed))  # fmt: skip
    return [float(result.confidence_interval.low), float(result.confidence_interval.high)]


def win_ratios(
    names: Sequence[str],
    human: Sequence[Mapping[str, float]],
    judge: Sequence[Mapping[str, float]],
    seed: int = 0,
) -> dict[str, Any]:
    """``{"items", "models": {name: {"human", "human_ci", "judge", "judge_ci", "difference",
    "difference_ci"}}, "largest_difference"}``."""
    shared = set.intersection(*(set(h) & set(j) for h, j in zip(human, judge, strict=True)))
    items = sorted(shared)
    out: dict[str, Any] = {"items": len(items), "comparisons": len(items) * (len(names) - 1),
                           "models": {}, "largest_difference": None}  # fmt: skip
    if not items:
        return out
    by_human, by_judge = item_contributions(human, items), item_contributions(judge, items)
    for index, name in enumerate(names):
        h, j = by_human[index], by_judge[index]
        out["models"][name] = {
            "human": float(h.mean()), "human_ci": _mean_ci(h, seed),
            "judge": float(j.mean()), "judge_ci": _mean_ci(j, seed),
            "difference": float(h.mean() - j.mean()), "difference_ci": _mean_ci(h - j, seed),
        }  # fmt: skip
    out["largest_difference"] = max(abs(m["difference"]) for m in out["models"].values())
    return out

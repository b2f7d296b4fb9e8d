"""Model-level win ratios by people and by a judge (Med-CMR §4.3's judge validation).

Win ratio of a model = over every item that people rated in *all* the runs, and every other
model, the share of comparisons whose item score is higher than the other model's (a tie counts
½). Computed once from the human item scores and once from the judge's on the same items; the
figure that validates a judge is the largest |human − judge| over the models (Med-CMR: ≤ 0.045).
Intervals over items: the bounded-mean interval for each win ratio (``bootstrap.group_cis``) and
compare's paired interval for the people − judge difference (``paired.paired_ci``); by
simulation (bench/coverage_intervals.py) they cover at 30 items, where the percentile bootstrap
fell to ~93%.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from medlens.stats.bootstrap import group_cis
from medlens.stats.paired import paired_ci


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


def _mean_ci(values: np.ndarray) -> list[float] | None:
    """CI of a mean of per-item contributions in [0, 1] (``bootstrap.group_cis``: the
    bounded-mean interval every non-0/1 score gets; never zero width)."""
    if not values.size:
        return None
    lo, hi = group_cis(values, np.zeros(values.size, np.intp))
    return [float(lo[0]), float(hi[0])]


def _difference_ci(human: np.ndarray, judge: np.ndarray) -> list[float] | None:
    """CI of mean(human − judge) over the same items (``paired.paired_ci``, compare's)."""
    if not human.size:
        return None
    lo, hi = paired_ci(judge, human)
    return [float(lo), float(hi)]


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
            "human": float(h.mean()), "human_ci": _mean_ci(h),
            "judge": float(j.mean()), "judge_ci": _mean_ci(j),
            "difference": float(h.mean() - j.mean()), "difference_ci": _difference_ci(h, j),
        }  # fmt: skip
    out["largest_difference"] = max(abs(m["difference"]) for m in out["models"].values())
    return out

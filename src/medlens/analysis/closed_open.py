"""results.json's ``closed_open``: closed vs open scores and their Δ, overall and per slice,
each from ``scoring.closed_open.closed_open_delta`` (paired by sample where the benchmark pairs
its forms), and the closed items the judge stage pairs with its judged open scores."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from medlens.analysis.score_table import ScoreTable
from medlens.analysis.task_mean import TaskItems
from medlens.core.items import Item
from medlens.scoring.closed_open import PairKey, closed_open_delta, pair_key

ClosedItems = tuple[np.ndarray, np.ndarray, list[PairKey | None]]
"""Rule scores, images and pair keys of a run's scored closed items (for the judge stage)."""


def table_keys(table: ScoreTable, items: Sequence[Item]) -> list[PairKey | None]:
    """The pair key of each row of `table` (None for rows whose item is not in `items`)."""
    keys = {item.id: pair_key(item) for item in items}
    return [keys.get(item_id) for item_id in table.ids]


def closed_open(
    table: ScoreTable, axes: Sequence[str], items: Sequence[Item] = ()
) -> dict[str, Any] | None:
    """Closed vs open scores and Δ = closed − open, overall and per value of every axis."""
    kind = table.meta.get("answer_type")
    if kind is None or not {"closed", "open"} <= set(kind.tolist()):
        return None
    keys = table_keys(table, items)
    scores = np.where(table.scored, table.score, np.nan)

    def delta(mask: np.ndarray) -> dict[str, Any] | None:
        chosen = np.flatnonzero(mask)
        return closed_open_delta(
            kind[chosen], [keys[i] for i in chosen], scores[chosen], table.cluster[chosen]
        )

    per_axis = {
        axis: {
            str(v): gap
            for v in sorted(set(table.meta[axis].tolist()))
            if v and (gap := delta(table.meta[axis] == v)) is not None
        }
        for axis in axes
        if axis != "answer_type"
    }
    return {"overall": delta(np.ones(len(table.ids), dtype=bool)), "by": per_axis}


def task_items(table: ScoreTable, items: Sequence[Item]) -> TaskItems | None:
    """The scored items with their task, form, pair key and image (None: no task or form)."""
    task, form = table.meta.get("task"), table.meta.get("answer_type")
    if task is None or form is None:
        return None
    scores = np.where(table.scored, table.score, np.nan)
    return TaskItems(task, form, table_keys(table, items), scores, table.cluster)


def closed_items(table: ScoreTable, items: Sequence[Item]) -> ClosedItems | None:
    """Rule scores, images and pair keys of the scored closed items (None: no answer_type)."""
    kind = table.meta.get("answer_type")
    if kind is None:
        return None
    chosen = np.flatnonzero(table.scored & (kind == "closed"))
    keys = table_keys(table, items)
    return table.score[chosen], table.cluster[chosen], [keys[i] for i in chosen]

"""The extraction sensitivity: medlens's reading of a run's outputs against the reading the
run was scored with (VLMEvalKit's rules or a peer's), over the same items, with a paired
interval (a section of results.json)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from medlens.analysis.reading import MEDLENS_READING, READING
from medlens.analysis.score_table import ScoreTable
from medlens.core.items import Item
from medlens.core.records import Record
from medlens.runs.view import RunView

UNEXTRACTED_KINDS = frozenset({"report"})
"""Kinds scored on the whole text (ROUGE, BLEU, clinical labels), with no answer read out."""


def sensitivity_ci(table: ScoreTable, other: np.ndarray | None = None) -> list[float] | None:
    """95% paired CI of mean(medlens − VLMEvalKit reading) over items read both ways."""
    from medlens.stats.paired import paired_ci

    medlens = table.score if other is None else other
    both = table.scored & ~np.isnan(medlens) & ~np.isnan(table.vlmeval)
    if not both.any():
        return None
    lo, hi = paired_ci(table.vlmeval[both], medlens[both], table.cluster[both])
    return [lo, hi]


def other_reading(
    view: RunView, items: Sequence[Item], records: dict[str, Record]
) -> np.ndarray | None:
    """medlens's scores of the rows of a score table over `items` and `records` (NaN where a
    row has no score), for a run scored with another reading (``--extract vlmeval``); None for
    a medlens run. The re-reading is the run's derived ``reading`` file (built once, then
    read while the items and records stay as they are)."""
    if view.extract == "medlens":
        return None
    scores: dict[str, float | None] = view.derived(READING, MEDLENS_READING, None)
    rows = []
    for item in items:
        record = records.get(item.id)
        if record is None:
            continue
        value = scores.get(item.id) if record.get("score") is not None else None
        rows.append(np.nan if value is None else value)
    return np.array(rows, dtype=float)


def extraction_sensitivity(
    items: list[Item], records: dict[str, Record], table: ScoreTable, reading: np.ndarray | None
) -> dict[str, Any] | None:
    """medlens's reading against VLMEvalKit's rules over the same outputs (None when either is
    missing, or when nothing is read out of the text). `reading`: medlens's per-item scores
    when the run's own are another reading's."""
    # report generation reads no answer out of the text: there is no extraction to be sensitive
    extracted = any(item.kind not in UNEXTRACTED_KINDS for item in items if item.id in records)
    medlens_values = table.score if reading is None else reading
    both = table.scored & ~np.isnan(medlens_values) & ~np.isnan(table.vlmeval)
    if not both.any() or not extracted:
        return None
    # both sides over the same items: those read both ways (a judged item has no rule reading)
    medlens, vlmeval = float(medlens_values[both].mean()), float(table.vlmeval[both].mean())
    return {"medlens": medlens, "vlmeval": vlmeval, "difference": medlens - vlmeval,
            "n": int(both.sum()), "ci": sensitivity_ci(table, reading)}  # fmt: skip

"""The extraction sensitivity: medlens's reading of a run's outputs against the reading the
run was scored with (VLMEvalKit's rules or a peer's), over the same items, with a paired
interval (a section of results.json)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np

from medlens.analysis.score_table import ScoreTable
from medlens.core.forked import Aside, computed_aside
from medlens.core.items import Item
from medlens.core.records import Record

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


@contextmanager
def other_reading(
    spec: dict[str, Any], items: Sequence[Item], records: dict[str, Record]
) -> Iterator[Aside[np.ndarray] | None]:
    """medlens's reading of a run scored with another reading (``--extract vlmeval``), started
    aside (``core.forked``) while the other sections are built; None for a medlens run."""
    if spec.get("extract", "medlens") == "medlens":
        yield None
        return
    rows = sum(1 for item in items if item.id in records)

    def one_per_row(values: np.ndarray) -> bool:
        return isinstance(values, np.ndarray) and values.shape == (rows,)

    with computed_aside(lambda: medlens_reading(items, records), rows, one_per_row) as aside:
        yield aside


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


def medlens_reading(items: Sequence[Item], records: dict[str, Record]) -> np.ndarray:
    """Per-item scores under medlens's extraction of a run scored with another ``--extract``
    (VLMEvalKit's or a peer's), one per item with a record, in item order (a score table's
    rows; NaN where unscored). Re-read from the stored outputs, so the extraction sensitivity
    is shown in both modes.
    """
    from medlens.extract import extract
    from medlens.scoring.item_scores import score

    values = []
    for item in items:
        record = records.get(item.id)
        if record is None:
            continue
        value = None
        if record.get("error") is None and record.get("score") is not None:
            found = extract(item, record.get("output"), "medlens", record.get("finish_reason"))
            value = score(item, found)
        values.append(np.nan if value is None else value)
    return np.array(values, dtype=float)

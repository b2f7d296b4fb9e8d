"""GMAI-MMBench's leaderboard shape: each run's overall VAL or TEST accuracy beside the 30
published rows of the same split, then the per-granularity, per-task and per-department tables
(models × values, the board's per-axis cells)."""

from __future__ import annotations

from typing import Any

from medlens.analysis.paper_columns import gmai_columns
from medlens.board.align import Aligned
from medlens.board.layouts.common import (
    LayoutContext,
    chance_cells,
    chance_row,
    layout_object,
    published_rows,
    run_cells,
    run_rows,
)

GMAI_AXES = ("granularity", "task", "department")
"""The official breakdowns (VLMEvalKit's ``perceptual granularity``, ``clinical vqa task``,
``department`` accuracy files), in the leaderboard's order."""


def gmai_layout(aligned: Aligned, context: LayoutContext, min_n: int) -> dict[str, Any]:
    from medlens.board.axes import axis_chance, by_axis

    columns = gmai_columns()
    rows = run_rows(aligned, run_cells(aligned, columns), context.labels)
    rows += [chance_row(chance_cells(aligned, columns)), *published_rows(context, ["overall"])]
    split = str(aligned.runs[0].benchmark.get("split", "")).upper()
    axes = [axis for axis in GMAI_AXES if axis in aligned.meta]
    title = (
        f"GMAI-MMBench leaderboard ({split}): overall accuracy, published rows of the same split"
    )
    return layout_object(
        "gmai", aligned, columns, rows, title,
        by=by_axis(aligned, axes, min_n), by_chance=axis_chance(aligned, axes),
    )  # fmt: skip

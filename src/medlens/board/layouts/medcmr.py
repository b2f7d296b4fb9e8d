"""Med-CMR's main table: one row per run — MCQ accuracy per capability dimension (choice items
only), ``mcq_all``, ``open_all`` (the rubric judge's weighted score on 0–100, open items only;
MCQ and open are never mixed in one cell) — the judge's four rubric dimensions as a second
table, the published rows below, unranked; and the paper's secondary analyses:

- pairs (``--pairs BASE:TUNED``): base → medical fine-tune differences per capability
  dimension, with sign and Wilcoxon tests over pairs × 7 dimensions, computed separately for
  MCQ and for the judged open scores (the paper: MCQ p < 0.001, open p ≈ 0.45);
- ``--meta``: each numeric column (model size) against every column of both tables (the
  paper: r 0.77–0.85 for MCQ per dimension, 0.59 for open visual accuracy).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from medlens.analysis.paper_columns import MEDCMR_DIMENSIONS, medcmr_columns
from medlens.board.align import Aligned
from medlens.board.layouts.common import (
    LayoutContext,
    chance_cells,
    chance_row,
    column_values,
    correlations,
    layout_object,
    published_rows,
    run_cells,
    run_rows,
)


def medcmr_layout(aligned: Aligned, context: LayoutContext) -> dict[str, Any]:
    columns = medcmr_columns()
    cells = run_cells(aligned, columns)
    rows = run_rows(aligned, cells, context.labels)
    rows += [
        chance_row(chance_cells(aligned, columns)),
        *published_rows(context, [c.name for c in columns]),
    ]
    names = [c.name for c in columns]
    opened = (
        f"the rubric judge {context.judge}"
        if context.judge
        else "rules (no --judge: not the paper's metric)"
    )
    title = (f"Med-CMR main table: MCQ accuracy per dimension (choice items), mcq_all, open_all "
             f"(open items, 0–100) scored by {opened}")  # fmt: skip
    dimensions = judge_dimensions(aligned, context)
    run_values = column_values(rows[: len(aligned.runs)], names)
    if dimensions:
        run_values.update(column_values(dimensions["rows"], dimensions["columns"]))
    return layout_object(
        "medcmr", aligned, columns, rows, title,
        judge=context.judge, dimensions=dimensions,
        pairs=medcmr_pairs(aligned, context) if context.pairs else None,
        correlations=correlations(context, [r.run for r in aligned.runs], run_values),
    )  # fmt: skip


def judge_dimensions(aligned: Aligned, context: LayoutContext) -> dict[str, Any] | None:
    """Mean points (0–10) per rubric dimension of each run over the aligned open items, with
    a CI on the points scale (``judges.results.mean_ci``); None without a rubric judge."""
    from medlens.analysis.score_source import judge_points
    from medlens.judges.results import RUBRIC_TOP, mean_ci

    if context.judge is None:
        return None
    opened = aligned.meta.get("kind", np.array([], dtype=object)) == "open"
    ids = aligned.ids[opened].tolist()
    clusters = aligned.cluster[opened]
    rows: list[dict[str, Any]] = []
    dims: list[str] = []
    weights: dict[str, Any] = {}
    for run in aligned.runs:
        values, dims, meta = judge_points(run.path, context.judge)
        if dims == ["equivalent"]:
            return None  # an equivalence judge has no rubric dimensions
        weights = meta["protocol"].get("weights") or {}
        row_cells = {}
        for dim in dims:
            points = np.array([values[dim].get(i, np.nan) for i in ids], dtype=float)
            cell = mean_ci(points, clusters, RUBRIC_TOP)
            row_cells[dim] = {"value": cell["score"], "ci": cell["ci"], "n": cell["n"]}
        rows.append({"run": run.run, "model": run.name, "published": False, "cells": row_cells})
    return {"columns": dims, "weights": weights, "scale": [0, RUBRIC_TOP], "rows": rows}


def medcmr_pairs(aligned: Aligned, context: LayoutContext) -> dict[str, Any]:
    """Per pair, tuned − base per capability dimension for MCQ and for judged open items; sign
    and Wilcoxon tests over pairs × dimensions, one pair of tests per answer form."""
    from medlens.board.pairs import differences_test

    index = {run.run: r for r, run in enumerate(aligned.runs)}
    empty = np.full(aligned.ids.size, "", dtype=object)
    kind = aligned.meta.get("kind", empty)
    dimension = aligned.meta.get("dimension", empty)
    rows = []
    forms = {"mcq": "choice", "open": "open"}
    pooled: dict[str, list[float]] = {form: [] for form in forms}
    for base, tuned in context.pairs:
        row: dict[str, Any] = {"base": base, "tuned": tuned}
        for form, kind_name in forms.items():
            row[f"{form}_all"] = _form_difference(
                aligned, index[base], index[tuned], kind == kind_name
            )
            row[form] = {}
            for dim in MEDCMR_DIMENSIONS:
                mask = np.asarray((kind == kind_name) & (dimension == dim), dtype=bool)
                if not mask.any():
                    continue
                scores = aligned.scores[:, mask]
                difference = float(scores[index[tuned]].mean() - scores[index[base]].mean())
                row[form][dim] = difference
                pooled[form].append(difference)
        rows.append(row)
    scale = "judged open scores" if context.judge else "open scores by rules"
    tests = {
        "mcq": differences_test(pooled["mcq"], "pairs × dimensions, MCQ accuracy"),
        "open": differences_test(pooled["open"], f"pairs × dimensions, {scale}"),
    }
    return {"rows": rows, "dimensions": list(MEDCMR_DIMENSIONS), "tests": tests}


def _form_difference(
    aligned: Aligned, base: int, tuned: int, mask: np.ndarray
) -> dict[str, Any] | None:
    """tuned − base over one answer form's items, with the paired CI every medlens comparison
    prints (``stats.paired.paired_ci``: images as clusters)."""
    from medlens.stats.paired import paired_ci

    mask = np.asarray(mask, dtype=bool)
    if not mask.any():
        return None
    a, b = aligned.scores[base, mask], aligned.scores[tuned, mask]
    lo, hi = paired_ci(a, b, aligned.cluster[mask])
    return {"n": int(mask.sum()), "difference": float(b.mean() - a.mean()), "ci": [lo, hi],
            "wins": int((b > a).sum()), "ties": int((b == a).sum()), "losses": int((b < a).sum())}  # fmt: skip

"""What every paper layout shares: run rows of cells over the aligned items, the chance row,
the published rows, and the per-cell judged coverage.

A cell is ``{"value", "ci", "n"}`` (plus ``"coverage": {"verdicts", "scope"}`` when a judge
scored it); published cells carry ``value`` only. Run cells come from
``board.ranks.cell_cis``: the interval every medlens report prints for the same items.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from medlens.analysis.paper_columns import PaperColumn
from medlens.board.align import Aligned


@dataclass(frozen=True)
class LayoutContext:
    """What a layout is built from besides the aligned scores."""

    judge: str | None
    """The judge whose verdicts score the judged columns (None: rules)."""
    reference: Any
    """The published table (``analysis.reference_tables.ReferenceTable``) or None."""
    labels: dict[str, str] = field(default_factory=dict)
    """Run → ``not comparable: <reason>``."""
    pairs: list[tuple[str, str]] = field(default_factory=list)
    meta: Any = None
    """``board.meta.ModelMeta`` of ``--meta`` (None without)."""
    n_resamples: int = 1000
    seed: int = 0


def column_mask(meta: dict[str, np.ndarray], column: PaperColumn, size: int) -> np.ndarray:
    """Items of `column` among items with axes `meta` (a missing axis matches nothing)."""
    mask = np.ones(size, dtype=bool)
    for axis, value in column.where:
        values = meta.get(axis)
        mask &= values == value if values is not None else False
    return mask


def run_cells(aligned: Aligned, columns: Sequence[PaperColumn]) -> list[dict[str, dict[str, Any]]]:
    """Per run (board order), ``{column: cell}`` of the columns holding some aligned item.

    Columns whose items do not overlap (Med-CMR's seven dimensions) share one ``cell_cis``
    call, as codes of one partition of the items."""
    from medlens.board.ranks import cell_cis

    size = aligned.ids.size
    masks = {c.name: column_mask(aligned.meta, c, size) for c in columns}
    out: list[dict[str, dict[str, Any]]] = [{} for _ in aligned.runs]
    for group in _disjoint_groups([c for c in columns if masks[c.name].any()], masks):
        codes = np.full(size, -1, dtype=np.intp)
        for code, column in enumerate(group):
            codes[masks[column.name]] = code
        lo, hi = cell_cis(aligned, codes, len(group))
        for code, column in enumerate(group):
            mask = masks[column.name]
            means = aligned.scores[:, mask].mean(axis=1)
            cover = _cover_mask(aligned, column) if column.judged else None
            for r, run in enumerate(aligned.runs):
                cell: dict[str, Any] = {"value": float(means[r]), "n": int(mask.sum()),
                                        "ci": [float(lo[r, code]), float(hi[r, code])]}  # fmt: skip
                if cover is not None and aligned.judged is not None:
                    cell["coverage"] = aligned.judged.cell(run.run, cover)
                out[r][column.name] = cell
    return out


def _disjoint_groups(
    columns: Sequence[PaperColumn], masks: dict[str, np.ndarray]
) -> list[list[PaperColumn]]:
    """Columns in groups of pairwise disjoint item sets (first fit, in column order)."""
    groups: list[tuple[list[PaperColumn], np.ndarray]] = []
    for column in columns:
        mask = masks[column.name]
        for members, used in groups:
            if not (used & mask).any():
                members.append(column)
                used |= mask
                break
        else:
            groups.append(([column], mask.copy()))
    return [members for members, _ in groups]


def _cover_mask(aligned: Aligned, column: PaperColumn) -> np.ndarray | None:
    if aligned.judged is None:
        return None
    meta = aligned.judged.meta
    size = len(next(iter(meta.values()))) if meta else 0
    return column_mask(meta, column, size)


def chance_cells(aligned: Aligned, columns: Sequence[PaperColumn]) -> dict[str, dict[str, Any]]:
    """Each column's chance level (``score_table.baseline_mean``: what `random` scores)."""
    from medlens.analysis.score_table import baseline_mean

    out = {}
    for column in columns:
        mask = column_mask(aligned.meta, column, aligned.ids.size)
        if mask.any():
            chance = baseline_mean(aligned.random[mask])
            if chance is not None:
                out[column.name] = {"value": chance, "ci": None, "n": int(mask.sum())}
    return out


def run_rows(
    aligned: Aligned, cells: list[dict[str, dict[str, Any]]], labels: dict[str, str]
) -> list[dict[str, Any]]:
    rows = []
    for run, row_cells in zip(aligned.runs, cells, strict=True):
        row = {"run": run.run, "model": run.name, "published": False, "source": aligned.source,
               "cells": row_cells}  # fmt: skip
        if run.run in labels:
            row["not_comparable"] = labels[run.run]
        rows.append(row)
    return rows


def chance_row(cells: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {"model": "chance (random guess)", "published": False, "chance": True,
            "source": "medlens: expected score of uniform guessing", "cells": cells}  # fmt: skip


def published_rows(context: LayoutContext, columns: Sequence[str]) -> list[dict[str, Any]]:
    if context.reference is None:
        return []
    from medlens.analysis.reference_tables import published_cells

    return published_cells(context.reference, columns)


def layout_object(
    name: str, aligned: Aligned, columns: Sequence[PaperColumn], rows: list[dict[str, Any]],
    title: str, **extra: Any,
) -> dict[str, Any]:  # fmt: skip
    return {"name": name, "score_source": aligned.source, "title": title,
            "columns": [c.name for c in columns], "rows": rows, **extra}  # fmt: skip


def correlations(
    context: LayoutContext, runs: Sequence[str], values: dict[str, list[float | None]]
) -> dict[str, dict[str, Any]]:
    """Each numeric --meta column against each layout column's run values (Spearman, Pearson,
    least-squares line: ``board.meta.correlation``), over runs with both."""
    from medlens.board.meta import correlation

    if context.meta is None:
        return {}
    out: dict[str, dict[str, Any]] = {}
    for name, by_run in context.meta.numeric.items():
        out[name] = {}
        for column, column_values in values.items():
            both = [(by_run[r], v) for r, v in zip(runs, column_values, strict=True)
                    if r in by_run and v is not None]  # fmt: skip
            x = np.array([b[0] for b in both], dtype=float)
            y = np.array([b[1] for b in both], dtype=float)
            out[name][column] = correlation(x, y)
    return out


def column_values(
    rows: Sequence[dict[str, Any]], columns: Sequence[str]
) -> dict[str, list[float | None]]:
    return {c: [row["cells"].get(c, {}).get("value") for row in rows] for c in columns}

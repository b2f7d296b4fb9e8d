"""The per-axis tables of a report: one :class:`AxisRow` per value of each axis of results.json
``by``, the order of the axes, and the axes the worst cells are ranked over (owns which axes a
report shows and how a cell becomes a row)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from medlens.analysis.slices import MAX_AXES
from medlens.stats.cells import is_small

PRIMARY_AXES = ("granularity", "department", "task", "modality")
"""The GMAI-MMBench lexical-tree axes, in the order the report shows them."""


@dataclass(frozen=True)
class AxisRow:
    """One value of one axis, as in results.json ``by``."""

    value: str
    n: int
    score: float | None
    ci: tuple[float, float] | None
    random: float | None
    vlmeval: float | None
    unparsed: float
    refused: float
    error: float
    images: int = 0
    coverage: str = ""
    """Under a judged score source: ``verdicts/scope`` of the cell ("" otherwise)."""
    imageless: bool = False
    """The run has no images (its clusters are single items): the images column shows "–"."""

    effective_images: float | None = None
    """Kish's effective number of images, when the results hold it (it decides `small`)."""

    @property
    def small(self) -> bool:
        return is_small(
            self.n, self.images if self.effective_images is None else self.effective_images
        )

    @property
    def images_shown(self) -> str:
        return "–" if self.imageless else str(self.images)


def worst_cell_axes(axes: dict[str, list[AxisRow]]) -> list[str]:
    """The axes the worst cells are ranked over: GMAI's primary axes the run has, then the
    benchmark's own fields (SLAKE's content_type and location, PathVQA's question_type: the
    tabulated ones, so never id-like or near-unique), then answer_type; at most MAX_AXES."""
    from medlens.core.items import CANONICAL_AXES

    primary = [a for a in PRIMARY_AXES if a in axes]
    own = [a for a in axes if a not in CANONICAL_AXES and a != "kind" and len(axes[a]) >= 2]
    closed_open = ["answer_type"] if len(axes.get("answer_type", ())) >= 2 else []
    return (primary + own + closed_open)[:MAX_AXES]


def axis_rows(results: dict[str, Any]) -> dict[str, list[AxisRow]]:
    by: dict[str, dict[str, dict[str, Any]]] = results.get("by") or {}
    order = [a for a in PRIMARY_AXES if a in by] + [a for a in by if a not in PRIMARY_AXES]
    out: dict[str, list[AxisRow]] = {}
    for axis in order:
        if len(by[axis]) < 2 and axis not in PRIMARY_AXES:
            continue
        imageless = (results.get("counts") or {}).get("items_with_images") == 0
        out[axis] = [_axis_row(value, cell, imageless) for value, cell in by[axis].items()]
    return out


def _axis_row(value: str, cell: dict[str, Any], imageless: bool = False) -> AxisRow:
    ci = cell.get("ci")
    return AxisRow(
        value=value,
        n=int(cell["n"]),
        score=cell.get("score"),
        ci=(float(ci[0]), float(ci[1])) if ci else None,
        random=cell.get("random"),
        vlmeval=cell.get("vlmeval_score"),
        unparsed=float(cell.get("unparsed", 0.0)),
        refused=float(cell.get("refused", 0.0)),
        error=float(cell.get("error", 0.0)),
        images=int(cell.get("images", cell["n"])),
        coverage=coverage_cell(cell),
        effective_images=cell.get("effective_images"),
        imageless=imageless,
    )


def coverage_cell(cell: dict[str, Any]) -> str:
    """``38/40`` for a judged cell (items with a verdict / items of the judge's scope)."""
    cover = cell.get("coverage")
    return f"{cover['verdicts']}/{cover['scope']}" if cover else ""

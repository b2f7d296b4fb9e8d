"""A board table and its cells, shared by every board table and renderer: a cell is (shown text,
sort value, exported value), with one maker per kind of figure (owns how a figure becomes a cell
and how wide a table is)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from medlens.report.percent_text import percent, percent_ci

Value = float | int | str | None
Cell = tuple[str, Value, Value]
BEST = "▲"
SMALL = "†"
PAGE_WIDTH = 120
"""Characters a text or markdown table may take (the board's default console width)."""
CELL_PADDING = 3
"""Per column: rich's ``│ `` + `` `` (markdown's ``| `` + `` ``)."""


@dataclass(frozen=True)
class BoardTable:
    key: str
    """Short name (xlsx sheet, HTML id)."""
    title: str
    headers: list[str]
    rows: list[list[Cell]]
    notes: list[str] = field(default_factory=list)
    text_columns: int = 1


def t(text: object, sort: Value = None) -> Cell:
    """A text cell (exported as its text), sorted by `sort` in HTML."""
    return (str(text), sort, str(text))


def shown(text: str, value: float | int | None) -> Cell:
    """A number shown as `text`, exported as the number itself."""
    return ("–", None, None) if value is None else (text, value, value)


def num(value: float | int | None) -> Cell:
    return shown(str(value), value)


def pct(value: float | None) -> Cell:
    return shown(percent(value), value)


def ci_cell(ci: Sequence[float] | None) -> Cell:
    return t(percent_ci(list(ci) if ci else None), None if not ci else ci[0])


def p_cell(p: float | None) -> Cell:
    return shown(f"{p:.3g}" if p is not None else "", p)


def signed(value: float | None) -> Cell:
    return shown(f"{100 * value:+.1f}" if value is not None else "", value)


def signed_ci(ci: Sequence[float] | None) -> Cell:
    if not ci:
        return t("–")
    return t(f"{100 * ci[0]:+.1f}…{100 * ci[1]:+.1f}", ci[0])


def r_cell(value: float | None) -> Cell:
    return shown(f"{value:.2f}" if value is not None else "", value)


def g_cell(value: float | None) -> Cell:
    return shown(f"{value:.4g}" if value is not None else "", value)


def r_ci_cell(ci: Sequence[float] | None) -> Cell:
    return t("–") if not ci else t(f"{ci[0]:.2f}…{ci[1]:.2f}", ci[0])


def column_widths(table: BoardTable) -> list[int]:
    """Each column's widest shown text (header included), in characters."""
    widths = [len(header) for header in table.headers]
    for row in table.rows:
        widths = [max(w, len(cell[0])) for w, cell in zip(widths, row, strict=False)]
    return widths


def table_width(widths: Sequence[int]) -> int:
    """Characters a table of these column widths takes (rich's and markdown's padding)."""
    return sum(widths) + CELL_PADDING * len(widths) + 1

"""Board tables that fit the page: wide ones are cut into parts of columns, each part repeating
the label columns, so text and markdown never run off the side (HTML lets cells wrap instead).

Widths are counted in characters of each cell's shown text, as rich and a markdown source show
them; a part holds as many value columns as fit, at least one.
"""

from __future__ import annotations

from dataclasses import replace

from medlens.report.board_cells import (
    CELL_PADDING,
    PAGE_WIDTH,
    BoardTable,
    column_widths,
    table_width,
)

FOLDED_TEXT = 32
"""A label column counts at most this wide: rich folds a longer name onto more lines (a run's
long "not comparable" note does not push the scores into a second part)."""


def split_wide(table: BoardTable, width: int = PAGE_WIDTH) -> list[BoardTable]:
    """`table` whole when it fits `width`, else its value columns in consecutive parts that do
    (titled ``… (columns 1–6 of 18)``); the notes follow the last part."""
    widths = column_widths(table)
    fixed = table.text_columns
    widths = [min(w, FOLDED_TEXT) if i < fixed else w for i, w in enumerate(widths)]
    if table_width(widths) <= width or len(widths) <= table.text_columns + 1:
        return [table]
    parts: list[list[int]] = [[]]
    room = width - table_width(widths[:fixed])
    used = 0
    for column in range(fixed, len(widths)):
        need = widths[column] + CELL_PADDING
        if parts[-1] and used + need > room:
            parts.append([])
            used = 0
        parts[-1].append(column)
        used += need
    if len(parts) == 1:
        return [table]
    parts = _balanced(parts, widths, room)
    total = len(widths) - fixed
    out = []
    for k, columns in enumerate(parts):
        keep = [*range(fixed), *columns]
        first, last = columns[0] - fixed + 1, columns[-1] - fixed + 1
        out.append(
            replace(
                table,
                title=f"{table.title} (columns {first}–{last} of {total})",
                headers=[table.headers[i] for i in keep],
                rows=[[row[i] for i in keep if i < len(row)] for row in table.rows],
                notes=table.notes if k == len(parts) - 1 else [],
            )
        )
    return out


def _balanced(parts: list[list[int]], widths: list[int], room: int) -> list[list[int]]:
    """The same number of parts with the columns spread evenly (9 columns in two parts: 5 and
    4, not 8 and 1), when every part still fits; else the greedy parts as they are."""
    columns = [column for part in parts for column in part]
    size = -(-len(columns) // len(parts))
    even = [columns[k : k + size] for k in range(0, len(columns), size)]
    fits = all(sum(widths[c] + CELL_PADDING for c in part) <= room for part in even)
    return even if fits and len(even) == len(parts) else parts

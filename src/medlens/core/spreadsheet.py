"""The one safe way medlens writes spreadsheets (reports, exports, boards, rating sheets).

Every text cell is written as text: a model output such as ``=HYPERLINK(...)`` must never
become a formula, and control characters that the xlsx format forbids are dropped.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
    from openpyxl import Workbook
    from openpyxl.worksheet.worksheet import Worksheet

_SHEET_NAME_FORBIDDEN = re.compile(r"[\[\]:*?/\\]")


def sheet_name(wanted: str, used: set[str]) -> str:
    """A valid, unique sheet name (≤ 31 characters, none of []:*?/\\)."""
    base = _SHEET_NAME_FORBIDDEN.sub("_", wanted)[:31]
    name, number = base, 2
    while name.lower() in {u.lower() for u in used}:
        suffix = f" {number}"
        name, number = base[: 31 - len(suffix)] + suffix, number + 1
    used.add(name)
    return name


def write_rows(sheet: Worksheet, rows: Iterable[Sequence[Any]]) -> None:
    """Append rows; strings always stay strings (never formulas)."""
    from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE

    for values in rows:
        sheet.append(
            [ILLEGAL_CHARACTERS_RE.sub("", v) if isinstance(v, str) else v for v in values]
        )
        for cell in sheet[sheet.max_row]:
            if cell.data_type == "f":
                cell.data_type = "s"


PERCENT_FORMAT = "0.0%"


def percent_columns(sheet: Worksheet, headers: Iterable[str]) -> None:
    """Show the numbers (fractions) under these header names as percentages: they stay numbers
    a spreadsheet can compute with, displayed as ``45.2%``."""
    wanted = set(headers)
    first = next(sheet.iter_rows(min_row=1, max_row=1), ())
    columns = [cell.column for cell in first if cell.value in wanted]
    for column in columns:
        for (cell,) in sheet.iter_rows(min_row=2, min_col=column, max_col=column):
            if isinstance(cell.value, int | float) and not isinstance(cell.value, bool):
                cell.number_format = PERCENT_FORMAT


def workbook_bytes(workbook: Workbook) -> bytes:
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()


def frame_xlsx(frame: pd.DataFrame) -> bytes:
    """A data frame as a one-sheet workbook (header row, no index), written safely."""
    from openpyxl import Workbook

    workbook = Workbook()
    sheet = workbook.active
    assert sheet is not None
    columns = [str(c) for c in frame.columns]
    rows = (tuple(_plain(v) for v in row) for row in frame.itertuples(index=False, name=None))
    write_rows(sheet, [columns, *rows])
    return workbook_bytes(workbook)


def _plain(value: Any) -> Any:
    """numpy scalars → Python values; NaN → empty cell."""
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and value != value:
        return None
    return value

"""The board as text (rich tables), markdown and xlsx; HTML is in :mod:`medlens.report.board_html`."""

from __future__ import annotations

import io
from typing import Any

from medlens.report.board_layout import all_tables
from medlens.report.board_sections import PAGE_WIDTH, BoardTable, board_title
from medlens.report.table_fit import split_wide

FORMATS = ("text", "md", "html", "xlsx")


def finite(value: Any) -> Any:
    """The board with NaN and infinities as null: its JSON stays JSON for every parser."""
    import math

    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def render_board(board: dict[str, Any], format: str, width: int | None = None) -> str | bytes:
    from medlens.core.errors import SpecError

    if format == "text":
        return render_text(board, width)
    if format == "md":
        return render_markdown(board)
    if format == "html":
        from medlens.report.board_html import render_html

        return render_html(board)
    if format == "xlsx":
        return render_xlsx(board)
    raise SpecError(f"--format: unknown format {format!r} (use {', '.join(FORMATS)})")


def render_text(board: dict[str, Any], width: int | None = None) -> str:
    """Rich tables at `width` (120) columns; a wider table is cut into parts of columns."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    buffer = io.StringIO()
    width = width or PAGE_WIDTH
    console = Console(file=buffer, width=width, color_system=None, soft_wrap=False)
    console.print(Text(board_title(board)), soft_wrap=True)
    for section in fitted_tables(board, width):
        table = Table(title=Text(section.title), title_justify="left")
        for i, header in enumerate(section.headers):
            if i < section.text_columns:
                table.add_column(header, overflow="fold")
            else:
                table.add_column(header, justify="right", overflow="fold")
        for row in section.rows:
            table.add_row(*(Text(cell[0]) for cell in row))
        console.print(table)
        for note in section.notes:
            console.print(Text(note), soft_wrap=True)
    return buffer.getvalue()


def fitted_tables(board: dict[str, Any], width: int = PAGE_WIDTH) -> list[BoardTable]:
    """Every table of the board, the wide ones cut into parts that fit `width` characters."""
    return [part for section in all_tables(board) for part in split_wide(section, width)]


def render_markdown(board: dict[str, Any]) -> str:
    from medlens.report.md_format import md_text, table

    parts = [f"# {md_text(board_title(board))}"]
    for section in fitted_tables(board):
        rows = [[md_text(cell[0]) for cell in row] for row in section.rows]
        headers = [md_text(h) for h in section.headers]
        parts.append(
            f"## {md_text(section.title)}\n\n" + table(headers, rows, section.text_columns)
        )
        parts += [f"_{md_text(note)}_" for note in section.notes]
    return "\n\n".join(parts) + "\n"


def render_xlsx(board: dict[str, Any]) -> bytes:
    """One sheet per table (numbers as numbers, text through report.xlsx's safe writer)."""
    from openpyxl import Workbook

    from medlens.core.spreadsheet import sheet_name, workbook_bytes, write_rows

    workbook = Workbook()
    first = workbook.active
    assert first is not None
    first.title = "board"
    write_rows(first, [(board_title(board),)])
    used = {"board"}
    for section in all_tables(board):
        sheet = workbook.create_sheet(sheet_name(section.key, used))
        write_rows(sheet, _sheet_rows(section))
        _percent_cells(sheet, section)
    if not board.get("across") and not board["difficulty"].get("continuous"):
        rows: list[tuple[Any, ...]] = [("solved by every run",)]
        rows += [(i,) for i in board["difficulty"]["solved_by_all_ids"]]
        write_rows(workbook.create_sheet(sheet_name("solved by all", used)), rows)
        shares = [("id", "share of runs right"), *board["difficulty"]["per_item"].items()]
        write_rows(workbook.create_sheet(sheet_name("item difficulty", used)), shares)
    return workbook_bytes(workbook)


def _percent_cells(sheet: Any, section: BoardTable) -> None:
    """Cells shown as ``45.2%`` are exported as their number: give them the percent format."""
    from medlens.core.spreadsheet import PERCENT_FORMAT

    for row_number, row in enumerate(section.rows, start=2):
        for column, (text, _, value) in enumerate(row, start=1):
            if isinstance(value, float) and text.endswith("%"):
                sheet.cell(row=row_number, column=column).number_format = PERCENT_FORMAT


def _sheet_rows(section: BoardTable) -> list[tuple[Any, ...]]:
    rows: list[tuple[Any, ...]] = [tuple(section.headers)]
    rows += [tuple(cell[2] for cell in row) for row in section.rows]
    rows += [(note,) for note in section.notes]
    return rows

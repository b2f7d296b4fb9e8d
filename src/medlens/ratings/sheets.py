"""Rating sheets on disk: xlsx (with an instructions sheet and drop-downs) or csv, and back.

Every text cell goes through ``report.xlsx.write_rows``, so a model answer such as
``=HYPERLINK(...)`` stays text. A csv sheet gets its instructions in ``<name>.instructions.csv``.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medlens.core.errors import InputError, MedlensError

RATINGS_SHEET = "ratings"
INSTRUCTIONS_SHEET = "instructions"
RATER_COLUMNS = ("rater", "qualification", "date", "comment")


@dataclass(frozen=True)
class Sheet:
    header: Sequence[str]
    rows: Sequence[Sequence[Any]]
    instructions: Sequence[Sequence[Any]]
    choices: Mapping[str, Sequence[str]]
    """Column → allowed values, offered as a drop-down in xlsx."""


def check_output(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in {".xlsx", ".csv"}:
        raise MedlensError(f"{path}: --output must end in .xlsx or .csv")
    if not path.parent.is_dir():
        raise MedlensError(f"{path}: folder {path.parent} does not exist")
    return suffix


def sheet_bytes(sheet: Sheet, suffix: str) -> dict[str, bytes]:
    """File suffix → content: ``{"": sheet}`` plus ``".instructions.csv"`` for csv."""
    if suffix == ".csv":
        return {"": _csv_bytes([sheet.header, *sheet.rows]),
                ".instructions.csv": _csv_bytes(sheet.instructions)}  # fmt: skip
    return {"": _xlsx_bytes(sheet)}


def write_sheet(path: Path, sheet: Sheet) -> list[Path]:
    """Write the sheet (and its instructions for csv) atomically; the paths written."""
    written = []
    for extra, content in sheet_bytes(sheet, check_output(path)).items():
        target = path.with_name(path.stem + extra) if extra else path
        write_bytes_atomic(target, content)
        written.append(target)
    return written


def write_bytes_atomic(path: Path, content: bytes) -> None:
    import os
    import tempfile

    handle = tempfile.NamedTemporaryFile(dir=path.parent, prefix=f".{path.name}.", delete=False)  # noqa: SIM115
    try:
        with handle:
            handle.write(content)
        os.replace(handle.name, path)
    except BaseException:
        Path(handle.name).unlink(missing_ok=True)
        raise


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _csv_bytes(rows: Sequence[Sequence[Any]]) -> bytes:
    """CSV whose text cells cannot become spreadsheet formulas: a cell starting with = + - @
    gets a leading apostrophe (OWASP's CSV-injection advice), which ``read_sheet`` removes."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    for row in rows:
        writer.writerow([_csv_cell(v) for v in row])
    return buffer.getvalue().encode("utf-8")


def _csv_cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def _xlsx_bytes(sheet: Sheet) -> bytes:
    from openpyxl import Workbook
    from openpyxl.utils import get_column_letter
    from openpyxl.worksheet.datavalidation import DataValidation

    from medlens.core.spreadsheet import workbook_bytes, write_rows

    workbook = Workbook()
    ratings = workbook.active
    assert ratings is not None
    ratings.title = RATINGS_SHEET
    write_rows(ratings, [sheet.header, *sheet.rows])
    last = max(len(sheet.rows) + 1, 2)
    for column, allowed in sheet.choices.items():
        joined = ",".join(a.replace(",", " ") for a in allowed)
        if len(joined) > 250:  # Excel's limit for an inline list
            continue
        letter = get_column_letter(list(sheet.header).index(column) + 1)
        validation = DataValidation(type="list", formula1=f'"{joined}"', allow_blank=True)
        validation.add(f"{letter}2:{letter}{last}")
        ratings.add_data_validation(validation)
    ratings.freeze_panes = "A2"
    write_rows(workbook.create_sheet(INSTRUCTIONS_SHEET), sheet.instructions)
    return workbook_bytes(workbook)


# -- reading -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class FilledSheet:
    path: Path
    header: list[str]
    rows: list[tuple[int, dict[str, str]]]
    """(spreadsheet row number, column → cell text; "" when empty)."""


def read_sheet(path: Path) -> FilledSheet:
    """A filled sheet (xlsx: the ``ratings`` sheet, else the first; csv) as text cells."""
    if not path.is_file():
        raise MedlensError(f"{path}: no such file")
    suffix = path.suffix.lower()
    if suffix == ".csv":
        table = _csv_table(path)
    elif suffix in {".xlsx", ".xlsm"}:
        table = _xlsx_table(path)
    else:
        raise MedlensError(f"{path}: a rating sheet must be .xlsx or .csv")
    if not table:
        raise InputError(path, "row 1", "empty sheet (no header row)")
    header = [_cell_text(v).lower() for v in table[0]]
    rows = []
    for number, values in enumerate(table[1:], start=2):
        cells = {name: _cell_text(v) for name, v in zip(header, values, strict=False) if name}
        if any(cells.values()):
            rows.append((number, cells))
    return FilledSheet(path, header, rows)


def _csv_table(path: Path) -> list[list[Any]]:
    try:
        with open(path, encoding="utf-8-sig", newline="") as handle:
            return [[_uncsv_cell(v) for v in row] for row in csv.reader(handle)]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise InputError(path, None, f"unreadable csv ({exc})") from None


def _uncsv_cell(value: str) -> str:
    return value[1:] if value.startswith("'") and value[1:].startswith(FORMULA_STARTS) else value


def _xlsx_table(path: Path) -> list[list[Any]]:
    from openpyxl import load_workbook

    try:
        workbook = load_workbook(path, read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises many types for a damaged file
        raise InputError(path, None, f"unreadable xlsx ({type(exc).__name__}: {exc})") from None
    try:
        names = workbook.sheetnames
        sheet = workbook[RATINGS_SHEET] if RATINGS_SHEET in names else workbook[names[0]]
        return [list(row) for row in sheet.iter_rows(values_only=True)]
    finally:
        workbook.close()


def _cell_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value).strip()

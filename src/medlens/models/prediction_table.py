"""The columns of a prediction table (``replay:FILE.tsv|.csv|.xlsx``), every cell as text.

What pandas reads with ``read_csv(sep=..., dtype=str, keep_default_na=False)`` (or
``read_excel``) is the contract. Importing pandas costs about as much as re-scoring a few
thousand answers, so a ``.tsv`` in the plain dialect VLMEvalKit writes is read by medlens's
byte-level scanner (``sources.tsv_scan``: tabs, ``\\n``/``\\r\\n``, quoted cells with ``""``, a
byte-order mark, blank lines skipped — the dialect pandas reads) and gives pandas's values. A
file the scanner cannot prove it reads as pandas does — a carriage return (pandas also ends a
line on a lone one), a NUL byte, a row of another width than the header, an empty or repeated
column name, text that is not UTF-8, a quoting error — is read by pandas, so its values and
errors stay pandas's own (``tests/models/test_prediction_table.py`` checks the two readings
against each other on fuzzed files).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from medlens.core.errors import InputError
from medlens.sources.tsv_scan import TsvScanner

Columns = dict[str, list[Any]]
"""Column name → its cells in row order (``str``; pandas may put a NaN in a short row)."""

Choose = Callable[[list[str]], list[str]]
"""Picks the wanted columns from a header (raising ``InputError`` for a missing one)."""

_IMAGE_KEEP = 64
"""An ``image`` column (a prediction file that kept its images) is skipped, not decoded."""


def read_columns(source: Path, choose: Choose) -> Columns:
    """The columns `choose` picks from the header of an xlsx/tsv/csv table, every cell as text
    (an empty cell stays "")."""
    if source.suffix.lower() == ".tsv":
        scanned = scan_tsv(source, choose)
        if scanned is not None:
            return scanned
    wanted = choose(_pandas_header(source))
    import pandas as pd

    try:
        if source.suffix.lower() == ".xlsx":
            frame = pd.read_excel(source, usecols=wanted, dtype=str, keep_default_na=False)
        else:
            frame = pd.read_csv(
                source, sep=_separator(source), usecols=wanted, dtype=str, keep_default_na=False
            )
    except (OSError, ValueError) as exc:
        raise InputError(source, None, f"cannot read ({exc})") from None
    return {name: frame[name].tolist() for name in wanted}


def _pandas_header(source: Path) -> list[str]:
    import pandas as pd

    try:
        if source.suffix.lower() == ".xlsx":
            return [str(c) for c in pd.read_excel(source, nrows=0).columns]
        return [str(c) for c in pd.read_csv(source, sep=_separator(source), nrows=0).columns]
    except (OSError, ValueError) as exc:
        raise InputError(source, "header", f"cannot read ({exc})") from None


def _separator(source: Path) -> str:
    return "\t" if source.suffix.lower() == ".tsv" else ","


def scan_tsv(source: Path, choose: Choose) -> Columns | None:
    """The chosen columns of a ``.tsv`` as pandas reads them, or None where pandas's reading may
    differ (see the module docstring): pandas then reads the file."""
    try:
        opened = TsvScanner(str(source))
    except InputError:  # unreadable: pandas says why, as it always did
        return None
    with opened as scanner:
        names = _plain_header(scanner)
        if names is None:
            return None
        wanted = choose(names)  # a missing column is refused here, as pandas's path would
        image = _image_column(names)
        if image is not None and names[image] in wanted:
            return None
        rows = _rows(scanner, len(names), image)
    return None if rows is None else _decoded(names, wanted, rows)


def _rows(scanner: TsvScanner, width: int, image: int | None) -> list[list[bytes]] | None:
    """Every row's cells, or None at a row of another width or a quoting error."""
    rows = []
    try:
        while (row := scanner.read_row(span=image, keep_limit=_IMAGE_KEEP)) is not None:
            if len(row.values) != width:
                return None
            rows.append(row.values)
    except InputError:
        return None
    return rows


def _plain_header(scanner: TsvScanner) -> list[str] | None:
    """The header's names, or None for a file pandas may read otherwise."""
    if scanner.contains(b"\r") or scanner.contains(b"\0"):
        return None
    try:
        header = scanner.read_row()
        names = None if header is None else [value.decode() for value in header.values]
    except (InputError, UnicodeDecodeError):
        return None
    if names is None or len(set(names)) != len(names) or not all(names):
        return None
    return names


def _decoded(names: list[str], wanted: list[str], rows: list[list[bytes]]) -> Columns | None:
    """The wanted columns as text; None when any cell is not UTF-8 (pandas then refuses)."""
    columns = list(zip(*rows, strict=True)) if rows else [() for _ in names]
    try:
        texts = {
            name: [*map(bytes.decode, cells)] for name, cells in zip(names, columns, strict=True)
        }
    except UnicodeDecodeError:
        return None
    return {name: texts[name] for name in wanted}


def _image_column(names: list[str]) -> int | None:
    for column, name in enumerate(names):
        if name.strip().lower() == "image":
            return column
    return None

"""The columns of a prediction table (``replay:FILE.tsv|.csv|.xlsx``), every cell as text.

What pandas reads with ``read_csv(sep=..., dtype=str, keep_default_na=False)`` (or
``read_excel``) is the contract. Importing pandas costs about as much as re-scoring a few
thousand answers, so a ``.tsv`` in the plain dialect VLMEvalKit writes (tabs, quoted cells with
``""``, a byte-order mark, blank lines skipped) is read by the standard library's ``csv`` reader
and gives pandas's values. A file it cannot prove it reads as pandas does — a carriage return
(pandas also ends a line on a lone one), a NUL byte, a row of another width than the header or
of blanks only, an empty or repeated column name, text that is not UTF-8, a quoting error, a
cell over 128 KB, a file over 256 MB — is read by pandas, so its values and errors stay pandas's
own (``tests/models/test_prediction_table.py`` checks the two readings against each other on
fuzzed files).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

from medlens.core.errors import InputError

Columns = dict[str, list[Any]]
"""Column name → its cells in row order (``str``; pandas may put a NaN in a short row)."""

Choose = Callable[[list[str]], list[str]]
"""Picks the wanted columns from a header (raising ``InputError`` for a missing one)."""


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
    rows = _plain_rows(source)
    if not rows or len(set(rows[0])) != len(rows[0]) or not all(rows[0]):
        return None
    names = rows[0]
    wanted = choose(names)  # a missing column is refused here, as pandas's path would
    if any(len(row) != len(names) or not "".join(row).strip() for row in rows):
        return None  # pandas may skip a row of blanks as a blank line: it reads the file
    columns = list(zip(*rows[1:], strict=True)) if len(rows) > 1 else [() for _ in names]
    return {name: list(columns[names.index(name)]) for name in wanted}


def _plain_rows(source: Path) -> list[list[str]] | None:
    """The file's non-blank rows, or None for a file pandas may read otherwise."""
    try:
        if source.stat().st_size > _SCAN_LIMIT:
            return None
        data = source.read_bytes()
        if b"\r" in data or b"\0" in data:
            return None
        text = data.decode("utf-8-sig")
        return [row for row in csv.reader(io.StringIO(text, newline=""), _TSV) if row]
    except (OSError, UnicodeDecodeError, csv.Error):  # pandas says why it cannot read it
        return None


class _Tsv(csv.Dialect):
    """pandas's ``read_csv(sep="\\t")``: quoted cells with ``""``, no escape character, nothing
    after a closing quote (``strict``: pandas would join it to the cell; here pandas reads it)."""

    delimiter = "\t"
    quotechar = '"'
    doublequote = True
    skipinitialspace = False
    strict = True
    lineterminator = "\n"
    quoting = csv.QUOTE_MINIMAL


_TSV = _Tsv()
_SCAN_LIMIT = 256 * 1024 * 1024
"""Larger files (predictions that kept their images) are left to pandas."""

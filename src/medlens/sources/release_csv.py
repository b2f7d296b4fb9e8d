"""Published release tables (MultiMedBench loaders): CSV files whose column names are the
dataset's documented ones, checked once against the header.

A missing column is one input error naming the file, the header and the column, so a wrong
folder or a renamed export fails before a run starts (exit 2, nothing written). Column names
match case-, space-, ``_``- and ``-``-insensitively ("image file path" = ``image_file_path``),
because re-exports of the same release differ in exactly that way.
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from medlens.core.errors import InputError
from medlens.sources import native

_KEY = re.compile(r"[\s_\-]+")


def column_key(name: str) -> str:
    return _KEY.sub("", name).lower()


def find_table(root: Path, names: Sequence[str]) -> Path:
    """The first of `names` (``.csv`` or ``.csv.gz``) inside `root`, or a one-line error."""
    for name in names:
        for candidate in (root / name, root / f"{name}.gz"):
            if candidate.is_file():
                return candidate
    raise InputError(root, None, f"no {' or '.join(names)} in this folder")


def read_release_table(
    path: Path, required: Sequence[str], delimiter: str = ","
) -> Iterator[tuple[str, dict[str, str]]]:
    """Rows as ``{published column name: value}`` (every other column under its own name).

    The header must hold every `required` column (compared by :func:`column_key`).
    """
    if path.suffix == ".gz":
        yield from _read_gzip(path, required, delimiter)
        return
    header_checked = False
    for where, record in native.read_table(path, delimiter):
        if not header_checked:
            _check_header(path, list(record), required)
            header_checked = True
        yield where, _canonical(record, required)


def _read_gzip(
    path: Path, required: Sequence[str], delimiter: str
) -> Iterator[tuple[str, dict[str, str]]]:
    import csv

    try:
        with gzip.open(path, "rt", encoding="utf-8-sig", newline="") as handle:
            reader = csv.reader(handle, delimiter=delimiter)
            columns = [cell.strip() for cell in next(reader, [])]
            _check_header(path, columns, required)
            for row in reader:
                if any(cell.strip() for cell in row):
                    where = f"line {reader.line_num}"
                    yield where, _canonical(dict(zip(columns, row, strict=False)), required)
    except (OSError, EOFError, csv.Error, UnicodeDecodeError) as exc:
        raise InputError(path, None, f"cannot read ({exc})") from None


def _check_header(path: Path, columns: Sequence[str], required: Sequence[str]) -> None:
    present = {column_key(name) for name in columns}
    for name in required:
        if column_key(name) not in present:
            raise InputError(path, "header", f"missing column {name!r}")


def _canonical(record: dict[str, str], required: Sequence[str]) -> dict[str, str]:
    wanted = {column_key(name): name for name in required}
    return {wanted.get(column_key(key), key): str(value).strip() for key, value in record.items()}


def image_index(root: Path) -> dict[str, Path]:
    """Every image file under `root` by file name (releases split images over part folders)."""
    suffixes = {".png", ".jpg", ".jpeg", ".dcm", ".dicom"}
    return {p.name: p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in suffixes}


__all__ = ["column_key", "find_table", "image_index", "read_release_table"]

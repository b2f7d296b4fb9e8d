"""Parquet tables whose images sit in numbered columns (``image_1`` … ``image_k``), in order.

MMMU (``image_1`` … ``image_7``) and MedFrameQA's Hub copy (``image_1`` … ``image_5``) keep each
question's images in numbered ``datasets`` Image columns; a question with fewer images leaves the
last cells empty (a null struct). Only each cell's ``path`` is decoded here — never its bytes —
and whether the cell is empty, so a multi-image item with a missing image is refused when the
benchmark loads, naming the file, the row and the column, before any run folder exists.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medlens.core.errors import InputError
from medlens.core.items import ImageRef
from medlens.sources.hfds_table import BATCH_ROWS, schema_of

NUMBERED = re.compile(r"^image_(\d+)$")


@dataclass(frozen=True)
class ImageRow:
    """One row: its text columns, and for each numbered image column its cell's state."""

    path: Path
    row: int
    """Row number inside the file, from 0."""
    record: dict[str, Any]
    present: tuple[bool, ...]
    """Per image column (in number order): the cell holds an image."""
    names: tuple[str | None, ...]
    """Per image column: the image struct's ``path`` (the file name it was uploaded from)."""


def numbered_columns(columns: Sequence[str]) -> list[str]:
    """The ``image_N`` columns, in N order."""
    found = [(int(m.group(1)), c) for c in columns if (m := NUMBERED.match(c))]
    return [column for _, column in sorted(found)]


def table_columns(path: Path) -> tuple[list[str], list[str]]:
    """The text columns and the numbered image columns of a parquet file."""
    names = list(schema_of(path).names)
    images = numbered_columns(names)
    return [c for c in names if c not in images], images


def image_rows(
    files: Sequence[Path], text: Sequence[str], images: Sequence[str]
) -> Iterator[ImageRow]:
    """Every row of `files` in order; image columns are read as ``path`` and emptiness only."""
    import pyarrow.parquet as pq

    wanted = [*text, *(f"{column}.path" for column in images)]
    for path in files:
        start = 0
        try:
            handle = pq.ParquetFile(path)
            for batch in handle.iter_batches(batch_size=BATCH_ROWS, columns=wanted):
                records = batch.select(list(range(len(text)))).to_pylist()
                cells = [_cells(batch.column(len(text) + i)) for i in range(len(images))]
                for offset, record in enumerate(records):
                    present = tuple(column[offset][0] for column in cells)
                    names = tuple(column[offset][1] for column in cells)
                    yield ImageRow(path, start + offset, record, present, names)
                start += len(records)
        except OSError as exc:
            raise InputError(path, None, f"cannot read ({exc})") from None


def _cells(column: Any) -> list[tuple[bool, str | None]]:
    """(holds an image, its path) per cell of an Image struct column read as ``{path}`` only."""
    nulls = column.is_null().to_pylist()
    values = column.to_pylist()
    return [
        (not null, (value or {}).get("path") if not null else None)
        for null, value in zip(nulls, values, strict=True)
    ]


def ordered_images(row: ImageRow, images: Sequence[str], item_id: str) -> tuple[ImageRef, ...]:
    """The row's images in column order; InputError naming the empty cell before a filled one
    (a gap would shift every later image's number)."""
    last = max((i for i, held in enumerate(row.present) if held), default=-1)
    for index in range(last):
        if not row.present[index]:
            where = f"row {row.row}, field {images[index]!r}"
            later = images[last]
            raise InputError(
                row.path, where, f"empty, but {later!r} holds an image: a missing image"
            )
    return tuple(
        ImageRef(source="parquet", path=str(row.path), offset=row.row, entry=column,
                 name=f"{item_id}/{column}")
        for column, held in zip(images, row.present, strict=True)
        if held
    )  # fmt: skip

"""Rows of the parquet shards or Arrow files of one split, streamed one batch at a time.

Only the columns items need are decoded: every column but the image one, and of the image column
only its ``path`` (the ``datasets`` Image struct ``{bytes, path}``), never its bytes. Each row
comes with a lazy :class:`~medlens.core.items.ImageRef` naming its file, row and column.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medlens.core.errors import InputError
from medlens.core.items import ImageRef

BATCH_ROWS = 1024
"""Rows decoded at once when a parquet row group is larger (memory: one batch of text columns)."""


@dataclass(frozen=True)
class Row:
    path: Path
    """The file the row is in."""
    row: int
    """Row number inside that file, from 0."""
    record: dict[str, Any]
    """Every column but the image one, as Python values."""
    image_path: str | None
    """The image struct's ``path`` (or the image column's text), when it has one."""


def schema_of(path: Path) -> Any:
    """The Arrow schema of a parquet or Arrow file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        if path.suffix == ".parquet":
            return pq.read_schema(path)
        from medlens.core.container_images import open_arrow

        for batch in open_arrow(str(path)):
            return batch.schema
        return pa.schema([])
    except (OSError, pa.ArrowException) as exc:
        raise InputError(path, None, f"cannot read as {path.suffix[1:]} ({exc})") from None


def image_kind(schema: Any, column: str | None) -> str:
    """``struct`` (the datasets Image), ``binary``, ``text`` (a file path) or ``none``."""
    import pyarrow as pa

    if column is None:
        return "none"
    kind = schema.field(column).type
    if pa.types.is_struct(kind):
        return "struct"
    if pa.types.is_binary(kind) or pa.types.is_large_binary(kind):
        return "binary"
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return "text"
    raise InputError(column, None, f"image column {column!r} holds {kind}, not an image")


def rows(files: list[Path], columns: list[str], image: str | None, kind: str) -> Iterator[Row]:
    """Every row of `files` in order; `columns` are decoded, the image column only by path."""
    for path in files:
        batches = _parquet_batches if path.suffix == ".parquet" else _arrow_batches
        start = 0
        try:
            for batch, images in batches(path, columns, image, kind):
                records = batch.to_pylist()
                for offset, record in enumerate(records):
                    yield Row(path, start + offset, record, images[offset] if images else None)
                start += len(records)
        except OSError as exc:
            raise InputError(path, None, f"cannot read ({exc})") from None


def image_ref(row: Row, source: str, column: str, name: str) -> ImageRef:
    """A lazy reference to the image cell of `row`."""
    return ImageRef(source=source, path=str(row.path), offset=row.row, entry=column, name=name)  # type: ignore[arg-type]


def _parquet_batches(
    path: Path, columns: list[str], image: str | None, kind: str
) -> Iterator[tuple[Any, list[str | None] | None]]:
    import pyarrow.parquet as pq

    wanted = list(columns)
    if image is not None and kind in ("struct", "text"):
        wanted.append(f"{image}.path" if kind == "struct" else image)
    handle = pq.ParquetFile(path)
    for batch in handle.iter_batches(batch_size=BATCH_ROWS, columns=wanted):
        images = _paths(batch.column(len(columns)), kind) if len(wanted) > len(columns) else None
        yield batch.select(list(range(len(columns)))), images


def _arrow_batches(
    path: Path, columns: list[str], image: str | None, kind: str
) -> Iterator[tuple[Any, list[str | None] | None]]:
    from medlens.core.container_images import open_arrow

    for batch in open_arrow(str(path)):
        images = None
        if image is not None and kind in ("struct", "text"):
            images = _paths(batch.column(image), kind)
        yield batch.select(columns), images


def _paths(column: Any, kind: str) -> list[str | None]:
    import pyarrow.compute as pc

    values = pc.struct_field(column, "path") if kind == "struct" and _has_path(column) else column
    if kind == "struct" and not _has_path(column):
        return [None] * len(column)
    out: list[str | None] = values.to_pylist()
    return out


def _has_path(column: Any) -> bool:
    return any(column.type.field(i).name == "path" for i in range(column.type.num_fields))

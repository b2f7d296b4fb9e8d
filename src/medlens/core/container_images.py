"""Images held inside containers: a cell of a parquet or Arrow table, a member of a zip file.

Hugging Face datasets keep images as a column (the ``datasets`` Image struct ``{bytes, path}`` or
plain binary) in parquet shards or ``save_to_disk`` Arrow files, and some Hub repositories ship
their images zipped. An :class:`~medlens.core.items.ImageRef` names the file, the row and the
column (or the member); the bytes are read only when a request is built.

Parquet pages are compressed, so one image cannot be cut out of the file by a byte range: the
reader decodes the column of the row group that holds the row and keeps the last few such
column chunks (requests go out in item order, so neighbouring rows hit the same chunk). Memory
stays bounded by a few row groups of one column, never the table. Arrow files are memory-mapped
(zero copy), so their batches cost address space, not memory.
"""

from __future__ import annotations

import bisect
import os
import threading
import zipfile
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

from medlens.core.errors import ItemError

CHUNKS_KEPT = 8
"""Decoded parquet column chunks kept (one per row group and image column); the oldest is
dropped first. Multi-image tables (MMMU's image_1..image_7, MedFrameQA's image_1..image_5) read
one chunk per image column for each row: with fewer kept than the table has image columns, every
item would decode its row group's chunks again."""

_lock = threading.Lock()
_chunks: OrderedDict[tuple[str, int, str], Any] = OrderedDict()
_parquet_starts: dict[str, tuple[Any, list[int]]] = {}
_arrow_batches: dict[str, tuple[list[Any], list[int]]] = {}
_zips: dict[str, zipfile.ZipFile] = {}
_states: dict[str, tuple[int, int, int]] = {}
"""(inode, size, mtime_ns) of each file whose handle is kept: a file replaced since is reopened."""


def read_container_image(source: str, path: str, row: int, entry: str) -> bytes:
    """The encoded bytes of one image; raises ItemError when the cell holds none."""
    with _lock:
        _forget_if_replaced(path)
        if source == "zip":
            return _zip_member(path, entry)
        if source == "parquet":
            value = _parquet_cell(path, row, entry)
        else:
            value = _arrow_cell(path, row, entry)
    return image_bytes_of(value, f"{path}, row {row}, column {entry!r}")


def _forget_if_replaced(path: str) -> None:
    """Drop what is kept of `path` when the file changed since it was opened (a long-lived
    process, or a content hash taken before and after an image was replaced)."""
    try:
        info = os.stat(path)
    except OSError:
        return  # reading it fails with its own message
    state = (info.st_ino, info.st_size, info.st_mtime_ns)
    if _states.get(path, state) != state:
        _parquet_starts.pop(path, None)
        _arrow_batches.pop(path, None)
        archive = _zips.pop(path, None)
        if archive is not None:
            archive.close()
        for key in [key for key in _chunks if key[0] == path]:
            del _chunks[key]
    _states[path] = state


def image_bytes_of(value: Any, where: str) -> bytes:
    """Bytes of a cell: binary itself, or the ``bytes`` field of the ``datasets`` Image struct."""
    if isinstance(value, dict):
        value = value.get("bytes")
    if isinstance(value, (bytes, bytearray, memoryview)) and len(value):
        return bytes(value)
    raise ItemError("image", f"{where}: no image bytes in this cell")


def _parquet_cell(path: str, row: int, column: str) -> Any:
    import pyarrow as pa
    import pyarrow.parquet as pq

    if path not in _parquet_starts:
        handle = pq.ParquetFile(path)
        starts, total = [], 0
        for index in range(handle.metadata.num_row_groups):
            starts.append(total)
            total += handle.metadata.row_group(index).num_rows
        _parquet_starts[path] = (handle, starts)
    handle, starts = _parquet_starts[path]
    group = bisect.bisect_right(starts, row) - 1
    key = (path, group, column)
    chunk = _chunks.get(key)
    if chunk is None:
        struct = handle.schema_arrow.field(column).type
        only_bytes = getattr(struct, "num_fields", 0) and struct.get_field_index("bytes") >= 0
        wanted = f"{column}.bytes" if only_bytes else column  # never the struct's other fields
        chunk = handle.read_row_group(group, columns=[wanted], use_threads=False).column(0)
        _chunks[key] = chunk
        while len(_chunks) > CHUNKS_KEPT:
            _chunks.popitem(last=False)
            pa.default_memory_pool().release_unused()  # hand the dropped chunk's pages back
    _chunks.move_to_end(key)
    return chunk[row - starts[group]].as_py()


def _arrow_cell(path: str, row: int, column: str) -> Any:
    if path not in _arrow_batches:
        batches = list(open_arrow(path))
        starts, total = [], 0
        for batch in batches:
            starts.append(total)
            total += batch.num_rows
        _arrow_batches[path] = (batches, starts)
    batches, starts = _arrow_batches[path]
    index = bisect.bisect_right(starts, row) - 1
    return batches[index].column(column)[row - starts[index]].as_py()


def open_arrow(path: str) -> Iterator[Any]:
    """The record batches of an Arrow IPC file or stream (``save_to_disk`` writes streams),
    memory-mapped: each batch is a view of the mapped file."""
    import pyarrow as pa

    source = pa.memory_map(path, "r")
    try:
        if _is_ipc_file(source):
            reader = pa.ipc.open_file(source)
            yield from (reader.get_batch(i) for i in range(reader.num_record_batches))
        else:
            yield from pa.ipc.open_stream(source)
    except pa.ArrowInvalid as exc:
        raise OSError(f"not an Arrow file ({exc})") from None


def _is_ipc_file(source: Any) -> bool:
    head = source.read(6)
    source.seek(0)
    return bool(head == b"ARROW1")


def _zip_member(path: str, member: str) -> bytes:
    archive = _zips.get(path)
    if archive is None:
        archive = _zips[path] = zipfile.ZipFile(path)
    try:
        return archive.read(member)
    except KeyError:
        raise ItemError("image", f"{path}: no member {member!r}") from None
    except zipfile.BadZipFile as exc:
        raise ItemError("image", f"{path}, member {member!r}: cannot read ({exc})") from None

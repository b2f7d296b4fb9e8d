"""A run's score table as an Arrow IPC file: the columnar form of its records that the analyses
read (``slice``, ``compare``, ``calibrate``, ``board``), so that they neither parse
``records.jsonl`` and ``items.jsonl`` again nor join them.

Columns: ``id``, ``score``, ``vlmeval``, ``random``, ``status``, ``cluster``, then ``meta:AXIS``
per axis, ``secondary:NAME`` and ``secondary_random:NAME`` per secondary metric, in the order
of the :class:`~medlens.analysis.score_table.ScoreTable` they came from (its dictionaries keep
that order, so a table read back equals the one written). The schema's metadata holds the
derived stamp (``medlens.derived``, JSON) and the run's served-model summary
(``medlens.served``), which the board compares across runs without reading any record.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from medlens.analysis.score_table import ScoreTable

STAMP_KEY = b"medlens.derived"
SERVED_KEY = b"medlens.served"
_META, _SECONDARY, _CHANCE = "meta:", "secondary:", "secondary_random:"


def table_columns(table: ScoreTable) -> Any:
    """The score table as a pyarrow Table (no metadata), its columns built from their buffers
    (``pa.array`` would import pandas: see :func:`arrow_strings`)."""
    import pyarrow as pa

    def strings(values: np.ndarray) -> Any:
        return arrow_strings([str(v) for v in values.tolist()])

    columns: dict[str, Any] = {
        "id": arrow_strings(table.ids),
        "score": arrow_floats(table.score),
        "vlmeval": arrow_floats(table.vlmeval),
        "random": arrow_floats(table.random),
        "status": strings(table.status),
        "cluster": strings(table.cluster),
    }
    if table.finish is not None:  # finish reasons ("length": cut at the token cap)
        columns["finish"] = strings(table.finish)
    columns.update({_META + k: strings(v) for k, v in table.meta.items()})
    columns.update({_SECONDARY + k: arrow_floats(v) for k, v in table.secondary.items()})
    columns.update({_CHANCE + k: arrow_floats(v) for k, v in table.secondary_random.items()})
    return pa.Table.from_arrays(list(columns.values()), names=list(columns))


def arrow_strings(values: list[str]) -> Any:
    """``pa.array(values, type=pa.string())``, built from its offsets and bytes: pyarrow imports
    pandas (a third of a second, more than the rest of writing the file) on its first
    ``pa.array`` call, to look for pandas objects. The same array, buffer for buffer; text that
    is not UTF-8 (a lone surrogate) or 2 GB and more goes to ``pa.array``, which refuses it or
    splits it as it always did."""
    import pyarrow as pa

    try:
        encoded = [value.encode() for value in values]
    except UnicodeEncodeError:
        return pa.array(values, type=pa.string())
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum([*map(len, encoded)], out=offsets[1:])
    if offsets[-1] > np.iinfo(np.int32).max:
        return pa.array(values, type=pa.string())
    return pa.StringArray.from_buffers(
        len(encoded), pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(b"".join(encoded))
    )


def arrow_floats(values: np.ndarray) -> Any:
    """``pa.array(values, type=pa.float64())`` (NaN stays a value, not a null), from its buffer."""
    import pyarrow as pa

    data = np.ascontiguousarray(values, dtype=np.float64)
    return pa.Array.from_buffers(pa.float64(), len(data), [None, pa.py_buffer(data)])


def write_score_file(
    path: Path, table: ScoreTable, stamp: dict[str, Any], served: dict[str, Any]
) -> None:
    """Write the table with its stamp, atomically (readers see the old file or the new one)."""
    import pyarrow as pa

    from medlens.runs.files import write_atomic

    columns = table_columns(table)
    metadata = {STAMP_KEY: json.dumps(stamp), SERVED_KEY: json.dumps(served)}
    columns = columns.replace_schema_metadata(metadata)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, columns.schema) as writer:
        writer.write_table(columns)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, sink.getvalue().to_pybytes())


def read_stamp(path: Path) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The stamp and served summary of a score file (None when absent or unreadable)."""
    import pyarrow as pa

    try:
        with pa.memory_map(str(path)) as source:
            metadata = pa.ipc.open_file(source).schema.metadata or {}
        return json.loads(metadata[STAMP_KEY]), json.loads(metadata[SERVED_KEY])
    except (OSError, KeyError, ValueError, pa.ArrowException):
        return None


def read_columns(path: Path, names: list[str] | None = None) -> Any:
    """The file's pyarrow Table (only `names` when given), memory-mapped."""
    import pyarrow as pa

    with pa.memory_map(str(path)) as source:
        table = pa.ipc.open_file(source).read_all()
    return table.select(names) if names is not None else table


# pyarrow imports pandas (a third of a second) on its first pa.array() or to_numpy() call; the
# readers below build and read columns from their buffers instead, so `slice` and `board`
# never pay for it.
def _floats(array: Any) -> np.ndarray:
    """A float64 column without nulls as a numpy array (its own copy)."""
    if array.null_count or array.offset:
        return np.asarray(array.to_numpy(zero_copy_only=False), dtype=float)
    return np.frombuffer(array.buffers()[1], dtype=np.float64, count=len(array)).copy()


def arrow_numbers(column: Any) -> np.ndarray:
    """A numeric Arrow column as numpy, as ``to_numpy(zero_copy_only=False)`` gives it (nulls:
    NaN, integers with nulls as floats), read from its buffers (no pandas import)."""
    import pyarrow as pa

    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    kind = array.type
    if array.offset or not (pa.types.is_integer(kind) or pa.types.is_floating(kind)):
        return np.asarray(array.to_numpy(zero_copy_only=False))
    prefix = (
        "f" if pa.types.is_floating(kind) else ("i" if pa.types.is_signed_integer(kind) else "u")
    )
    dtype = np.dtype(f"{prefix}{kind.bit_width // 8}")
    values = np.frombuffer(array.buffers()[1], dtype=dtype, count=len(array)).copy()
    if not array.null_count:
        return values
    bits = np.frombuffer(array.buffers()[0], dtype=np.uint8)
    valid = np.unpackbits(bits, bitorder="little", count=len(array)).astype(bool)
    out = values.astype(float)
    out[~valid] = np.nan
    return out


def _null_where(array: Any, missing: np.ndarray) -> Any:
    """The same column with `missing` rows null (its other buffers shared)."""
    import pyarrow as pa

    if array.null_count or array.offset:
        import pyarrow.compute as pc

        return pc.if_else(pa.array(missing), pa.scalar(None, array.type), array)
    if not missing.any():
        return array
    validity = pa.py_buffer(np.packbits(~missing, bitorder="little").tobytes())
    return pa.Array.from_buffers(
        array.type, len(array), [validity, *array.buffers()[1:]], null_count=int(missing.sum())
    )


def _empty_strings(array: Any) -> np.ndarray:
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int32, count=len(array) + 1)
    return np.diff(offsets) == 0


def slice_columns(path: Path, names: dict[str, str]) -> tuple[Any, tuple[str, ...]]:
    """The Arrow table ``analysis.slices`` works on, straight from a score file: `names` maps
    ``score``, ``vlmeval``, ``random``, ``status`` and ``cluster`` to its column names; NaN
    scores and empty axis values become nulls; also the axes, in table order."""
    import pyarrow as pa

    columns = read_columns(path)
    out: dict[str, Any] = {}
    for source in ("score", "vlmeval", "random"):
        array = columns[source].combine_chunks()
        out[names[source]] = _null_where(array, np.isnan(_floats(array)))
    for source in ("status", "cluster"):
        out[names[source]] = columns[source].combine_chunks()
    axes = tuple(n[len(_META) :] for n in columns.column_names if n.startswith(_META))
    for axis in axes:
        array = columns[_META + axis].combine_chunks()
        out[axis] = _null_where(array, _empty_strings(array))
    return pa.table(list(out.values()), names=list(out)), axes


def score_table_of(columns: Any) -> ScoreTable:
    """The ScoreTable a :func:`table_columns` table holds."""

    def objects(name: str) -> np.ndarray:
        return np.array(columns[name].to_pylist(), dtype=object)

    def floats(name: str) -> np.ndarray:
        return _floats(columns[name].combine_chunks())

    names = columns.column_names
    return ScoreTable(
        ids=columns["id"].to_pylist(),
        score=floats("score"),
        vlmeval=floats("vlmeval"),
        random=floats("random"),
        status=objects("status"),
        cluster=objects("cluster"),
        meta={n[len(_META) :]: objects(n) for n in names if n.startswith(_META)},
        secondary={n[len(_SECONDARY) :]: floats(n) for n in names if n.startswith(_SECONDARY)},
        secondary_random={n[len(_CHANCE) :]: floats(n) for n in names if n.startswith(_CHANCE)},
        finish=objects("finish") if "finish" in names else None,
    )

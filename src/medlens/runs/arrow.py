"""Arrow columns built from and read into their buffers, without pandas.

pyarrow imports pandas (a third of a second, more than the rest of writing a score file) on its
first ``pa.array()`` or ``to_numpy()`` call, to look for pandas objects; the columns of the run's
derived files and of :mod:`medlens.runs.columns` are built and read from their buffers instead,
so `slice`, `board` and `report` never pay for it. Each gives what the pandas-importing call
would (``tests/analysis/test_score_file_buffers.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np


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


def floats(array: Any) -> np.ndarray:
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


def null_where(array: Any, missing: np.ndarray) -> Any:
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


def empty_strings(array: Any) -> np.ndarray:
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int32, count=len(array) + 1)
    return np.diff(offsets) == 0


def valid_rows(array: Any) -> np.ndarray:
    """Which rows of an Arrow array are not null, from its validity bitmap."""
    import pyarrow as pa

    array = array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array
    if not array.null_count:
        return np.ones(len(array), dtype=bool)
    bits = np.frombuffer(array.buffers()[0], dtype=np.uint8)
    return np.unpackbits(bits, bitorder="little", count=array.offset + len(array))[
        array.offset :
    ].astype(bool)

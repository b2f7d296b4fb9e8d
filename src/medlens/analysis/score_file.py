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
from medlens.runs.arrow import arrow_floats, arrow_strings, empty_strings, null_where
from medlens.runs.arrow import floats as float_values

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


def score_file_bytes(table: ScoreTable, stamp: dict[str, Any], served: dict[str, Any]) -> bytes:
    """The table as an Arrow IPC file with its stamp and served-model summary in its schema's
    metadata (written atomically by the run view)."""
    import pyarrow as pa

    columns = table_columns(table)
    metadata = {STAMP_KEY: json.dumps(stamp), SERVED_KEY: json.dumps(served)}
    columns = columns.replace_schema_metadata(metadata)
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, columns.schema) as writer:
        writer.write_table(columns)
    data: bytes = sink.getvalue().to_pybytes()
    return data


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


def slice_columns(path: Path, names: dict[str, str]) -> tuple[Any, tuple[str, ...]]:
    """The Arrow table ``analysis.slices`` works on, straight from a score file: `names` maps
    ``score``, ``vlmeval``, ``random``, ``status`` and ``cluster`` to its column names; NaN
    scores and empty axis values become nulls; also the axes, in table order."""
    import pyarrow as pa

    columns = read_columns(path)
    out: dict[str, Any] = {}
    for source in ("score", "vlmeval", "random"):
        array = columns[source].combine_chunks()
        out[names[source]] = null_where(array, np.isnan(float_values(array)))
    for source in ("status", "cluster"):
        out[names[source]] = columns[source].combine_chunks()
    axes = tuple(n[len(_META) :] for n in columns.column_names if n.startswith(_META))
    for axis in axes:
        array = columns[_META + axis].combine_chunks()
        out[axis] = null_where(array, empty_strings(array))
    return pa.table(list(out.values()), names=list(out)), axes


def score_table_of(columns: Any) -> ScoreTable:
    """The ScoreTable a :func:`table_columns` table holds."""

    def objects(name: str) -> np.ndarray:
        return np.array(columns[name].to_pylist(), dtype=object)

    def floats(name: str) -> np.ndarray:
        return float_values(columns[name].combine_chunks())

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

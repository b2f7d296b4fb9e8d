"""The score file's columns built from their buffers (no pandas import) are the arrays
``pa.array`` builds, and the file holds the same bytes."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest

from medlens.analysis.score_file import table_columns
from medlens.analysis.score_table import ScoreTable
from medlens.runs.arrow import arrow_floats, arrow_strings


def ipc_bytes(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_file(sink, table.schema) as writer:
        writer.write_table(table)
    return bytes(sink.getvalue().to_pybytes())


STRINGS = [
    [], [""], ["A"], ["", "", ""], ["Drusen", "答案是B", "ü", "a\tb\nc", "\x00", "😀" * 3],
    [str(n) for n in range(1000)],
]  # fmt: skip


@pytest.mark.parametrize("values", STRINGS)
def test_strings_are_the_array_pa_array_builds(values: list[str]) -> None:
    ours, theirs = arrow_strings(values), pa.array(values, type=pa.string())
    assert ours.equals(theirs) and ours.null_count == 0
    assert ipc_bytes(pa.table({"s": ours})) == ipc_bytes(pa.table({"s": theirs}))


def test_text_pa_array_refuses_is_still_refused_by_it() -> None:
    with pytest.raises(UnicodeEncodeError):
        arrow_strings(["ok", "\ud800"])


@pytest.mark.parametrize(
    "values",
    [np.array([]), np.array([0.5, np.nan, 1.0, -0.0, np.inf]), np.arange(10.0)[::2],
     np.array([1, 0], dtype=np.float32)],
)  # fmt: skip
def test_floats_are_the_array_pa_array_builds(values: np.ndarray) -> None:
    ours, theirs = arrow_floats(values), pa.array(values, type=pa.float64())
    assert ours.null_count == theirs.null_count == 0
    assert ipc_bytes(pa.table({"f": ours})) == ipc_bytes(pa.table({"f": theirs}))


def test_a_score_table_is_written_as_pa_array_and_pa_table_wrote_it() -> None:
    rng = random.Random(3)
    n = 500
    table = ScoreTable(
        ids=[f"id-{k}" for k in range(n)],
        score=np.array([rng.choice([0.0, 1.0, np.nan, 0.25]) for _ in range(n)]),
        vlmeval=np.array([rng.random() for _ in range(n)]),
        random=np.full(n, 0.25),
        status=np.array([rng.choice(["ok", "unparsed", "error"]) for _ in range(n)], dtype=object),
        cluster=np.array([f"img{k // 3}" for k in range(n)], dtype=object),
        meta={"task": np.array([rng.choice(["", "分类", "x"]) for _ in range(n)], dtype=object)},
        secondary={"token_f1": np.array([rng.random() for _ in range(n)])},
        secondary_random={"token_f1": np.full(n, np.nan)},
        finish=np.array(["", "length"] * (n // 2), dtype=object),
    )
    ours = table_columns(table)
    strings = {"status", "cluster", "finish", "meta:task", "id"}
    theirs = pa.table(
        {
            name: pa.array(
                ours[name].to_pylist() if name in strings else ours[name].to_numpy(),
                type=ours[name].type,
            )
            for name in ours.column_names
        }
    )
    assert ipc_bytes(ours) == ipc_bytes(theirs)

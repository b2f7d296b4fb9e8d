"""A few fields of every value of a JSON-lines file, as columns: read fast by pyarrow where that
is provably the same as the exact reading, and built from the exact reading otherwise.

The exact reading is the store's (:mod:`medlens.runs.files` parses each line with the standard
parser's rules; the store keeps each key's latest value). pyarrow's JSON reader is ten times
faster but reads some files otherwise, so :func:`fast_columns` takes it only when none of these
holds (each was found by ``tests/runs/test_view_columns.py``):

- a torn last line (a kill mid-write): the store drops it, pyarrow reads it when it is whole;
- a digit run of 19 or more (an integer beyond 64 bits): pyarrow rounds it through its own
  parser, Python's ``float(int)`` rounds it once (the last digit can differ);
- a line that is not one object (blank, two objects, a byte-order mark): pyarrow skips or splits
  it, the store skips or marks it damaged;
- a bare ``Inf``, ``-Inf`` or ``-NaN``, which pyarrow accepts and the standard parser refuses;
- a repeated or missing key, or a field of another type than asked (pyarrow refuses it; the
  exact columns hold a null there);
- text pyarrow refuses (a lone surrogate escape, a number beyond the float range).

A field is a dotted path into the value (``verdict.scores.consistency``) and a kind: ``str``
(text; anything else is null) or ``float`` (a number, never a boolean; anything else is null).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from medlens.runs.files import has_long_digit_run

Kind = Literal["str", "float"]
STR: Kind = "str"
FLOAT: Kind = "float"


@dataclass(frozen=True)
class Floats:
    """A float column: its values (NaN where null) and which rows hold a number (a NaN read
    from the file is a number)."""

    values: np.ndarray
    present: np.ndarray


@dataclass(frozen=True)
class Columns:
    """The asked fields of each value, in the order of its key's first line."""

    keys: list[str]
    strings: dict[str, list[str | None]]
    floats: dict[str, Floats]
    fast: bool
    """True when pyarrow read them (for tests and benches; the values are the same)."""

    def __len__(self) -> int:
        return len(self.keys)


def _at(value: Any, path: Sequence[str]) -> Any:
    for part in path:
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def exact_columns(
    values: Iterable[Mapping[str, Any]], key: str, fields: Mapping[str, Kind]
) -> Columns:
    """The columns of `values` (one per key, as the store kept them)."""
    rows = list(values)
    paths = {name: name.split(".") for name in fields}
    strings: dict[str, list[str | None]] = {}
    floats: dict[str, Floats] = {}
    for name, kind in fields.items():
        found = [_at(row, paths[name]) for row in rows]
        if kind == STR:
            strings[name] = [v if isinstance(v, str) else None for v in found]
            continue
        present = np.array(
            [isinstance(v, (int, float)) and not isinstance(v, bool) for v in found], dtype=bool
        )
        numbers = np.full(len(rows), np.nan)
        for i in np.flatnonzero(present).tolist():
            numbers[i] = float(found[i])
        floats[name] = Floats(numbers, present)
    return Columns([str(row[key]) for row in rows], strings, floats, fast=False)


def fast_columns(whole: bytes, key: str, fields: Mapping[str, Kind]) -> Columns | None:
    """The columns of a file's bytes read by pyarrow, or None where that reading could differ
    from the exact one (the module docstring lists when)."""
    if not whole or not whole.endswith(b"\n") or not _plain(whole):
        return None
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.json as pajson

    lines = whole.count(b"\n")
    if whole.count(b"\n{") + whole.startswith(b"{") != lines:
        return None
    schema = pa.schema([(key, pa.string()), *_arrow_fields(fields)])
    options = pajson.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore")
    try:
        table = pajson.read_json(pa.BufferReader(whole), parse_options=options)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OSError):
        return None
    keys = table[key].combine_chunks()
    if table.num_rows != lines or keys.null_count or pc.count_distinct(keys).as_py() != lines:
        return None
    strings: dict[str, list[str | None]] = {}
    floats: dict[str, Floats] = {}
    for name, kind in fields.items():
        column = _field(table, name)
        if kind == STR:
            strings[name] = column.to_pylist()
        else:
            floats[name] = _floats_of(column)
    return Columns(keys.to_pylist(), strings, floats, fast=True)


_LENIENT = (b"Inf", b"-NaN")
"""Bare words pyarrow reads as numbers and the standard parser refuses (``Infinity`` it reads
too, as both do)."""


def _plain(whole: bytes) -> bool:
    """No digit run of 19 or more, and no bare word only pyarrow reads (a quoted one, as in
    "Infarct", is text: it is only looked at when a ``:``, ``,`` or ``[`` stands before it)."""
    if has_long_digit_run(whole) or b"-NaN" in whole:
        return False
    start = whole.find(b"Inf")
    while start >= 0:
        if not whole.startswith(b"Infinity", start) and _after_separator(whole, start):
            return False
        start = whole.find(b"Inf", start + 3)
    return True


def _after_separator(whole: bytes, start: int) -> bool:
    """True when a JSON separator (``:`` ``,`` ``[``, then blanks and an optional ``-``) stands
    right before `start`: where a bare value would begin."""
    at = start - 1
    if at >= 0 and whole[at] == ord("-"):
        at -= 1
    while at >= 0 and whole[at] in b" \t\r":
        at -= 1
    return at >= 0 and whole[at] in b":,["


def _arrow_fields(fields: Mapping[str, Kind]) -> list[Any]:
    """The nested pyarrow fields of dotted paths (``a.b`` and ``a.c`` share the struct ``a``)."""
    import pyarrow as pa

    tree: dict[str, Any] = {}
    for name, kind in fields.items():
        *parents, leaf = name.split(".")
        node = tree
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = pa.string() if kind == STR else pa.float64()

    def build(node: dict[str, Any]) -> list[Any]:
        return [
            pa.field(k, pa.struct(build(v)) if isinstance(v, dict) else v) for k, v in node.items()
        ]

    return build(tree)


def _field(table: Any, name: str) -> Any:
    import pyarrow.compute as pc

    first, *rest = name.split(".")
    column = table[first].combine_chunks()
    for part in rest:
        column = pc.struct_field(column, part)
    return column


def _floats_of(column: Any) -> Floats:
    from medlens.runs.arrow import arrow_numbers, valid_rows

    return Floats(arrow_numbers(column).astype(float), valid_rows(column))

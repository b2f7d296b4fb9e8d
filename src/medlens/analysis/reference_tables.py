"""Published reference tables: the ones medlens ships, and a user's own ``FILE.csv``.

A table is a CSV with one row per published model: ``model``, ``split`` (the split the numbers
are on: ``val``, ``test``), ``selection`` (empty: the whole split; otherwise the item selection
the numbers cover, written as medlens writes a run's selection, e.g. ``where modality=CT``),
then one column per published score. Descriptive text columns (``source`` — where the row was
published —, ``medical``, ``tier``, ``content_hash``, ``official_md5`` — the MD5s of the official
files, space-separated) and ``n_items`` (the published item count) may appear anywhere; every
other cell must be a number or empty. Every row must say which item set it was computed on
(``n_items``, ``content_hash`` or ``official_md5``): a table that does not cannot be compared
like for like, and is refused naming the file and line. Scores are kept exactly as
printed and divided by the table's scale (100 when any score exceeds 1: percentages; else 1),
so every score is in [0, 1] (Δ columns in [−1, 1]).

Shipped tables (``medlens/data/references/``) and their citations:

- ``gmai-val``, ``gmai-test``: GMAI-MMBench's leaderboard (30 rows each, overall accuracy), with
  the official files' MD5s (VLMEvalKit's ``DATASET_MD5``: the VAL TSV; TEST as its 11 parts);
- ``medcmr``: Med-CMR's main table (7 models × SOD … MSI, mcq_all, open_all; 20,653 items:
  16,655 MCQ + 3,998 open);
- ``mmbu``: MMBU's main table (17 models + Random; closed/open micro-F1 and Δ of 4 tasks), on
  the published evaluation's 77,358 items (the Hub set ``ryandcunha/mmbu``; the paper's "78K");
  the public split (``mmbu/mmbu-public``, 3,103 open rows) is named when a run holds it;
- the MMBU base vs medical-adapted table (``mmbu-pairs.csv``, :func:`load_pair_table`).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from medlens.core.errors import InputError, SpecError

REFERENCE_NAMES = ("gmai-val", "gmai-test", "medcmr", "mmbu")
KEY_COLUMNS = ("model", "split", "selection")
TEXT_COLUMNS = ("source", "medical", "tier", "content_hash", "official_md5")
COUNT_COLUMN = "n_items"
IDENTITY_COLUMNS = (COUNT_COLUMN, "content_hash", "official_md5")
"""What tells a run on the published item set apart: every row needs one of them."""

GMAI_CITATION = (
    "GMAI-MMBench (NeurIPS 2024 Datasets and Benchmarks), leaderboard of uni-medical/GMAI-MMBench "
    "README.md (commit df685478, 2024-10-15)"
)
MEDCMR_CITATION = "Med-CMR (CVPR 2026), arXiv:2512.00818, main table"
MMBU_CITATION = "MMBU (ECCV 2026), arXiv:2606.06696, main table"


@dataclass(frozen=True)
class Shipped:
    file: str
    layout: str
    benchmarks: tuple[str, ...]
    """Loaders whose runs the table speaks for (VLMEvalKit TSVs may hold GMAI-MMBench)."""
    citation: str
    n_items: int | None = None
    column_items: dict[str, int] = field(default_factory=dict)
    """Published item counts of single columns (Med-CMR: 16,655 MCQ, 3,998 open)."""
    named_counts: dict[int, str] = field(default_factory=dict)
    """Item counts of other known sets of the benchmark, named in a refusal."""


SHIPPED = {
    "gmai-val": Shipped("gmai-val.csv", "gmai", ("gmai", "vlmeval"), GMAI_CITATION),
    "gmai-test": Shipped("gmai-test.csv", "gmai", ("gmai", "vlmeval"), GMAI_CITATION),
    "medcmr": Shipped(
        "medcmr.csv",
        "medcmr",
        ("medcmr",),
        MEDCMR_CITATION,
        20653,
        {"mcq_all": 16655, "open_all": 3998},
    ),
    "mmbu": Shipped(
        "mmbu.csv",
        "mmbu",
        ("mmbu",),
        MMBU_CITATION,
        77358,
        named_counts={3103: "the public split (mmbu/mmbu-public, 3,103 open rows)"},
    ),
}


@dataclass(frozen=True)
class ReferenceRow:
    model: str
    split: str
    selection: str
    values: dict[str, float | None]
    """Column → score in [0, 1] (Δ in [−1, 1]); None for an empty cell."""
    text: dict[str, str]
    """The row's descriptive columns (source, medical, tier …)."""
    line: int
    n_items: int | None = None


@dataclass(frozen=True)
class ReferenceTable:
    name: str
    """The shipped table's name, or the file as the user gave it."""
    citation: str
    layout: str | None
    """The paper layout whose columns the table holds (None: a table of other columns)."""
    benchmarks: tuple[str, ...]
    """Loaders it speaks for; () for a user's file (checked by split, selection, items only)."""
    columns: tuple[str, ...]
    rows: tuple[ReferenceRow, ...]
    scale: float
    n_items: int | None = None
    column_items: dict[str, int] = field(default_factory=dict)
    named_counts: dict[int, str] = field(default_factory=dict)

    def source_of(self, row: ReferenceRow) -> str:
        return row.text.get("source") or self.citation


def is_reference_file(reference: str) -> bool:
    return reference not in SHIPPED and (
        reference.lower().endswith(".csv") or Path(reference).is_file()
    )


def load_reference(reference: str) -> ReferenceTable:
    """A shipped table by name, or a user's ``FILE.csv``; a bad file names line and column."""
    from medlens.analysis.paper_columns import layout_of_columns

    if reference in SHIPPED:
        shipped = SHIPPED[reference]
        text = (
            resources.files("medlens")
            .joinpath(f"data/references/{shipped.file}")
            .read_text("utf-8")
        )
        columns, rows, scale = parse_table(text, f"references/{shipped.file}")
        return ReferenceTable(reference, shipped.citation, shipped.layout, shipped.benchmarks,
                              columns, rows, scale, shipped.n_items, shipped.column_items,
                              shipped.named_counts)  # fmt: skip
    if not is_reference_file(reference):
        raise SpecError(
            f"--reference {reference!r}: unknown reference "
            f"(known: {', '.join(REFERENCE_NAMES)}; or a FILE.csv)"
        )
    path = Path(reference)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(path, None, f"cannot read the reference table ({exc})") from None
    columns, rows, scale = parse_table(text, str(path))
    counts = {r.n_items for r in rows if r.n_items is not None}
    return ReferenceTable(
        reference, f"user table {path.name}", layout_of_columns(list(columns)), (), columns,
        rows, scale, counts.pop() if len(counts) == 1 else None,
    )  # fmt: skip


def parse_table(text: str, where: str) -> tuple[tuple[str, ...], tuple[ReferenceRow, ...], float]:
    """(score columns, rows, scale) of a reference CSV; InputError naming line and column."""
    lines = list(csv.reader(io.StringIO(text)))
    if not lines or not any(cell.strip() for cell in lines[0]):
        raise InputError(
            where, None, "empty file (a header with model, split, selection is needed)"
        )
    header = [h.strip() for h in lines[0]]
    for needed in KEY_COLUMNS:
        if needed not in header:
            raise InputError(
                where, "line 1", f"no {needed!r} column (columns: {', '.join(header)})"
            )
    score_columns = [
        h for h in header if h and h not in (*KEY_COLUMNS, *TEXT_COLUMNS, COUNT_COLUMN)
    ]
    if not score_columns:
        raise InputError(where, "line 1", "no score column after model, split, selection")
    raw = []
    seen: dict[tuple[str, str, str], int] = {}
    for number, cells in enumerate(lines[1:], start=2):
        if not any(cell.strip() for cell in cells):
            continue
        if len(cells) > len(header):
            raise InputError(
                where, f"line {number}", f"{len(cells)} cells but {len(header)} columns"
            )
        row = {h: (cells[i].strip() if i < len(cells) else "") for i, h in enumerate(header)}
        if not row["model"]:
            raise InputError(where, f"line {number}, column 'model'", "empty")
        key = (row["model"].casefold(), row["split"], row["selection"])
        if key in seen:
            raise InputError(where, f"line {number}, column 'model'",
                             f"{row['model']!r} again (line {seen[key]}) with the same split and selection")  # fmt: skip
        seen[key] = number
        raw.append((number, row, {c: _number(where, number, c, row[c]) for c in score_columns}))
    if not raw:
        raise InputError(where, None, "no rows under the header")
    present = [abs(v) for _, _, values in raw for v in values.values() if v is not None]
    scale = 100.0 if present and max(present) > 1.0 else 1.0
    rows = tuple(_row(where, number, row, values, scale) for number, row, values in raw)
    return tuple(score_columns), rows, scale


def _number(where: str, line: int, column: str, text: str) -> float | None:
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise InputError(where, f"line {line}, column {column!r}", f"{text!r} is not a number")
    return value


def _row(
    where: str, line: int, row: dict[str, str], values: dict[str, float | None], scale: float
) -> ReferenceRow:
    scaled = {c: None if v is None else v / scale for c, v in values.items()}
    for column, value in scaled.items():
        if value is not None and not -1.0 <= value <= 1.0:
            raise InputError(where, f"line {line}, column {column!r}",
                             f"{values[column]:g} is outside 0–{scale:g}")  # fmt: skip
    count = row.get(COUNT_COLUMN, "")
    if count and not count.isdigit():
        raise InputError(
            where, f"line {line}, column {COUNT_COLUMN!r}", f"{count!r} is not a count"
        )
    text = {c: row[c] for c in TEXT_COLUMNS if row.get(c)}
    if not count and not text.get("content_hash") and not text.get("official_md5"):
        raise InputError(
            where, f"line {line}",
            f"no item set: give {', '.join(IDENTITY_COLUMNS)} (medlens cannot tell whether a "
            "run is on the published items without one)",
        )  # fmt: skip
    return ReferenceRow(row["model"], row["split"], row["selection"], scaled, text, line,
                        int(count) if count else None)  # fmt: skip


def find_row(table: ReferenceTable, model: str, split: str | None = None) -> ReferenceRow:
    """The one row for `model` (case-insensitive), narrowed by `split` when it has several."""
    wanted = model.casefold()
    matches = [row for row in table.rows if row.model.casefold() == wanted]
    if not matches:
        known = ", ".join(sorted({row.model for row in table.rows}))
        raise SpecError(f"--as {model!r}: no such model in reference {table.name} (known: {known})")
    if split is not None:
        matches = [row for row in matches if row.split == split]
    if len(matches) != 1:
        splits = ", ".join(f"{r.split} {r.selection or 'whole split'}" for r in matches) or "none"
        raise SpecError(f"--as {model!r} in {table.name}: choose one row with --split ({splits})")
    return matches[0]


@dataclass(frozen=True)
class PairRow:
    base: str
    adapted: str
    base_f1: float
    adapted_f1: float
    change: float
    source: str


def load_pair_table() -> list[PairRow]:
    """MMBU's base vs medical-adapted table (closed unanchored classification F1)."""
    text = resources.files("medlens").joinpath("data/references/mmbu-pairs.csv").read_text("utf-8")
    return [
        PairRow(r["base"], r["adapted"], float(r["base_unanchored_closed_f1"]),
                float(r["adapted_unanchored_closed_f1"]), float(r["change"]), r["source"])
        for r in csv.DictReader(io.StringIO(text))
    ]  # fmt: skip


def published_cells(table: ReferenceTable, columns: Sequence[str]) -> list[dict[str, object]]:
    """Layout rows of the published models: ``{"model", "published": True, "source",
    "cells": {COL: {"value"}}}`` (cells the table does not hold are left out)."""
    return [
        {"model": row.model, "published": True, "source": table.source_of(row),
         "cells": {c: {"value": row.values[c]} for c in columns
                   if c in row.values and row.values[c] is not None}}
        for row in table.rows
    ]  # fmt: skip

"""`medlens ratings import`: filled sheets into ``runs/<run>/ratings/<name>.jsonl``.

Append-only and idempotent: each stored line carries a hash of what the rater wrote for that item
(study, id, rater, metadata, ratings), so importing the same sheet twice adds nothing and a rater's
corrected sheet adds the new lines (the latest line per study, item and rater counts). Every row
is checked before anything is written: a refused import stores nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medlens.core.errors import InputError, MedlensError
from medlens.ratings.sheets import FilledSheet, read_sheet
from medlens.ratings.study import Study, load_study
from medlens.runs.files import canonical_json
from medlens.runs.layout import is_run
from medlens.runs.ratings import (
    append_rating_lines,
    ratings_file,
    read_rating_lines,
    study_files,
    study_json,
)
from medlens.runs.ratings import keep_sheet as keep_sheet_copy
from medlens.runs.reading import read_run_file
from medlens.runs.view import RunView

RatingLine = dict[str, Any]


@dataclass(frozen=True)
class ImportResult:
    study: Study
    rows: int
    """Rated rows in the sheet."""
    added: int
    """New lines stored (0 when the sheet was imported before)."""
    path: Path


def import_sheet(run_dir: Path, file: Path) -> ImportResult:
    read_run_file(run_dir)  # a clear error if RUN is not a run
    sheet = read_sheet(file)
    study = _sheet_study(run_dir, sheet)
    _check_columns(sheet, study)
    _check_pair(study, file)
    lines = [line for row, cells in sheet.rows if (line := _row_line(sheet, study, row, cells))]
    path = ratings_file(run_dir, study.name)
    with ratings_lock(run_dir):
        known = {line["key"] for line in read_ratings(run_dir, study.name)}
        new = [line for line in lines if line["key"] not in known]
        new = list({line["key"]: line for line in new}.values())
        append_rating_lines(run_dir, study.name, new)
        if new:
            keep_sheet(run_dir, study, file)
    return ImportResult(study, len(lines), len(new), path)


def keep_sheet(run_dir: Path, study: Study, file: Path) -> Path:
    """A copy of the raw sheet as filled (``ratings/sheets/<study>-<sha256[:16]><suffix>``)."""
    digest = hashlib.sha256(file.read_bytes()).hexdigest()[:16]
    return keep_sheet_copy(run_dir, study.id, file, digest)


@contextlib.contextmanager
def ratings_lock(run_dir: Path) -> Iterator[None]:
    """The run directory's write lock while ratings are stored (one writer per run)."""
    from medlens.runs.lock import hold_run_lock

    with hold_run_lock(Path(run_dir), "medlens ratings import"):
        yield


def read_ratings(run_dir: Path, name: str) -> list[RatingLine]:
    """Stored lines (``runs.ratings``: a torn last line is ignored unless it is whole)."""
    return read_rating_lines(run_dir, name)


def latest_ratings(lines: list[RatingLine], study_ids: set[str] | None = None) -> list[RatingLine]:
    """The latest line per (study, item, rater)."""
    latest: dict[tuple[str, str, str], RatingLine] = {}
    for line in lines:
        if study_ids is None or line["study"] in study_ids:
            latest[(line["study"], line["id"], line["rater"])] = line
    return list(latest.values())


def _sheet_study(run_dir: Path, sheet: FilledSheet) -> Study:
    for column in ("study", "id"):
        if column not in sheet.header:
            problem = f"no {column!r} column (was this sheet exported by medlens ratings?)"
            raise InputError(sheet.path, f"row 1, column {column!r}", problem)
    if not sheet.rows:
        raise InputError(sheet.path, "row 2", "the sheet has no rows")
    first_row, first = sheet.rows[0]
    study = load_study(run_dir, first["study"], sheet.path, first_row)
    for row, cells in sheet.rows:
        if cells.get("study") != study.id:
            problem = f"study {cells.get('study')!r} differs from row {first_row}'s {study.id!r}"
            raise InputError(sheet.path, f"row {row}, column 'study'", problem)
    return study


def _check_columns(sheet: FilledSheet, study: Study) -> None:
    for axis in study.protocol.axes:
        if axis.name not in sheet.header:
            raise InputError(sheet.path, f"row 1, column {axis.name!r}", "column missing")


def _check_pair(study: Study, file: Path) -> None:
    """A side-by-side sheet's second run must still be the run it was exported with."""
    if study.kind != "pairwise":
        return
    run_b = Path(study.extra["run_b"])
    if is_run(run_b):
        now = RunView(run_b).run.get("spec_hash")
        if now != study.extra["run_b_hash"]:
            problem = f"run B {run_b} changed since this sheet was exported (spec hash differs)"
            raise InputError(file, "row 1, column 'study'", problem)


def _row_line(
    sheet: FilledSheet, study: Study, row: int, cells: dict[str, str]
) -> RatingLine | None:
    """The stored line of one sheet row; None for a row nobody rated."""
    if cells["id"] not in set(study.items):
        problem = f"id {cells['id']!r} is not an item of study {study.id}"
        raise InputError(sheet.path, f"row {row}, column 'id'", problem)
    ratings: dict[str, str] = {}
    values: dict[str, float] = {}
    for axis in study.protocol.axes:
        cell = cells.get(axis.name, "")
        if not cell:
            continue
        value = axis.parse(cell)
        if value is None:
            problem = f"{cell!r} is not an allowed value (allowed: {axis.allowed()})"
            raise InputError(sheet.path, f"row {row}, column {axis.name!r}", problem)
        ratings[axis.name], values[axis.name] = axis.label_of(value), value
    if not ratings:
        return None
    rater = cells.get("rater") or cells.get("rater_id") or ""
    if not rater:
        raise InputError(sheet.path, f"row {row}, column 'rater'", "a rated row needs a rater id")
    line: RatingLine = {
        "study": study.id, "id": cells["id"], "rater": rater,
        "qualification": cells.get("qualification", ""), "date": cells.get("date", ""),
        "comment": cells.get("comment", ""), "ratings": ratings, "values": values,
    }  # fmt: skip
    line["key"] = hashlib.sha256(canonical_json(line).encode()).hexdigest()[:24]
    line["file"], line["row"] = sheet.path.name, row
    return line


def studies_of(run_dir: Path, name: str) -> list[Study]:
    """Every study stored under ``ratings/<name>.jsonl`` in this run."""
    out = []
    for path in study_files(run_dir):
        try:
            study = Study.from_json(study_json(path))
        except (ValueError, KeyError, TypeError) as exc:
            raise MedlensError(f"{path}: unreadable study file ({exc})") from None
        if study.name == name:
            out.append(study)
    return out

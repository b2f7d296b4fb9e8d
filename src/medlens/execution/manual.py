"""Answers a person entered by hand, recorded as such: ``run --manual FILE``.

Some answers are not asked through medlens: a model only reachable in a chat window, an item a
provider refuses through its API but answers in its app, a clinician's answer typed from a
paper sheet. FILE (``.csv``, ``.tsv`` or ``.xlsx``) has one row per item: ``index`` (the item
id), ``answer`` (the text as entered), ``entered_by`` (who typed it), optionally ``note``.
Those items are never sent to the model: the entered text is read and scored as a model's
answer would be, and its record carries ``manual: {entered_by, note}``; the spec records the
file's name, sha256 and row count (an edited file refuses to resume), and results count the
manual answers per person (``results["manual"]``), which every report prints. A row naming no
item of the benchmark, a repeated index, an empty answer or ``entered_by``: one line naming the
file, row and column, exit 2, nothing written.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medlens.core.errors import InputError, SpecError
from medlens.core.items import Item
from medlens.models.base import Request, Response
from medlens.models.prediction_table import read_columns

REQUIRED = ("index", "answer", "entered_by")


@dataclass(frozen=True)
class ManualEntry:
    answer: str
    entered_by: str
    note: str = ""


@dataclass(frozen=True)
class ManualAnswers:
    name: str
    sha256: str
    entries: Mapping[str, ManualEntry]

    def to_spec(self) -> dict[str, Any]:
        return {"file": self.name, "sha256": self.sha256, "items": len(self.entries)}


def load_manual(path_text: str, items: Iterable[Item]) -> ManualAnswers:
    """The entries of FILE, each naming an item of the run (one-line errors otherwise)."""
    path = Path(path_text).expanduser()
    if not path.is_file():
        raise InputError(path, None, "no such file (--manual: index, answer, entered_by[, note])")

    def choose(header: list[str]) -> list[str]:
        for column in REQUIRED:
            if column not in header:
                raise InputError(path, "line 1", f"no column {column!r} (columns: "
                                 f"{', '.join(REQUIRED)}, optionally note)")  # fmt: skip
        return [*REQUIRED, *(["note"] if "note" in header else [])]

    columns = read_columns(path, choose)
    ids = {item.id for item in items}
    entries: dict[str, ManualEntry] = {}
    for row, index in enumerate(columns["index"]):
        where = f"row {row + 2}"
        key = str(index).strip()
        if key not in ids:
            raise InputError(path, f"{where}, column 'index'", f"{key!r} is no item of this run")
        if key in entries:
            raise InputError(path, f"{where}, column 'index'", f"{key!r} entered twice")
        cells = {
            c: str(columns[c][row] if c in columns else "").strip() for c in (*REQUIRED, "note")
        }
        for column in ("answer", "entered_by"):
            if not cells[column]:
                raise InputError(path, f"{where}, column {column!r}", "empty")
        entries[key] = ManualEntry(cells["answer"], cells["entered_by"], cells["note"])
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return ManualAnswers(path.name, digest, entries)


class WithManualAnswers:
    """The run's model, except for the items a person answered: their entered text."""

    def __init__(self, model: Any, manual: ManualAnswers) -> None:
        self._model = model
        self._manual = manual
        self.spec = model.spec

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)

    async def generate(self, request: Request) -> Response:
        entry = self._manual.entries.get(request.item.id)
        if entry is None:
            return await self._model.generate(request)
        return Response(
            text=entry.answer, manual={"entered_by": entry.entered_by, "note": entry.note}
        )

    async def aclose(self) -> None:
        await self._model.aclose()


def check_executor(manual: str | None, executor: str) -> None:
    if manual and executor == "ray":
        raise SpecError("--manual answers are read by the local executor; drop --executor ray")


def manual_summary(records: Iterable[Mapping[str, Any]]) -> dict[str, Any] | None:
    """``{"n", "by": {person: n}}`` of the records entered by hand (None: there are none)."""
    by = Counter(str(r["manual"].get("entered_by")) for r in records if r.get("manual"))
    return {"n": sum(by.values()), "by": dict(sorted(by.items()))} if by else None


def manual_text(summary: Mapping[str, Any], total: int) -> str:
    people = ", ".join(f"{name} {n}" for name, n in summary["by"].items())
    return (f"answers entered by hand (--manual): {summary['n']} of {total} items (by {people}); "
            "read and scored as the model's answers are")  # fmt: skip

"""What the two human-in-the-loop build steps share: the draft record kept beside a sheet, the
sheet's cells as the builder sees them, and reviewed questions made into benchmark items.

A drafting command writes a sheet for people (``.xlsx``/``.csv``, through ``ratings.sheets``,
wired by the CLI) and a *draft record* beside it (``<sheet>.draft.json`` for a review sheet,
``<sheet>.picks.json`` for a pick sheet): what was drafted, by which model, from which labels.
Its id is in every sheet row (column ``draft``), so a filled sheet is checked against the very
draft it came from: a row the draft does not hold is refused.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from medlens.builder.output import Entry, Picture
from medlens.builder.questions import LETTERS, BalancedLetters
from medlens.core.errors import InputError
from medlens.core.items import Item


class FilledRows(Protocol):
    """A filled sheet as text cells (``ratings.sheets.FilledSheet`` is one)."""

    @property
    def path(self) -> Path: ...

    @property
    def header(self) -> list[str]: ...

    @property
    def rows(self) -> list[tuple[int, dict[str, str]]]: ...


@dataclass(frozen=True)
class SheetContent:
    """A sheet to write: header, rows, the instructions sheet and drop-down choices."""

    header: Sequence[str]
    rows: Sequence[Sequence[Any]]
    instructions: Sequence[Sequence[Any]]
    choices: Mapping[str, Sequence[str]] = field(default_factory=dict)


def record_id(record: Mapping[str, Any]) -> str:
    """A draft record's id: the first 12 hex digits of the sha256 of its canonical JSON."""
    text = json.dumps(record, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]


def record_bytes(record: Mapping[str, Any]) -> bytes:
    return (json.dumps(record, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def read_record(path: Path, kind: str) -> dict[str, Any]:
    """A draft record of `kind` (``review`` or ``picks``), or one line naming what is wrong."""
    if not path.is_file():
        hint = "it is written beside the sheet by the drafting step; give --draft FILE"
        raise InputError(path, None, f"no such draft record ({hint})")
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(path, None, f"unreadable draft record ({exc})") from None
    if not isinstance(record, dict) or record.get("kind") != kind or "rows" not in record:
        raise InputError(path, "field 'kind'", f"not a {kind} draft record of medlens build")
    return record


def check_columns(sheet: FilledRows, columns: Sequence[str]) -> None:
    """Refuse a sheet without one of `columns` (the first missing one named)."""
    for column in columns:
        if column not in sheet.header:
            raise InputError(sheet.path, f"row 1, column {column!r}", "column missing")


def check_draft_ids(sheet: FilledRows, draft_id: str, record_path: Path) -> None:
    for number, cells in sheet.rows:
        if cells.get("draft") != draft_id:
            problem = (f"draft {cells.get('draft')!r}: this row is not from the draft "
                       f"{draft_id} in {record_path}")  # fmt: skip
            raise InputError(sheet.path, f"row {number}, column 'draft'", problem)


def pictures_folder(sheet: Path) -> Path:
    """Where a sheet's pictures lie: ``<sheet stem>-images/`` beside it."""
    return sheet.with_name(sheet.stem + "-images")


def picture_names(rows: Iterable[Mapping[str, Any]], sheet: Path) -> dict[str, str]:
    """Source image path → the sheet-relative name of its PNG copy (``<stem>-images/x.png``):
    reviewers see the very picture the item will show, and the sheet travels with its folder."""
    folder = pictures_folder(sheet).name
    names: dict[str, str] = {}
    used: set[str] = set()
    for row in rows:
        if row["image_path"] in names:
            continue
        base = re.sub(r"[^A-Za-z0-9._-]+", "_", str(Path(row["image"]).with_suffix("")))
        base = base.strip("._") or "image"
        name, k = f"{base}.png", 1
        while name in used:
            k += 1
            name = f"{base}-{k}.png"
        used.add(name)
        names[row["image_path"]] = f"{folder}/{name}"
    return names


def picture_png(image_path: str, source: str, where: str) -> bytes:
    """The PNG an item built from this image shows (as ``medlens build`` renders it)."""
    from medlens.builder.images import png_bytes
    from medlens.builder.readers import UnreadableImage, read_image

    try:
        return png_bytes(read_image(Path(image_path)))
    except (UnreadableImage, OSError) as exc:
        raise InputError(source, f"{where}, field 'image'", f"{image_path}: {exc}") from None


@dataclass(frozen=True)
class Question:
    """A reviewed question ready to become a single-answer choice item."""

    id: str
    question: str
    gold: str
    wrong: tuple[str, ...]
    image_path: str
    image: str
    """The image as the labels file named it (the item's ``image_id``)."""
    meta: Mapping[str, str]


class ItemMaker:
    """Reviewed questions → entries for ``write_benchmark``: seeded option order with gold
    letters balanced per option count (as ``medlens build`` balances them), one PNG per image."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._letters: dict[int, BalancedLetters] = {}
        self._names: dict[str, str] = {}

    def entries(self, questions: Sequence[Question], source: Path) -> Iterator[Entry]:
        for question in questions:
            yield self.entry(question, source)

    def entry(self, question: Question, source: Path) -> Entry:
        k = len(question.wrong) + 1
        if k > len(LETTERS):
            raise InputError(source, f"row {question.id!r}", f"{k} options: at most {len(LETTERS)}")
        rng = random.Random(f"{self.seed}:{question.id}")
        texts = list(question.wrong)
        rng.shuffle(texts)
        letters = self._letters.setdefault(k, BalancedLetters(k, random.Random(f"{self.seed}:{k}")))
        position = letters.next()
        texts.insert(position, question.gold)
        options = {LETTERS[i]: text for i, text in enumerate(texts)}
        meta = {**question.meta, "image_id": question.image, "granularity": "image",
                "answer_type": "closed"}  # fmt: skip
        item = Item(id=question.id, question=question.question, kind="choice", options=options,
                    answer=LETTERS[position], meta=meta)  # fmt: skip
        return item, (self._picture(question, source),)

    def _picture(self, question: Question, source: Path) -> Picture:
        name = self._names.setdefault(question.image_path, f"i{len(self._names) + 1:05d}.png")
        where = f"row {question.id!r}"
        return Picture(name, lambda: picture_png(question.image_path, str(source), where))

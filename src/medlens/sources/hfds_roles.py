"""Which column of a Hugging Face table plays which role, and how a row becomes an Item.

Roles are found by name (case, spaces, ``-`` and ``_`` ignored) through the aliases below; the
spec's ``?question=&answer=&image=&options=&id=`` options name a column outright (``answer=``
empty: the split has no answers). Kinds follow the native loaders: options (an ``options`` list or
object, or ``A``/``option_A``/``Choice A`` columns) make a ``choice`` item (``multi_choice`` for
``AC`` / ``A,C``; an integer answer is a 0-based option index), a yes/no answer a ``yes_no`` item,
any other answer an ``open`` one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medlens.core.errors import InputError, SpecError
from medlens.core.items import ImageRef, Item, ItemKind
from medlens.sources import native

ROLE_ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("id", "qid", "question_id", "index", "idx", "uid", "sample_id"),
    "question": ("question", "query", "prompt", "problem", "text"),
    "answer": ("answer", "answer_label", "gt_answer", "label", "correct_answer", "gold", "target"),
    "image": ("image", "img", "image_path", "img_path", "figure", "figure_path", "picture"),
    "options": ("options", "choices", "candidates"),
}
ROLES = tuple(ROLE_ALIASES)
_OPTION_COLUMN = re.compile(r"^(?:option|choice)?([a-j])$")


def fold(name: str) -> str:
    return re.sub(r"[\s_\-]+", "", name).lower()


@dataclass(frozen=True)
class Roles:
    """Column name per role (None: the table has none), plus the letter option columns."""

    id: str | None
    question: str
    answer: str | None
    image: str | None
    options: str | None
    option_columns: Mapping[str, str]
    """Letter → column (``A`` → ``Choice A``)."""

    def used(self) -> set[str]:
        named = {self.id, self.question, self.answer, self.image, self.options}
        return {c for c in named if c} | set(self.option_columns.values())


def find_roles(
    columns: Sequence[str], overrides: Mapping[str, str], defaults: Mapping[str, str], where: str
) -> Roles:
    """Columns per role: an override names one, else a preset default, else the first alias."""
    found: dict[str, str | None] = {}
    for role in ROLES:
        found[role] = _column_for(role, columns, overrides, defaults, where)
    if found["question"] is None:
        raise SpecError(_missing("question", columns, where))
    if found["answer"] is None and "answer" not in overrides:
        raise SpecError(
            _missing("answer", columns, where) + "; ?answer= (empty) reads a split without answers"
        )
    letters = {}
    if found["options"] is None:
        for column in columns:
            match = _OPTION_COLUMN.match(fold(column))
            if match and column not in found.values():
                letters[match.group(1).upper()] = column
    return Roles(found["id"], str(found["question"]), found["answer"], found["image"],
                 found["options"], dict(sorted(letters.items())))  # fmt: skip


def _column_for(
    role: str, columns: Sequence[str], overrides: Mapping[str, str], defaults: Mapping[str, str],
    where: str,
) -> str | None:  # fmt: skip
    if role in overrides:
        wanted = overrides[role]
        if not wanted:
            return None
        if wanted not in columns:
            raise SpecError(
                f"{where}: ?{role}={wanted}: no such column (columns: {', '.join(columns)})"
            )
        return wanted
    folded = {fold(c): c for c in columns}
    for alias in (defaults.get(role, ""), *ROLE_ALIASES[role]):
        if alias and fold(alias) in folded:
            return folded[fold(alias)]
    return None


def _missing(role: str, columns: Sequence[str], where: str) -> str:
    aliases = ", ".join(ROLE_ALIASES[role])
    return (f"{where}: no {role} column (searched {aliases}; columns: {', '.join(columns)}); "
            f"name it with ?{role}=COLUMN")  # fmt: skip


def row_options(record: Mapping[str, Any], roles: Roles, path: Path, where: str) -> dict[str, str]:
    """Options of a row: the options column (list, object or JSON text) or letter columns."""
    if roles.options is not None:
        return native.options_from({"options": record.get(roles.options)}, path, where)
    return {
        letter: str(record[column]).strip()
        for letter, column in roles.option_columns.items()
        if record.get(column) is not None and str(record[column]).strip()
        and str(record[column]).strip().lower() != "nan"
    }  # fmt: skip


def generic_item(
    record: Mapping[str, Any], roles: Roles, item_id: str, images: tuple[ImageRef, ...],
    axes: Mapping[str, str], path: Path, where: str,
) -> Item:  # fmt: skip
    """A row as an Item; unused columns go to ``meta`` as they are written."""
    question = native.text(record, roles.question, path, where)
    raw = record.get(roles.answer) if roles.answer else None
    options = row_options(record, roles, path, where)
    meta = native.native_meta(record, skip=tuple(roles.used()))
    meta.update(axes)
    if options:
        meta.setdefault("answer_type", "closed")
        answer = (
            None
            if raw is None
            else choice_answer(raw, options, path, f"{where}, field {roles.answer!r}")
        )
        kind: ItemKind = "multi_choice" if answer is not None and len(answer) > 1 else "choice"
        return Item(
            item_id, question, kind, options=options, answer=answer, images=images, meta=meta
        )
    answer_text = None if raw is None or not str(raw).strip() else str(raw).strip()
    if "answer_type" in meta:
        meta["answer_type"] = native.answer_type(meta["answer_type"], path, where)
    elif answer_text is not None:
        meta["answer_type"] = "closed" if native.yes_no(answer_text) else "open"
    return native.vqa_item(item_id, question, answer_text, images, meta)


def choice_answer(raw: Any, options: Mapping[str, str], path: Path, where: str) -> str:
    """The gold letter(s): a letter, ``AC``/``A,C``, an option's text, or a 0-based index."""
    if isinstance(raw, int) and not isinstance(raw, bool):
        letters = list(options)
        if not 0 <= raw < len(letters):
            raise InputError(path, where, f"index {raw} is outside the {len(letters)} options")
        return letters[raw]
    text = str(raw).strip()
    parts = [p for p in re.split(r"[\s,;]+", text) if p]
    if len(parts) > 1 and all(p in options for p in parts):
        return "".join(sorted(set(parts)))
    if len(text) > 1 and text.isupper() and all(ch in options for ch in text):
        return "".join(sorted(set(text)))
    return native.letter_of(options, text, path, where.rsplit(", field", 1)[0])

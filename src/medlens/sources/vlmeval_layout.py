"""A VLMEvalKit TSV's column layout, and how a row's gold answer, single/multi-answer marker and
granularity are read (as GMAI writes them)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from medlens.core.errors import InputError
from medlens.core.items import GRANULARITIES, ItemKind


@functools.lru_cache(maxsize=256)
def normalise_granularity(value: str) -> str:
    """``Box Level`` → ``box``; values outside image/box/mask/contour are kept as written."""
    word = re.sub(r"\s*level\s*$", "", value.strip(), flags=re.IGNORECASE).lower()
    return word if word in GRANULARITIES else value.strip()


def parse_gold(
    layout: TsvLayout, row: int, raw: str, options: dict[str, str], lenient: bool = False
) -> tuple[ItemKind, str]:
    """``(kind, answer)`` from a gold cell: ``B`` → choice; ``AC``, ``A,C``, ``A, C`` → ``AC``.

    Letters not among the options raise, unless `lenient` (they are kept, for the checklist).
    """
    if raw in options:  # the common case: one letter, as written
        return "choice", raw
    compact = re.sub(r"[\s,]+", "", raw)
    problem = None
    if not compact or compact.lower() == "nan":
        problem = "empty gold answer"
    letters = sorted(set(compact))
    if any(letter not in options for letter in letters) and not lenient:
        known = ", ".join(options) or "none"
        problem = problem or f"gold answer {raw.strip()!r} is not among the options ({known})"
    if problem:
        field = layout.names[layout.answer] if layout.answer is not None else "answer"
        raise InputError(layout.path, f"row {row}, field {field!r}", problem)
    return ("multi_choice" if len(letters) > 1 else "choice"), "".join(letters)


_MARKERS = {"*": "single", "#": "multi", "single": "single", "multi": "multi"}


def answer_mode(layout: TsvLayout, row: int, texts: list[str]) -> str | None:
    """``single``/``multi`` from the row's ``question_type`` marker; None without the column."""
    if layout.question_type is None:
        return None
    raw = texts[layout.question_type].strip()
    word = raw.lower().removesuffix("-choice").removesuffix("ple").removesuffix(" choice")
    if word in _MARKERS:
        return _MARKERS[word]
    field = layout.names[layout.question_type]
    problem = f"question type {raw!r} is neither '*' (single) nor '#' (multi)"
    raise InputError(layout.path, f"row {row}, field {field!r}", problem)


def _marked_kind(
    layout: TsvLayout, row: int, mode: str, answer: str | None, lenient: bool
) -> ItemKind:
    """The kind a marker gives; a single-marked item with two gold letters is refused."""
    if mode == "multi":
        return "multi_choice"
    if answer is not None and len(answer) > 1 and not lenient:
        field = layout.names[layout.question_type or 0]
        problem = f"marked single-answer ('*') but the gold answer {answer!r} has several letters"
        raise InputError(layout.path, f"row {row}, field {field!r}", problem)
    return "choice"


@dataclass(frozen=True)
class TsvLayout:
    """Which column holds what, read from the header row."""

    path: str
    names: tuple[str, ...]
    index: int
    question: int
    image: int
    answer: int | None
    hint: int | None
    options: tuple[tuple[str, int], ...]
    """Option letter → column, in letter order."""
    meta: tuple[tuple[str, int], ...]
    """``Item.meta`` key → column: every other column under its own name, then canonical axes."""
    question_type: int | None = None
    """GMAI's single/multi marker column (``*`` single, ``#`` multi), when present."""

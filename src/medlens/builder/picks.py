"""The annotators' pick sheet of distractor candidates, and the items built from the picks.

The sheet (columns :data:`COLUMNS`) lists per item first its gold answer (``role`` gold), then
every candidate (``role`` candidate) with the models that proposed it, and one pick column per
annotator (``pick_1`` … ``pick_N``, ``--annotators N``; an annotator may rename theirs
``pick_NAME``). An annotator marks exactly ``--options`` − 1 candidates per item (``x``, ``1`` or
``yes``; empty, ``0`` or ``no`` = not picked). Annotators may fill one shared file or each their
own copy: ``medlens build-from-picks SHEET [SHEET …] --output OUT.jsonl`` reads them all, an
annotator being a pick column with at least one mark (the same column filled in two files is
refused). Each item's distractors are its most-picked candidates, a tie at the cut broken by a
shuffle seeded with ``--seed`` and the item id; the item's meta records the votes, the
annotators' agreement (mean pairwise Jaccard of their pick sets) and the proposing models.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from itertools import combinations
from pathlib import Path
from typing import Any

from medlens.builder.model_calls import folded
from medlens.builder.reviewed import (
    FilledRows,
    Question,
    SheetContent,
    check_columns,
    check_draft_ids,
    record_id,
)
from medlens.core.errors import InputError

ITEM_COLUMNS = ("draft", "item", "candidate", "image", "question", "option", "role",
                "proposed_by", "note")  # fmt: skip
READ_COLUMNS = ("draft", "item", "candidate", "option")
PICKED = frozenset({"x", "1", "yes", "y", "picked", "pick", "✓"})
NOT_PICKED = frozenset({"", "0", "no", "n"})

Picks = dict[str, dict[str, set[str]]]
"""annotator → item → picked candidate ids."""


def pick_sheet(record: Mapping[str, Any], pictures: Mapping[str, str]) -> SheetContent:
    """The sheet; `pictures`: source image path → its sheet-relative PNG (``picture_names``)."""
    draft = record_id(record)
    annotators = [f"pick_{i}" for i in range(1, record["annotators"] + 1)]
    empty = [None] * len(annotators)
    rows: list[Sequence[Any]] = []
    for row in record["rows"]:
        image = pictures[row["image_path"]]
        rows.append((draft, row["item"], "gold", image, row["question"], row["label"], "gold",
                     "", "; ".join(row["notes"]), *empty))  # fmt: skip
        for c in row["candidates"]:
            rows.append((draft, row["item"], c["id"], image, row["question"], c["text"],
                         "candidate", ", ".join(c["proposed_by"]), "", *empty))  # fmt: skip
    needed = record["options"] - 1
    instructions: list[Sequence[Any]] = [
        ("medlens pick sheet", f"distractor candidates from {', '.join(record['models'])}"),
        ("draft", draft),
        ("instructions", f"For each item, look at its image, question and gold answer, then mark "
         f"exactly {needed} candidates in your pick column (x) as the item's wrong options: "
         "plausible, and definitely wrong for this image. Never mark the gold row. Rename your "
         "column pick_YOURNAME if you like. Do not change the draft, item, candidate or option "
         "columns."),
    ]  # fmt: skip
    choices = {a: ("x",) for a in annotators}  # a drop-down in xlsx
    return SheetContent([*ITEM_COLUMNS, *annotators], rows, instructions, choices)


def read_picks(sheets: Sequence[FilledRows], record: Mapping[str, Any], record_path: Path) -> Picks:
    """Every annotator's picks, checked row by row against the draft record."""
    by_item = {r["item"]: r for r in record["rows"]}
    picks: Picks = {}
    filled_in: dict[str, Path] = {}
    for sheet in sheets:
        check_columns(sheet, READ_COLUMNS)
        check_draft_ids(sheet, record_id(record), record_path)
        columns = [c for c in sheet.header if c.startswith("pick")]
        if not columns:
            raise InputError(sheet.path, "row 1", "no pick column (pick_1, pick_NAME …)")
        for number, cells in sheet.rows:
            row = _known_row(sheet.path, number, cells, by_item, record_path)
            for column in columns:
                if _picked(sheet.path, number, column, cells.get(column, "")):
                    if row is None:
                        problem = "the gold answer is marked: pick distractors only"
                        raise InputError(sheet.path, f"row {number}, column {column!r}", problem)
                    _claim(filled_in, column, sheet.path)
                    picks.setdefault(column, {}).setdefault(cells["item"], set()).add(row)
    if not picks:
        raise InputError(sheets[0].path, None, "no candidate is marked in any pick column")
    return picks


def _known_row(
    path: Path, number: int, cells: Mapping[str, str], by_item: Mapping[str, Any],
    record_path: Path,
) -> str | None:  # fmt: skip
    """The candidate id of a row (None for the gold row), after checking it is the draft's."""
    item = by_item.get(cells["item"])
    if item is None:
        problem = f"{cells['item']!r} is not an item of the draft in {record_path}"
        raise InputError(path, f"row {number}, column 'item'", problem)
    where = f"row {number}, column 'option'"
    if cells["candidate"] == "gold":
        if folded(cells["option"]) != folded(item["label"]):
            raise InputError(path, where, f"gold answer changed (the draft's is {item['label']!r})")
        return None
    known = {c["id"]: c for c in item["candidates"]}
    if cells["candidate"] not in known:
        problem = (
            f"{cells['candidate']!r} is not a candidate of item {cells['item']!r} in the draft"
        )
        raise InputError(path, f"row {number}, column 'candidate'", problem)
    if folded(cells["option"]) == folded(item["label"]):
        raise InputError(path, where, f"candidate {cells['option']!r} is the gold answer")
    if folded(cells["option"]) != folded(known[cells["candidate"]]["text"]):
        problem = f"candidate text changed (the draft's is {known[cells['candidate']]['text']!r})"
        raise InputError(path, where, problem)
    return str(cells["candidate"])


def _picked(path: Path, number: int, column: str, value: str) -> bool:
    text = value.strip().lower()
    if text in PICKED:
        return True
    if text in NOT_PICKED:
        return False
    problem = f"{value!r} is not a pick (x, 1 or yes to pick; empty, 0 or no not to)"
    raise InputError(path, f"row {number}, column {column!r}", problem)


def _claim(filled_in: dict[str, Path], column: str, path: Path) -> None:
    """One annotator column is filled in one file only."""
    first = filled_in.setdefault(column, path)
    if first != path:
        problem = f"annotator column {column!r} is filled in {first} too: one file per annotator"
        raise InputError(path, f"row 1, column {column!r}", problem)


def picked_questions(
    picks: Picks, record: Mapping[str, Any], sheet: Path, seed: int
) -> list[Question]:
    """Each item with its most-picked candidates as distractors; every annotator must have
    marked exactly the number needed on every item the sheets hold."""
    needed = record["options"] - 1
    by_item = {r["item"]: r for r in record["rows"]}
    picked = {i for by in picks.values() for i in by}
    items = [i for i in by_item if i in picked]  # in the draft's order
    questions = []
    for item in items:
        for annotator, by in sorted(picks.items()):
            got = len(by.get(item, ()))
            if got != needed:
                problem = f"{got} picks by {annotator}, {needed} needed (--options − 1)"
                raise InputError(sheet, f"item {item!r}, column {annotator!r}", problem)
        questions.append(_question(by_item[item], {a: by[item] for a, by in picks.items()},
                                   record, needed, seed))  # fmt: skip
    return questions


def _question(
    row: Mapping[str, Any], picked: Mapping[str, set[str]], record: Mapping[str, Any],
    needed: int, seed: int,
) -> Question:  # fmt: skip
    votes = {c["id"]: sum(c["id"] in s for s in picked.values()) for c in row["candidates"]}
    order = sorted(votes)
    random.Random(f"{seed}:{row['item']}").shuffle(order)
    order.sort(key=lambda c: -votes[c])  # stable: the seeded shuffle breaks ties
    chosen = order[:needed]
    tie = len(order) > needed and votes[order[needed]] == votes[order[needed - 1]]
    text = {c["id"]: c["text"] for c in row["candidates"]}
    models = {c["id"]: c["proposed_by"] for c in row["candidates"]}
    meta = {**row["meta"], "label": row["label"],
            "distractor_models": ", ".join(record["models"]),
            "distractor_votes": json.dumps({text[c]: votes[c] for c in order if votes[c]},
                                           ensure_ascii=False),
            "distractors_proposed_by": json.dumps({text[c]: models[c] for c in chosen},
                                                  ensure_ascii=False),
            "annotators": ", ".join(sorted(picked)), "pick_agreement": agreement(picked),
            "pick_tie_broken_by_seed": "yes" if tie else "no"}  # fmt: skip
    return Question(row["item"], row["question"], row["label"], tuple(text[c] for c in chosen),
                    row["image_path"], row["image"], meta)  # fmt: skip


def agreement(picked: Mapping[str, set[str]]) -> str:
    """Mean pairwise Jaccard index of the annotators' pick sets ('' with one annotator)."""
    pairs = list(combinations(sorted(picked), 2))
    if not pairs:
        return ""
    total = sum(len(picked[a] & picked[b]) / len(picked[a] | picked[b]) for a, b in pairs)
    return f"{total / len(pairs):.3f}"

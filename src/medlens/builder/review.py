"""The review sheet of drafted questions, and the items its accepted rows become.

``medlens build LABELS --draft-with SPEC --output review.xlsx|csv`` writes one row per drafted
question (columns :data:`COLUMNS`): the stable row id, the image, the label, the dimension, the
draft (question, options one per line, answer), the drafting model, the draft's problem when the
model's reply was unusable (such rows start as ``reject``), then the reviewer's columns:
``decision`` (accept, reject, edit; empty = not reviewed, left out), ``edited_question``,
``edited_options``, ``edited_answer``, ``reviewer``, ``comment``.
``medlens build-from-review review.xlsx --output OUT.jsonl`` makes each accepted or edited row a
single-answer choice item whose meta names the drafting model and the reviewer. Every row is
checked before anything is written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from medlens.builder.drafting import DraftTask, Templates, read_draft
from medlens.builder.model_calls import Reply, UnusableReply, folded
from medlens.builder.reviewed import (
    FilledRows,
    Question,
    SheetContent,
    check_columns,
    check_draft_ids,
    record_id,
)
from medlens.core.errors import InputError

DRAFT_COLUMNS = ("draft", "row", "image", "label", "dimension", "question", "options", "answer",
                 "model", "problem")  # fmt: skip
REVIEW_COLUMNS = ("decision", "edited_question", "edited_options", "edited_answer", "reviewer",
                  "comment")  # fmt: skip
COLUMNS = (*DRAFT_COLUMNS, *REVIEW_COLUMNS)
READ_COLUMNS = ("draft", "row", "question", "options", "answer", *REVIEW_COLUMNS[:-1])
"""The columns build-from-review reads (``comment`` is optional)."""
DECISIONS = ("accept", "reject", "edit")


def draft_record(
    tasks: Sequence[DraftTask], replies: Sequence[Reply], model: str, templates: Templates,
    options: int, labels: Path,
) -> dict[str, Any]:  # fmt: skip
    """The draft record: one row per task with its checked draft or its problem."""
    rows = []
    for task, reply in zip(tasks, replies, strict=True):
        row: dict[str, Any] = {
            "row": task.row_id, "where": task.row.where, "image": task.row.image,
            "image_path": str(task.row.image_path), "label": task.row.label,
            "dimension": task.template.name, "group": task.template.group,
            "meta": dict(task.row.meta), "reply": reply.text,
        }  # fmt: skip
        try:
            drafted = read_draft(task, reply, options)
        except UnusableReply as exc:
            row.update(question="", options=[], answer="", problem=str(exc))
        else:
            row.update(question=drafted.question, options=list(drafted.options),
                       answer=drafted.answer, problem="")  # fmt: skip
        rows.append(row)
    return {"kind": "review", "version": 1, "labels": str(labels), "model": model,
            "templates": {"source": templates.source, "sha256": templates.sha256},
            "options": options, "rows": rows}  # fmt: skip


def review_sheet(record: Mapping[str, Any], pictures: Mapping[str, str]) -> SheetContent:
    """The sheet; `pictures`: source image path → its sheet-relative PNG (``picture_names``)."""
    draft = record_id(record)
    rows = [
        (draft, r["row"], pictures[r["image_path"]], r["label"], r["dimension"],
         r["question"], "\n".join(r["options"]), r["answer"], record["model"], r["problem"],
         "reject" if r["problem"] else None, None, None, None, None, None)
        for r in record["rows"]
    ]  # fmt: skip
    return SheetContent(COLUMNS, rows, instructions(record, draft), {"decision": DECISIONS})


def instructions(record: Mapping[str, Any], draft: str) -> list[Sequence[Any]]:
    return [
        ("medlens review sheet", f"questions drafted by {record['model']} from {record['labels']}"),
        ("draft", draft),
        ("instructions", "Look at each row's image and draft. decision: accept (the draft as it "
         "stands), edit (fill edited_question / edited_options / edited_answer; empty ones keep "
         "the draft's), reject, or leave empty to leave the row out. Options are one per line; "
         "the answer is the text of the correct option. Accepted and edited rows need reviewer. "
         "Do not change the draft or row columns."),
        ("problem", "Why the model's draft was unusable (those rows start as reject; edit them "
         "to keep them)."),
    ]  # fmt: skip


def reviewed_questions(
    sheet: FilledRows, record: Mapping[str, Any], record_path: Path
) -> list[Question]:
    """Every accepted or edited row as a question; refuses the first bad row, naming it."""
    check_columns(sheet, READ_COLUMNS)
    check_draft_ids(sheet, record_id(record), record_path)
    drafted = {r["row"]: r for r in record["rows"]}
    seen: set[str] = set()
    questions = []
    for number, cells in sheet.rows:
        row_id = cells["row"]
        if row_id not in drafted:
            problem = f"{row_id!r} is not a row of the draft in {record_path}"
            raise InputError(sheet.path, f"row {number}, column 'row'", problem)
        if row_id in seen:
            raise InputError(sheet.path, f"row {number}, column 'row'", f"{row_id!r} twice")
        seen.add(row_id)
        question = _row_question(sheet.path, number, cells, drafted[row_id], record)
        if question is not None:
            questions.append(question)
    if not questions:
        raise InputError(sheet.path, None, "no accepted or edited row: nothing to build")
    return questions


def _row_question(
    path: Path, number: int, cells: Mapping[str, str], drafted: Mapping[str, Any],
    record: Mapping[str, Any],
) -> Question | None:  # fmt: skip
    """The question of an accepted or edited row (None for a rejected or unreviewed one)."""
    decision = cells["decision"].strip().lower()
    if decision not in ("", *DECISIONS):
        problem = f"{cells['decision']!r} is not a decision (accept, reject, edit or empty)"
        raise InputError(path, f"row {number}, column 'decision'", problem)
    if decision in ("", "reject"):
        return None
    text, options, gold = _reviewed_content(path, number, cells, decision)
    if not cells["reviewer"]:
        problem = f"an {decision}ed row needs a reviewer"
        raise InputError(path, f"row {number}, column 'reviewer'", problem)
    changed = (text, options, gold) != (drafted["question"], drafted["options"], drafted["answer"])
    meta = {**drafted["meta"], "label": drafted["label"], "dimension": drafted["dimension"],
            "drafted_by": record["model"], "reviewed_by": cells["reviewer"],
            "review": "edited" if changed else "accepted", "draft_row": drafted["row"]}  # fmt: skip
    if drafted.get("group"):
        meta["dimension_group"] = drafted["group"]
    wrong = tuple(o for o in options if o != gold)
    return Question(drafted["row"], text, gold, wrong, drafted["image_path"], drafted["image"],
                    meta)  # fmt: skip


def _reviewed_content(
    path: Path, number: int, cells: Mapping[str, str], decision: str
) -> tuple[str, list[str], str]:
    """Question, options and gold text as reviewed: the edited cells where an edited row fills
    them, the draft's cells otherwise; checked, the column at fault named."""
    edited = {k: cells[f"edited_{k}"] for k in ("question", "options", "answer")}
    if decision == "edit" and not any(edited.values()):
        problem = "decision edit, but edited_question, edited_options and edited_answer are empty"
        raise InputError(path, f"row {number}, column 'decision'", problem)
    if decision == "accept":
        edited = dict.fromkeys(edited, "")
    text = " ".join((edited["question"] or cells["question"]).split())
    lines = (edited["options"] or cells["options"]).splitlines()
    options = [o for o in (" ".join(line.split()) for line in lines) if o]
    answer = " ".join((edited["answer"] or cells["answer"]).split())
    where = f"row {number}, column '{{}}'"
    if not text:
        column = "edited_question" if decision == "edit" and not cells["question"] else "question"
        raise InputError(path, where.format(column), f"an {decision}ed row with an empty question")
    column = "edited_options" if edited["options"] else "options"
    _check_options(path, where.format(column), options, answer)
    return text, options, next(o for o in options if folded(o) == folded(answer))


def _check_options(path: Path, where: str, options: list[str], answer: str) -> None:
    if len(options) < 2:
        raise InputError(path, where, f"{len(options)} option(s): a question needs at least 2")
    if len({folded(o) for o in options}) != len(options):
        raise InputError(path, where, "two options are the same text")
    if not any(folded(o) == folded(answer) for o in options):
        raise InputError(path, where, f"the answer {answer!r} is not one of the options")

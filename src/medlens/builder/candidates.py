"""Distractor candidates for label questions from several language models (Med-CMR's protocol:
three LLMs propose four candidates each, annotators pick the distractors).

``medlens build LABELS --distractors-from SPEC1,SPEC2,SPEC3 [--candidates 4] --output
picks.xlsx|csv`` asks each model, for every label row, for ``--candidates`` wrong answers to the
row's question (the builder's standard stem, or ``--question``) whose answer is the label. The
replies are untrusted: a reply that is not ``{"distractors": [...]}`` is noted per item and
model; a candidate equal to the gold answer or to another label of the same image is dropped
(and noted: it would be a second correct option). Candidates are deduplicated across models
(case and spaces folded), each naming every model that proposed it. A row with fewer distinct
candidates than the distractors an item needs (``--options`` − 1) is left out and counted.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from medlens.builder.drafting import image_blocks
from medlens.builder.labels import LabelRow
from medlens.builder.model_calls import (
    DATA_NOTE,
    Prompt,
    Reply,
    UnusableReply,
    data_block,
    folded,
    reply_object,
    text_list,
)

ASK = (
    "You propose wrong answer options (distractors) for a multiple-choice question of a medical "
    "image benchmark. The question and its correct answer are given below. Propose {n} distinct "
    "distractors: plausible to someone who does not look carefully at the image, of the same kind "
    "as the correct answer (same imaging modality and body region), and each definitely wrong for "
    "this image (the image's other labels are true of it, so they are not distractors). Never "
    "propose the correct answer or a synonym of it."
)
REPLY_FORMAT = 'Reply with one JSON object and nothing else: {"distractors": ["...", ...]}'


@dataclass(frozen=True)
class PickTask:
    item_id: str
    row: LabelRow
    question: str
    other_labels: tuple[str, ...]


def pick_tasks(rows: Sequence[LabelRow], question: str) -> list[PickTask]:
    """One task per label row (id: the row's id, else its number)."""
    labels_of: dict[str, list[str]] = {}
    for row in rows:
        labels_of.setdefault(row.image, []).append(row.label)
    tasks = []
    for index, row in enumerate(rows, start=1):
        others = tuple(dict.fromkeys(
            x for x in labels_of[row.image] if folded(x) != folded(row.label)))  # fmt: skip
        tasks.append(PickTask(row.id or str(index), row, question, others))
    return tasks


def candidates_prompt(task: PickTask, n: int) -> Prompt:
    parts = [ASK.format(n=n), DATA_NOTE, "Question:\n" + data_block("QUESTION", task.question),
             "Correct answer:\n" + data_block("ANSWER", task.row.label)]  # fmt: skip
    parts += image_blocks(task.row.meta, task.other_labels)
    parts.append(REPLY_FORMAT)
    return Prompt(task.item_id, "\n\n".join(parts), "distractors")


def read_candidates(reply: Reply, n: int) -> list[str]:
    """A model's candidates for one item (its first `n`); raises UnusableReply."""
    if reply.error is not None:
        raise UnusableReply(f"no reply ({reply.error})")
    return text_list(reply_object(reply.text), "distractors")[:n]


def item_row(task: PickTask, replies: Mapping[str, Reply], n: int) -> dict[str, Any]:
    """The record row of one item: merged candidates, the notes of unusable replies and of
    dropped candidates. `replies`: model spec → its reply for this item."""
    excluded = {folded(task.row.label): "the gold answer"}
    excluded.update({folded(o): "another label of this image" for o in task.other_labels})
    merged: dict[str, dict[str, Any]] = {}
    notes: list[str] = []
    for model, reply in replies.items():
        try:
            texts = read_candidates(reply, n)
        except UnusableReply as exc:
            notes.append(f"{model}: unusable reply ({exc})")
            continue
        for text in texts:
            key = folded(text)
            if key in excluded:
                notes.append(f"{model}: dropped {text!r} ({excluded[key]})")
                continue
            entry = merged.setdefault(key, {"text": text, "proposed_by": []})
            if model not in entry["proposed_by"]:
                entry["proposed_by"].append(model)
    candidates = [{"id": f"c{i}", **c} for i, c in enumerate(merged.values(), start=1)]
    return {"item": task.item_id, "where": task.row.where, "image": task.row.image,
            "image_path": str(task.row.image_path), "label": task.row.label,
            "question": task.question, "meta": dict(task.row.meta), "candidates": candidates,
            "notes": notes}  # fmt: skip


def picks_record(
    tasks: Sequence[PickTask], replies: Mapping[str, Sequence[Reply]], n: int, options: int,
    annotators: int, labels: Path,
) -> dict[str, Any]:  # fmt: skip
    """The pick draft record: items with enough candidates, and those left out with why."""
    needed = options - 1
    rows, left_out = [], []
    for index, task in enumerate(tasks):
        row = item_row(task, {m: r[index] for m, r in replies.items()}, n)
        if len(row["candidates"]) < needed:
            reason = f"{len(row['candidates'])} distinct candidates, {needed} distractors needed"
            left_out.append({"item": task.item_id, "where": task.row.where, "reason": reason,
                             "notes": row["notes"]})  # fmt: skip
        else:
            rows.append(row)
    return {"kind": "picks", "version": 1, "labels": str(labels), "models": list(replies),
            "candidates": n, "options": options, "annotators": annotators, "rows": rows,
            "left_out": left_out}  # fmt: skip

"""MMBU's official outputs as they are (dcunhrya/MMBU-vlm-eval ``src/run_vlm_eval.py``): one JSONL
per task, rows ``index, question, image_path, dataset, modality, class_label, answer[, options]``
with the model's output under ``answer``, per-task indices, and the closed question stored as
sent — ``question + " Options: " + options``.

``replay:DIR`` with a folder of such files (and no ``run.json``) answers an ``mmbu:`` folder of
per-task TSVs: each output file is matched to a task by the official task name in its file name
(``configs/all_tasks.yaml``: ``classification_closed_VQA`` …), and each of its indices to the
item of that task's TSV with the same index (the TSVs may keep their released names,
``final_subsampled_cls_closed_1_13_v2.tsv`` …; ``sources/mmbu_names``). A file naming no task, a
task the benchmark lacks, and two files for one task are one-line errors naming the file.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from medlens.core.errors import InputError
from medlens.runs.layout import is_run
from medlens.sources.mmbu_official import OFFICIAL_TASKS

if TYPE_CHECKING:
    from medlens.core.items import Item

OPTIONS_SUFFIX = " Options: "
"""What the official runner appends to a closed question before its options."""
TASK_NAMES = tuple(
    sorted(
        (f"{stem}_{form}_VQA" for stem in OFFICIAL_TASKS for form in ("closed", "open")),
        key=len,
        reverse=True,
    )
)


def task_in_name(path: Path) -> str | None:
    """The official task name a file's name holds (the longest that fits), or None."""
    stem = path.stem.lower()
    for name in TASK_NAMES:
        if re.search(rf"(?:^|[^a-z]){re.escape(name.lower())}(?:$|[^a-z])", stem):
            return name
    return None


def same_question(theirs: str, item: Item) -> bool:
    """The output's question is the item's, as sent: bare, or with the official options suffix."""
    ours = " ".join(item.question.split())
    asked = " ".join(theirs.split())
    if asked == ours:
        return True
    options = str(item.meta.get("options_text") or "")
    if options and asked == " ".join(f"{item.question}{OPTIONS_SUFFIX}{options}".split()):
        return True
    return not options and asked.startswith(ours + OPTIONS_SUFFIX.rstrip())


def is_output_folder(source: Path) -> bool:
    return source.is_dir() and not is_run(source) and any(source.glob("*.jsonl"))


Rows = tuple[dict[str, str], dict[str, str]]
"""(index → output, index → question) of one output file."""


def folder_predictions(
    source: Path, items: Sequence[Item], read_file: Callable[[Path], Rows]
) -> Rows:
    """(item id → output, item id → question as the output holds it) of a folder of per-task
    output files, matched to the items of each task by their per-task index."""
    by_task = _items_by_task(items)
    files = _task_files(source, set(by_task) if items else None)
    predictions: dict[str, str] = {}
    questions: dict[str, str] = {}
    for task, path in files.items():
        rows, asked = read_file(path)
        ids = by_task.get(task.lower(), {})
        for index, text in rows.items():
            item_id = ids.get(index, f"{task}-{index}")
            predictions[item_id] = text
            if index in asked:
                questions[item_id] = asked[index]
    return predictions, questions


def _task_files(source: Path, tasks: set[str] | None) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in sorted(source.glob("*.jsonl")):
        task = task_in_name(path)
        if task is None:
            raise InputError(path, None, "no MMBU task name in the file name (official names: "
                             "classification_closed_VQA, … from configs/all_tasks.yaml)")  # fmt: skip
        if task in found:
            raise InputError(path, None, f"a second output file for task {task} "
                             f"(the first: {found[task].name})")  # fmt: skip
        if tasks is not None and task.lower() not in tasks:
            have = ", ".join(sorted(tasks)) or "none"
            raise InputError(
                path, None, f"task {task} is not a task of this benchmark (its tasks: {have})"
            )
        found[task] = path
    return found


def _items_by_task(items: Sequence[Item]) -> dict[str, dict[str, str]]:
    """Official task name (lower case) → per-task index → item id."""
    out: dict[str, dict[str, str]] = {}
    for item in items:
        task = str(item.meta.get("official_task") or "")
        if not task:
            continue
        index = item.meta.get("index")  # the TSV's own per-task index, as the output holds it
        if index is None:
            at = item.id.lower().find(task.lower())
            rest = item.id[at + len(task) :] if at >= 0 else item.id
            index = rest.split("-", 1)[1] if "-" in rest else rest
        out.setdefault(task.lower(), {})[str(index)] = item.id
    return out


def check_questions(source: Path, questions: Mapping[str, str], items: Sequence[Item]) -> None:
    """Each output's question must be its item's (as sent): the first mismatch is named."""
    for item in items:
        theirs = questions.get(item.id)
        if theirs is None or not item.question or same_question(theirs, item):
            continue
        raise InputError(
            source, f"index {item.id!r}",
            f"question {theirs[:60]!r} is not this benchmark's {item.question[:60]!r}: outputs "
            "of another task or benchmark?",
        )  # fmt: skip

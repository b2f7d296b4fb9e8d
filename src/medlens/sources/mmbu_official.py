"""MMBU's official layouts (dcunhrya/MMBU-vlm-eval, snapshot 3aab73e; ``PROTOCOL_NOTES.md``):

- the **inference TSV** (``src/run_vlm_eval.py``, ``src/vqa_dataset.py``): columns ``index,
  question, image_path, dataset, class_label, modality, options``; the task is the file's name
  as released (``final_subsampled_cls_closed_1_13_v2.tsv`` …, ``sources/mmbu_names.py``) or as
  its config names it (``classification_closed_VQA`` …), or a ``task`` column; the gold
  label is ``class_label``; closed tasks carry their options in one ``options`` cell;
- the **public split** card (``mmbu/mmbu-public``): ``question, file_name, question_type,
  options, metadata_*, task, unique_id, VQA_type, answer``, open questions whose ``options``
  are the label set for the judge only ("Do not send options or answer");
- the **output JSONL** (``index, question, image_path, dataset, modality, class_label,
  answer[, options]``, the model's output under ``answer``): read by ``replay:FILE.jsonl``.

Official task names map onto medlens's four tasks: ``classification`` (unanchored),
``*_grounding`` → box- or mask-anchored classification, ``*_guess_bbox`` → detection; the
``closed``/``open`` in the name is the form.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from medlens.core.errors import InputError
from medlens.sources import native
from medlens.sources.mmbu_names import released_task

OFFICIAL_TASKS: dict[str, str] = {
    "classification": "classification",
    "detection_grounding": "box_classification",
    "segmentation_grounding": "mask_classification",
    "detection_guess_bbox": "detection",
    "segmentation_guess_bbox": "detection",
}
"""Official task stem (before ``_closed_VQA`` / ``_open_VQA``) → medlens task."""
_LETTERED = re.compile(r"(?:^|(?<=[\s,;|]))\(?([A-J])[.):]\s*")


def official_task(name: str) -> tuple[str, str] | None:
    """(medlens task, form) of an official task name such as ``classification_closed_VQA`` or
    a released file's name such as ``final_subsampled_cls_closed_1_13_v2`` (``mmbu_names``)."""
    found = released_task(name)
    if found is None:
        return None
    official, form = found
    return _medlens_task(official, form), form


def _medlens_task(official: str, form: str) -> str:
    return OFFICIAL_TASKS[official.rsplit(f"_{form}_", 1)[0]]


def task_and_form(record: Mapping[str, Any], path: Path, where: str) -> tuple[str, str, str | None]:
    """(the task as written, medlens task, form or None) from a ``task`` column, else from the
    file's name when it is an official task name; neither is a one-line error naming 'task'."""
    written = native.optional_text(record, "task")
    if written is None:
        if official_task(path.stem) is None:
            raise InputError(
                path,
                f"{where}, field 'task'",
                "missing or empty (and the file name is no official task name such as "
                "classification_closed_VQA or final_subsampled_cls_closed_1_13_v2)",
            )
        written = path.stem
    named = released_task(written)
    if named is not None:
        official, form = named
        return official, _medlens_task(official, form), form
    vqa_type = native.optional_text(record, "VQA_type")
    folded = vqa_type.lower() if vqa_type else ""
    return written, written.lower(), "open" if "open" in folded else "closed" if folded else None


def gold_text(record: Mapping[str, Any], path: Path, where: str) -> str:
    """``class_label`` (the inference TSV and the output JSONL, where ``answer`` is the model's
    output), else ``answer`` (the public split, medlens's TSV variant)."""
    for key in ("class_label", "answer"):
        value = record.get(key)
        if isinstance(value, list):
            return json.dumps(value)
        if value is not None and str(value).strip():
            return str(value).strip()
    raise InputError(
        path,
        f"{where}, field 'class_label'",
        "missing or empty (the gold label; 'answer' in the public split)",
    )


def options_cell(record: Mapping[str, Any], path: Path, where: str) -> dict[str, str]:
    """Options from the one ``options`` cell: JSON, ``A. x B. y`` / ``(A) x``, or a list
    separated by ``|``, ``;``, new lines or commas, lettered A, B, … in order."""
    value = record.get("options")
    if isinstance(value, (list, dict)) or (
        isinstance(value, str) and value.strip().startswith(("[", "{"))
    ):
        return native.options_from({"options": value}, path, where)
    text = str(value or "").strip()
    if not text:
        return {}
    marks = list(_LETTERED.finditer(text))
    if len(marks) >= 2 and [m.group(1) for m in marks] == list(native.LETTERS[: len(marks)]):
        ends = [m.start() for m in marks[1:]] + [len(text)]
        return {
            m.group(1): text[m.end() : end].strip(" ,;|\n")
            for m, end in zip(marks, ends, strict=True)
        }
    for separator in ("|", ";", "\n", ","):
        parts = [part.strip() for part in text.split(separator) if part.strip()]
        if len(parts) >= 2:
            return native.letter_options(parts)
    return native.letter_options([text])

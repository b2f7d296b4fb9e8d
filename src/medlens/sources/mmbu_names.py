"""The names MMBU's official code gives its task files, read as released (no renaming needed).

Every name below was read in dcunhrya/MMBU-vlm-eval (its git history through snapshot 3aab73e,
and the later files the search index holds):

- **task names** (``configs/all_tasks.yaml``): ``{stem}_{closed|open}_VQA`` with the stems of
  :data:`OFFICIAL_STEMS`; the chain-of-thought registry (``configs/tasks.yaml``, commit 10f051a)
  adds ``_cot`` (``classification_closed_VQA_cot``);
- **evaluation TSVs** (``configs/all_tasks.yaml``, ``README.md``, ``src/results/check_results.py``,
  ``src/dataset_check/test_dataset.py``, ``configs/tasks.yaml``): ``final_cls/``,
  ``final_det/``, ``final_seg/`` holding ``final_subsampled_{short}_{closed|open}[_{date}]
  [_v2|-v2|_v3].tsv`` with the short stems of :data:`SHORT_STEMS` and dates such as ``11_30_25``,
  ``12_15``, ``12_29-v2``, ``1_12_v2``, ``1_13_v3`` (e.g. ``final_subsampled_cls_closed_1_13_v2.tsv``,
  ``final_subsampled_seg_guess_mask_open_12_29.tsv``); one more,
  ``final_det/mmbu_detection_guess_bbox_open_VQA_cot_final.tsv``
  (``.cursor/skills/mmbu-dataset-qa/reference.md``);
- **chain-of-thought inference TSVs** (``configs/tasks.yaml`` aliases): ``final_cot_v2/
  {short}_{closed|open}.tsv`` (``cls_closed.tsv`` …);
- **output JSONLs** (``src/run_vlm_eval.py``): ``{model}_{task name}.jsonl`` (``/`` in the model
  name written ``_``), read by ``models.replay_mmbu``;
- the v4 evaluation-split ids (``src/mmbu/v4_sonnet_report/config.py``): ``cls_open``,
  ``fg_det_open``, ``fg_seg_open``, ``obj_det_open`` and their legacy ``det_open``,
  ``seg_open``, ``det_bbox_open``, accepted as names of the same tasks.

The folder ``mmbu:ROOT`` of the released data root reads the TSVs of ``final_cls/``,
``final_det/`` and ``final_seg/`` (never ``final_cot_v2/``: the same items again); two files
of one task (two releases side by side) are refused naming both. The runner opens each
``image_path`` as written, from the data root; so does medlens for a TSV in one of those
folders (a TSV elsewhere: from its own folder).
"""

from __future__ import annotations

import re
from pathlib import Path

from medlens.core.errors import InputError

OFFICIAL_STEMS = (
    "classification",
    "detection_grounding",
    "segmentation_grounding",
    "detection_guess_bbox",
    "segmentation_guess_bbox",
)
"""The official task stems (before ``_closed_VQA`` / ``_open_VQA``)."""
SHORT_STEMS = {
    "cls": "classification",
    "det_grounding": "detection_grounding",
    "seg_grounding": "segmentation_grounding",
    "det_guess_bbox": "detection_guess_bbox",
    "seg_guess_mask": "segmentation_guess_bbox",
    "fg_det": "detection_grounding",
    "fg_seg": "segmentation_grounding",
    "obj_det": "detection_guess_bbox",
    "det": "detection_grounding",
    "seg": "segmentation_grounding",
    "det_bbox": "detection_guess_bbox",
}
"""Short stems of the released file names and evaluation-split ids → the official stem."""
RELEASED_FOLDERS = ("final_cls", "final_det", "final_seg")
_STEMS = "|".join(
    re.escape(s) for s in sorted({*OFFICIAL_STEMS, *SHORT_STEMS}, key=len, reverse=True)
)
_NAME = re.compile(
    rf"^(?:final_subsampled_|mmbu_)?(?P<stem>{_STEMS})_(?P<form>closed|open)"
    r"(?:_vqa)?(?:_cot)?(?:_final)?(?:[_-](?:\d+|v\d+))*$"
)


def released_task(name: str) -> tuple[str, str] | None:
    """(official task name, form) of a released file stem or task name, e.g.
    ``final_subsampled_cls_closed_1_13_v2`` → (``classification_closed_VQA``, ``closed``)."""
    match = _NAME.match(name.strip().lower())
    if match is None:
        return None
    stem = SHORT_STEMS.get(match.group("stem"), match.group("stem"))
    form = match.group("form")
    return f"{stem}_{form}_VQA", form


def released_files(root: Path) -> list[Path] | None:
    """The task TSVs of a released data root (its ``final_cls/``, ``final_det/``,
    ``final_seg/``), or None when `root` is no such folder; two files of one task are refused."""
    folders = [root / name for name in RELEASED_FOLDERS if (root / name).is_dir()]
    if not folders:
        return None
    found: dict[str, Path] = {}
    for path in sorted(p for folder in folders for p in folder.glob("*.tsv")):
        task = released_task(path.stem)
        if task is None:
            continue
        if task[0] in found:
            raise InputError(
                path, None, f"a second file of task {task[0]} (the first: "
                f"{found[task[0]].relative_to(root)}); two releases side by side: name one file "
                "per task (mmbu:FILE) or keep one per task in the folder",
            )  # fmt: skip
        found[task[0]] = path
    if not found:
        raise InputError(root, None, "no MMBU task TSV in final_cls/, final_det/, final_seg/")
    return list(found.values())


def image_root(tsv: Path) -> Path:
    """Where a TSV's relative ``image_path`` values start: the data root for a TSV in one of
    the released folders, else the TSV's own folder."""
    return tsv.parent.parent if tsv.parent.name in RELEASED_FOLDERS else tsv.parent

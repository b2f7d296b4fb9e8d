"""MMBU's released data root as its official code lays it out (final_cls/, final_det/,
final_seg/, files under their released names) over four real SLAKE images."""

from __future__ import annotations

import shutil
from pathlib import Path

from data_paths import realdata_dir

HEADER = "index\tquestion\timage_path\tdataset\tclass_label\tmodality\toptions"
OPTIONS = "A. brain B. lung C. liver"
GOLDS = ["brain", "lung", "liver", "lung"]
BOXES = "A. [0, 0, 10, 10] B. [5, 5, 20, 20] C. [1, 2, 3, 4]"
RELEASE = {  # file under its released name → (official task, options of the closed form)
    "final_cls/final_subsampled_cls_closed_1_13_v2.tsv": ("classification_closed_VQA", OPTIONS),
    "final_cls/final_subsampled_cls_open_1_13_v2.tsv": ("classification_open_VQA", ""),
    "final_det/final_subsampled_det_grounding_closed_12_29.tsv": ("detection_grounding_closed_VQA", OPTIONS),
    "final_det/final_subsampled_det_guess_bbox_closed_12_29-v2.tsv": ("detection_guess_bbox_closed_VQA", BOXES),
    "final_seg/final_subsampled_seg_grounding_open_1_13_v2.tsv": ("segmentation_grounding_open_VQA", ""),
}  # fmt: skip


def released_root(root: Path) -> Path:
    """The released data root over four real SLAKE images, per-task indices 0–3."""
    images = sorted(
        p for p in (realdata_dir("slake") / "imgs").iterdir() if (p / "source.jpg").is_file()
    )[:4]
    for number, folder in enumerate(images):
        target = root / "images" / f"{number}.jpg"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(folder / "source.jpg", target)
    for name, (task, options) in RELEASE.items():
        golds = ["[1, 2, 3, 4]"] * 4 if "guess_bbox" in task else GOLDS
        rows = [f"{i}\tWhich organ is shown?\timages/{i}.jpg\tSLAKE\t{gold}\tCT\t{options}"
                for i, gold in enumerate(golds)]  # fmt: skip
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("\n".join([HEADER, *rows]) + "\n")
    (root / "final_cot_v2").mkdir()  # the chain-of-thought copies of the same items: not read
    (root / "final_cot_v2" / "cls_closed.tsv").write_text(HEADER + "\n")
    return root

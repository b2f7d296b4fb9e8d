"""SLAKE 1.0 (Liu et al. 2021): bilingual radiology VQA with per-image organ boxes.

English test (the usual benchmark) = 1,061 questions. Chinese closed answers
(是的/不是, 包含/不包含, 有/没有 …) become ``yes``/``no``. The organ boxes of
``imgs/<img>/detection.json`` are kept on each item as ``meta["organ_boxes"]`` (JSON:
organ → ``[x, y, w, h]`` in pixels) for the builder.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from medlens.core.errors import InputError
from medlens.core.items import Benchmark, Item
from medlens.core.specs import Spec
from medlens.sources import native
from medlens.sources.zip_images import ZipImages

SPLITS = ("train", "validate", "test")
EXEMPLAR_SPLIT = "train"
LANGS = ("en", "zh", "all")


def load_slake(spec: Spec) -> Benchmark:
    """``slake:DIR[?split=test|validate|train&lang=en|zh|all]``."""
    root = native.open_spec(spec, {"split", "lang"})
    split = native.choose_option(spec, "split", SPLITS, "test")
    lang = native.choose_option(spec, "lang", LANGS, "en")
    path = native.first_existing([root / f"{split}.json"], f"SLAKE {split} file", root)
    found = native.first_existing([root / "imgs", root / "imgs.zip"], "image folder", root)
    # The Hub copy (BoKelvin/SLAKE) ships the images zipped.
    images: Path | ZipImages = ZipImages(found, "imgs") if found.suffix == ".zip" else found

    def iter_items() -> Iterator[Item]:
        boxes: dict[str, str] = {}
        for where, record in native.read_json_list(path):
            if lang != "all" and record.get("q_lang") != lang:
                continue
            yield _item(record, path, where, images, split, boxes)

    return native.make_benchmark(spec, split, iter_items, description=f"SLAKE {split} ({lang})")


def _item(
    record: native.Record,
    path: Path,
    where: str,
    images: Path | ZipImages,
    split: str,
    boxes: dict[str, str],
) -> Item:
    image_name = native.text(record, "img_name", path, where)
    # The image's folder as named, not as resolved: in a Hub-cache snapshot the image is a
    # symlink into blobs/, and detection.json sits beside the link.
    folder = Path(image_name.replace("\\", "/")).parent.as_posix()
    if isinstance(images, ZipImages):
        image = images.image(image_name, path, where)
        if folder not in boxes:
            found = images.read_json(f"{folder}/detection.json")
            parsed = {} if found is None else parse_organ_boxes(found, images.path)
            boxes[folder] = json.dumps(parsed, separators=(",", ":"))
    else:
        image = native.file_image(images, image_name, path, where)
        if folder not in boxes:
            parsed = organ_boxes(images / folder)
            boxes[folder] = json.dumps(parsed, separators=(",", ":"))
    axes = {"source": "slake", "lang": native.text(record, "q_lang", path, where), "split": split,
            "image_id": image_name, "organ_boxes": boxes[folder]}  # fmt: skip
    return native.vqa_record_item(
        record, path, where, item_id=native.text(record, "qid", path, where), image=image, axes=axes
    )


def organ_boxes(image_folder: Path) -> dict[str, list[float]]:
    """Organ → ``[x, y, w, h]`` from ``detection.json`` beside an image (empty when absent)."""
    path = image_folder / "detection.json"
    if not path.is_file():
        return {}
    return parse_organ_boxes(native.read_json(path), path)


def parse_organ_boxes(data: object, path: Path) -> dict[str, list[float]]:
    """Organ → ``[x, y, w, h]`` from the parsed content of a ``detection.json``."""
    if not isinstance(data, list):
        raise InputError(path, None, "expected a list of {organ: [x, y, w, h]} objects")
    boxes: dict[str, list[float]] = {}
    for index, entry in enumerate(data):
        if not isinstance(entry, dict):
            raise InputError(path, f"record {index}", "expected {organ: [x, y, w, h]}")
        for organ, box in entry.items():
            if not (isinstance(box, list) and len(box) == 4):
                raise InputError(path, f"record {index}, field {organ!r}", "expected [x, y, w, h]")
            # Several boxes of one organ (e.g. two lesions) keep distinct keys.
            key = (
                organ
                if organ not in boxes
                else f"{organ} #{sum(k.startswith(organ) for k in boxes) + 1}"
            )
            boxes[key] = [float(v) for v in box]
    return boxes


# Licence, access and citation of this source (read by medlens.sources.cards; decision 0009).
CARD = {
    "licence": "CC BY 4.0 (authors' dataset card BoKelvin/SLAKE)",
    "access": "open",
    "homepage": "https://www.med-vqa.com/slake/",
    "citation": """@inproceedings{liu2021slake,
  title = {SLAKE: A Semantically-Labeled Knowledge-Enhanced Dataset for Medical Visual Question Answering},
  author = {Liu, Bo and Zhan, Li-Ming and Xu, Li and Ma, Lin and Yang, Yan and Wu, Xiao-Ming},
  booktitle = {IEEE 18th International Symposium on Biomedical Imaging (ISBI)},
  pages = {1650--1654},
  year = {2021}
}""",
}

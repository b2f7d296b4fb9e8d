"""PMC-VQA (Zhang et al. 2023): ``test_clean.csv`` (2,000 questions) and the other CSV files of
its release, as on the Hub (``xmcmic/PMC-VQA``), with images in ``images/`` or ``images.zip``.

Columns: ``Figure_path`` (image file name), ``Question``, ``Answer`` (option text),
``Choice A`` … ``Choice D`` (written ``A:text``; the ``A:`` is cut), ``Answer_label`` (letter);
other columns (``split``, an unnamed index) are kept in ``meta``. Every item is a 4-option
``choice`` item; ids are the row numbers of the file (it has no id column). Files ending in
``_2`` (version 2) take their images from ``images_2/`` or ``images_2.zip``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from medlens.core.errors import InputError
from medlens.core.items import Benchmark, ImageRef, Item
from medlens.core.specs import Spec
from medlens.sources import native
from medlens.sources.zip_images import ZipImages

SPLITS = ("test",)
DEFAULT_FILE = "test_clean.csv"
_PREFIX = re.compile(r"^\s*([A-Z])\s*[:.)]\s*")
_OWN = ("Figure_path", "Question", "Answer", "Answer_label")


def load_pmcvqa(spec: Spec) -> Benchmark:
    """``pmc-vqa:DIR[?file=test_clean.csv|test.csv|test_2.csv|train.csv]``."""
    root = native.open_spec(spec, {"file"})
    name = spec.option("file", DEFAULT_FILE) or DEFAULT_FILE
    path = native.first_existing([root / name], "PMC-VQA question file", root)
    folder = "images_2" if path.stem.endswith("_2") else "images"
    found = native.first_existing([root / folder, root / f"{folder}.zip"], "image folder", root)
    images: Path | ZipImages = ZipImages(found, folder) if found.suffix == ".zip" else found
    split = "train" if path.stem.startswith("train") else "test"

    def iter_items() -> Iterator[Item]:
        for number, (where, record) in enumerate(native.read_table(path, ",")):
            yield _item(record, path, where, images, split, number)

    return native.make_benchmark(spec, split, iter_items, description=f"PMC-VQA ({name})")


def _item(
    record: native.Record, path: Path, where: str, images: Path | ZipImages, split: str, row: int
) -> Item:
    figure = native.text(record, "Figure_path", path, where)
    image: ImageRef = (
        images.image(figure, path, where)
        if isinstance(images, ZipImages)
        else native.file_image(images, figure, path, where)
    )
    options = {}
    for letter in "ABCDEFGH":
        cell = native.optional_text(record, f"Choice {letter}")
        if cell is not None:
            match = _PREFIX.match(cell)
            options[letter] = (
                cell[match.end() :].strip() if match and match.group(1) == letter else cell
            )
    if len(options) < 2:
        raise InputError(path, f"{where}, field 'Choice A'", "fewer than two choices")
    label = native.optional_text(record, "Answer_label")
    answer = native.letter_of(
        options, label or native.text(record, "Answer", path, where), path, where
    )
    meta = native.native_meta(record, skip=(*_OWN, *(f"Choice {k}" for k in options)))
    meta.update(source="pmc-vqa", lang="en", split=split, image_id=figure, answer_type="closed")
    meta.pop("", None)  # the unnamed index column pandas wrote
    return Item(str(row), native.text(record, "Question", path, where), "choice",
                options=options, answer=answer, images=(image,), meta=meta)  # fmt: skip


# Licence, access and citation of this source (read by medlens.sources.cards; decision 0009).
CARD = {
    "licence": "not stated on the dataset card (xmcmic/PMC-VQA); figures come from PubMed Central "
    "Open Access papers under their own licences: research use",
    "access": "open",
    "homepage": "https://github.com/xiaoman-zhang/PMC-VQA",
    "citation": """@article{zhang2023pmcvqa,
  title = {PMC-VQA: Visual Instruction Tuning for Medical Visual Question Answering},
  author = {Zhang, Xiaoman and Wu, Chaoyi and Zhao, Ziheng and Lin, Weixiong and Zhang, Ya and Wang, Yanfeng and Xie, Weidi},
  journal = {arXiv preprint arXiv:2305.10415},
  year = {2023}
}""",
}

"""VQA-RAD (Lau et al. 2018): the original OSF JSON or the MEVF ``data_RAD`` split files.

The MEVF files (``data_RAD/testset.json``, 451 questions) define the split everyone reports;
without them the public JSON's ``phrase_type`` gives the same split (``test_freeform`` +
``test_para``). Yes/no answers (any case) become ``yes_no`` items, every other answer, closed
either/or answers included, an ``open`` item whose ``answer_type`` axis says closed or open.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from medlens.core.items import Benchmark, Item
from medlens.core.specs import Spec
from medlens.sources import native

SPLITS = ("train", "test")
EXEMPLAR_SPLIT = "train"
PUBLIC_JSON = "VQA_RAD Dataset Public.json"
IMAGE_DIRS = ("VQA_RAD Image Folder", "data_RAD/images", "images")
_PUBLIC_PHRASES = {"test": ("test_freeform", "test_para"), "train": ("freeform", "para")}


def load_vqarad(spec: Spec) -> Benchmark:
    """``vqa-rad:DIR[?split=test|train&format=mevf|public]``."""
    root = native.open_spec(spec, {"split", "format"})
    split = native.choose_option(spec, "split", SPLITS, "test")
    mevf = root / "data_RAD" / f"{split}set.json"
    default_format = "mevf" if mevf.is_file() else "public"
    file_format = native.choose_option(spec, "format", ("mevf", "public"), default_format)
    path = mevf if file_format == "mevf" else root / PUBLIC_JSON
    if not path.is_file():
        native.first_existing([path], f"{file_format} question file", root)
    images = native.first_existing([root / d for d in IMAGE_DIRS], "image folder", root)

    def iter_items() -> Iterator[Item]:
        for where, record in native.read_json_list(path):
            if file_format == "public" and record.get("phrase_type") not in _PUBLIC_PHRASES[split]:
                continue
            yield _item(record, path, where, images, split)

    return native.make_benchmark(
        spec, split, iter_items, description=f"VQA-RAD {split} ({file_format} file {path.name})"
    )


def _item(record: native.Record, path: Path, where: str, images: Path, split: str) -> Item:
    image_name = native.text(record, "image_name", path, where)
    return native.vqa_record_item(
        record,
        path,
        where,
        item_id=native.text(record, "qid", path, where),
        image=native.file_image(images, image_name, path, where),
        axes={"source": "vqa-rad", "lang": "en", "split": split, "image_id": image_name},
    )


# Licence, access and citation of this source (read by medlens.sources.cards; decision 0009).
CARD = {
    "licence": "CC0 1.0 (OSF release; images from MedPix, NLM)",
    "access": "open",
    "homepage": "https://osf.io/89kps/",
    "citation": """@article{lau2018vqarad,
  title = {A dataset of clinically generated visual questions and answers about radiology images},
  author = {Lau, Jason J. and Gayen, Soumya and Ben Abacha, Asma and Demner-Fushman, Dina},
  journal = {Scientific Data},
  volume = {5},
  pages = {180251},
  year = {2018},
  doi = {10.1038/sdata.2018.251}
}""",
}

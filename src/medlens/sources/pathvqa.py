"""PathVQA (He et al. 2020): the aligned test subset whose images are present (5,564 questions).

``test_aligned_subset.json`` is the index of test rows whose image is correctly aligned (see the
data's SOURCE.md); ``?file=test.json`` reads a plain PathVQA export instead. 85 images are CMYK
JPEGs and 2 greyscale: every item carries ``meta["convert_rgb"] = "1"`` so the request builder
converts them with :func:`medlens.core.items.rgb_image_bytes`, which re-encodes losslessly (PNG) and only when the
image is not RGB already.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from medlens.core.items import Benchmark, Item
from medlens.core.specs import Spec
from medlens.sources import native

SPLITS = ("test",)
DEFAULT_FILE = "test_aligned_subset.json"


def load_pathvqa(spec: Spec) -> Benchmark:
    """``pathvqa:DIR[?file=test_aligned_subset.json]``."""
    root = native.open_spec(spec, {"file", "split"})
    native.choose_option(spec, "split", SPLITS, "test")
    name = spec.option("file", DEFAULT_FILE) or DEFAULT_FILE
    path = native.first_existing([root / name], "PathVQA question file", root)

    def iter_items() -> Iterator[Item]:
        for index, (where, record) in enumerate(native.read_json_list(path)):
            yield _item(record, path, where, root, index)

    return native.make_benchmark(spec, "test", iter_items, description=f"PathVQA test ({name})")


def _item(record: native.Record, path: Path, where: str, root: Path, index: int) -> Item:
    image_name = str(record.get("image") or native.text(record, "image_path", path, where))
    axes = {"modality": "pathology", "source": "pathvqa", "lang": "en", "split": "test",
            "image_id": image_name.replace("\\", "/"), "convert_rgb": "1"}  # fmt: skip
    return native.vqa_record_item(
        record,
        path,
        where,
        item_id=str(record.get("source_row", index)),
        image=native.file_image(root, image_name, path, where),
        axes=axes,
    )


# Licence, access and citation of this source (read by medlens.sources.cards; decision 0009).
CARD = {
    "licence": "MIT (UCSD-AI4H/PathVQA); image copyrights stay with the source textbooks' publishers and the PEIR library: research use",
    "access": "open",
    "homepage": "https://github.com/UCSD-AI4H/PathVQA",
    "citation": """@article{he2020pathvqa,
  title = {PathVQA: 30000+ Questions for Medical Visual Question Answering},
  author = {He, Xuehai and Zhang, Yichen and Mou, Luntian and Xing, Eric and Xie, Pengtao},
  journal = {arXiv preprint arXiv:2003.10286},
  year = {2020}
}""",
}

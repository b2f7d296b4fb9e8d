"""Med-CMR (CVPR 2026): 5-option MCQ and open questions over 7 capability dimensions.

The public schema is not available here, so the loader accepts JSON lists, JSON Lines, TSV and
CSV files (a file, or every such file directly inside a folder) with these field aliases, and
fails naming the file, record and field on anything else:

- id: ``id`` | ``index`` | ``question_id`` | ``qid``
- question: ``question`` | ``query``
- options: ``options`` (object or list) | ``A`` … ``E`` | ``option_A`` … ``option_E``
  (present → ``choice``, absent → ``open``)
- answer: ``answer`` | ``label`` | ``gt_answer`` | ``gt`` (a letter or an option's text)
- dimension: ``dimension`` | ``capability`` | ``category`` — one of SOD, FDD, SU, TP, CR, LTG,
  MSI (any case)
- images: ``image_path`` | ``image`` | ``images`` (list) | ``img_path`` — relative to the file
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from medlens.core.errors import InputError
from medlens.core.items import Benchmark, ImageRef, Item
from medlens.core.specs import Spec
from medlens.sources import native

SPLITS = ("test",)
DIMENSIONS = ("SOD", "FDD", "SU", "TP", "CR", "LTG", "MSI")
KINDS = ("choice", "open", "all")
ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("id", "index", "question_id", "qid"),
    "question": ("question", "query"),
    "answer": ("answer", "label", "gt_answer", "gt"),
    "dimension": ("dimension", "capability", "category"),
    "images": ("image_path", "image", "images", "img_path"),
}
_OPTION_FIELDS = ("options", *"ABCDE", *(f"option_{c}" for c in "ABCDE"))


def load_medcmr(spec: Spec) -> Benchmark:
    """``medcmr:DIR|FILE[?kind=choice|open|all]``."""
    root = native.open_spec(spec, {"kind"}, want="any")
    kind = native.choose_option(spec, "kind", KINDS, "all")
    files = native.data_files(root, (".json", ".jsonl", ".tsv", ".csv"))

    def iter_items() -> Iterator[Item]:
        for path in files:
            prefix = f"{path.stem}-" if len(files) > 1 else ""
            for where, record in native.read_any(path):
                item = _item(record, path, where, prefix)
                if kind in ("all", item.kind):
                    yield item

    return native.make_benchmark(spec, "test", iter_items, description=f"Med-CMR ({kind})")


def _field(record: native.Record, name: str, path: Path, where: str) -> str:
    key, value = native.pick(record, ALIASES[name])
    if value is None:
        raise InputError(
            path, f"{where}, field {key!r}", f"missing (accepted names: {', '.join(ALIASES[name])})"
        )
    return str(value).strip()


def _item(record: native.Record, path: Path, where: str, prefix: str) -> Item:
    dimension = _field(record, "dimension", path, where).upper()
    if dimension not in DIMENSIONS:
        raise InputError(
            path,
            f"{where}, field 'dimension'",
            f"{dimension!r} is not one of {', '.join(DIMENSIONS)}",
        )
    options = native.options_from(record, path, where)
    answer = _field(record, "answer", path, where)
    skip = {"question", "query", *ALIASES["answer"], *_OPTION_FIELDS}
    meta = native.native_meta(record, skip=tuple(skip))
    meta.update(
        dimension=dimension,
        source=meta.get("source", "medcmr"),
        split="test",
        answer_type="closed" if options else "open",
    )
    images = _images(record, path, where)
    if images:
        meta["image_id"] = images[0].name
    common: dict[str, Any] = {
        "id": prefix + _field(record, "id", path, where),
        "question": _field(record, "question", path, where),
        "images": images,
        "meta": meta,
    }
    if options:
        letter = native.letter_of(options, answer, path, where)
        return Item(kind="choice", options=options, answer=letter, **common)
    return Item(kind="open", answer=answer, **common)


def _images(record: native.Record, path: Path, where: str) -> tuple[ImageRef, ...]:
    key, value = native.pick(record, ALIASES["images"])
    if value is None:
        return ()
    if isinstance(value, str) and value.strip().startswith("["):
        value = native.parse_json_cell(value, path, f"{where}, field {key!r}")
    names = value if isinstance(value, list) else [value]
    return tuple(
        native.file_image(path.parent, str(n), path, f"{where}, field {key!r}") for n in names
    )


# Licence, access and citation of this source (read by medlens.sources.cards; see docs/design.md).
CARD = {
    "licence": "not stated in any source medlens could cite (the arXiv paper is CC BY 4.0; the data's terms are on the project page)",
    "access": "open",
    "homepage": "https://github.com/LsmnBmnc/Med-CMR",
    "citation": """@inproceedings{gong2026medcmr,
  title = {Med-CMR: A Fine-Grained Benchmark Integrating Visual Evidence and Clinical Logic for Medical Complex Multimodal Reasoning},
  author = {Gong, Haozhen and Ji, Xiaozhong and Liu, Yuansen and Wu, Wenbin and Yan, Xiaoxiao and Liu, Jingjing and Wu, Kai and Pan, Jiazhen and Jian, Bailiang and Zhang, Jiangning and Hu, Xiaobin and Li, Hongwei Bran},
  booktitle = {Proceedings of the IEEE/CVF Conference on Computer Vision and Pattern Recognition (CVPR)},
  year = {2026},
  eprint = {2512.00818},
  archivePrefix = {arXiv}
}""",
}

"""Med-CMR (CVPR 2026): 5-option MCQ and open questions over 7 capability dimensions, read
through its released schema exactly.

The release (Hugging Face ``aaassddaadf/Med-CMR``, revision a9b2d6e, ``dataset.zip``; linked
from github.com/LsmnBmnc/Med-CMR) unpacks to ``dataset/`` holding two JSON lists and the images
(``dataset/imgs/*.png``); the schema below is the one a verified unpacking of that archive
checks (read through the search tool; the repository has no loader of its own):

- ``dataset/cmed.copy.mcq_cate.cleaned.json``: 16,655 MCQ records with the fields
  :data:`FIELDS` and the options ``A`` … ``E``;
- ``dataset/cmed.copy.open_taged.cleaned.json``: 3,999 open records with :data:`FIELDS` (the
  paper counts 3,998);
- :data:`FIELDS`: ``index``, ``question``, ``image_path`` (from the folder that holds
  ``dataset/``), ``answer`` (MCQ: the letter), ``visual_description`` (the reference
  description of the image: answer-revealing, never copied into an item), ``task`` (the
  capability dimension), ``subtype``, ``question type``, ``modality``, ``organ system``.

``medcmr:DIR`` reads the unpacked release (DIR holding ``dataset/``, or ``dataset/`` itself);
``medcmr:FILE.json`` one of its files (``.jsonl``: the same records one per line, as a subset
keeps them). A record without one of the released fields — a renamed field included — is
refused in one line naming the file, the record and the field (and the field's likely new
name), exit 2. Items are ``mcq-INDEX`` (choice) and ``open-INDEX`` (open); the dimension is
``task`` as the code (SOD … MSI) or the paper's name of it (``Small Object Detection`` …, any
case, spaces, hyphens or underscores); ``organ system`` is the ``body_system`` axis.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from medlens.core.errors import InputError
from medlens.core.items import Benchmark, ImageRef, Item
from medlens.core.specs import Spec
from medlens.sources import native

SPLITS = ("test",)
DIMENSIONS = ("SOD", "FDD", "SU", "TP", "CR", "LTG", "MSI")
DIMENSION_NAMES = {
    "SOD": "small object detection", "FDD": "fine detail discrimination",
    "SU": "spatial understanding", "TP": "temporal prediction", "CR": "causal reasoning",
    "LTG": "long tail generalization", "MSI": "multi source integration",
}  # fmt: skip
"""The paper's names of its seven dimensions (visual: SOD, FDD, SU; reasoning: the others)."""
KINDS = ("choice", "open", "all")
RELEASE_FILES = {
    "mcq": "cmed.copy.mcq_cate.cleaned.json",
    "open": "cmed.copy.open_taged.cleaned.json",
}
FIELDS = ("index", "question", "image_path", "answer", "visual_description", "task",
          "subtype", "question type", "modality", "organ system")  # fmt: skip
OPTION_FIELDS = ("A", "B", "C", "D", "E")
FILLED = ("index", "question", "image_path", "answer", "task", *OPTION_FIELDS)
"""Fields an item cannot do without (the others may be empty)."""
NEVER_IN_META = ("index", "question", "answer", "visual_description", "image_path", "task",
                 *OPTION_FIELDS)  # fmt: skip
"""The id, the item's own parts, the answer-revealing description, and ``task`` (the
``dimension`` axis holds it)."""
_FOLD = re.compile(r"[^a-z0-9]+")


def load_medcmr(spec: Spec) -> Benchmark:
    """``medcmr:DIR|FILE[?kind=choice|open|all]``."""
    root = native.open_spec(spec, {"kind"}, want="any")
    kind = native.choose_option(spec, "kind", KINDS, "all")
    files = release_files(root)

    def iter_items() -> Iterator[Item]:
        for path in files:
            named = file_form(path)
            for where, record in native.read_records(path):
                item = _item(record, path, where, named or record_form(record))
                if kind in ("all", item.kind):
                    yield item

    return native.make_benchmark(spec, "test", iter_items, description=f"Med-CMR ({kind})")


def release_files(root: Path) -> list[Path]:
    """A file itself, the release's two JSON files (in ``root/dataset/`` or ``root``), else the
    ``.json`` / ``.jsonl`` files directly in the folder."""
    if root.is_file():
        if root.suffix.lower() not in (".json", ".jsonl"):
            raise InputError(root, None, "unsupported file type; Med-CMR is released as .json")
        return [root]
    for folder in (root / "dataset", root):
        found = [folder / name for name in RELEASE_FILES.values() if (folder / name).is_file()]
        if found:
            return found
    return native.data_files(root, (".json", ".jsonl"))


def file_form(path: Path) -> str | None:
    """``mcq`` or ``open`` by the file's name (the release names both), else None."""
    name = path.name.lower()
    if "mcq" in name or "open" in name:
        return "mcq" if "mcq" in name else "open"
    return None


def record_form(record: native.Record) -> str:
    """``mcq`` for a record with options (a file of another name), else ``open``."""
    return "mcq" if any(letter in record for letter in OPTION_FIELDS) else "open"


def _item(record: native.Record, path: Path, where: str, form: str) -> Item:
    _check_fields(record, path, where, form)
    dimension = dimension_of(str(record["task"]), path, where)
    meta = native.native_meta(record, skip=NEVER_IN_META)
    for native_name in ("question type", "organ system"):
        meta.pop(native_name, None)
    meta.update(
        dimension=dimension,
        question_type=str(record["question type"]).strip(),
        body_system=str(record["organ system"]).strip(),
        source="medcmr",
        split="test",
        answer_type="closed" if form == "mcq" else "open",
    )
    images = _image(record, path, where)
    meta["image_id"] = images[0].name
    index = str(record["index"]).strip()
    common: dict[str, Any] = {
        "id": f"{form}-{index}",
        "question": str(record["question"]).strip(),
        "images": images,
        "meta": meta,
    }
    answer = str(record["answer"]).strip()
    if form == "mcq":
        options = {letter: str(record[letter]).strip() for letter in OPTION_FIELDS}
        letter = native.letter_of(options, answer, path, where)
        return Item(kind="choice", options=options, answer=letter, **common)
    return Item(kind="open", answer=answer, **common)


def _check_fields(record: native.Record, path: Path, where: str, form: str) -> None:
    """Every released field present; those an item is made of (:data:`FILLED`) non-empty."""
    wanted = (*FIELDS, *OPTION_FIELDS) if form == "mcq" else FIELDS
    for field in wanted:
        value = record.get(field)
        if value is None or (field in FILLED and not str(value).strip()):
            raise InputError(path, f"{where}, field {field!r}", _missing(field, record, form))


def _missing(field: str, record: native.Record, form: str) -> str:
    """Why a released field is missing, naming the field this record has in its place."""
    folded = _FOLD.sub("", field.lower())
    renamed = [k for k in record if k not in FIELDS and _FOLD.sub("", k.lower()) == folded]
    said = "missing" if field not in record else "empty"
    hint = f" (this record has {renamed[0]!r}: not the released name)" if renamed else ""
    kind = "MCQ" if form == "mcq" else "open"
    return f"{said}{hint}; Med-CMR's released {kind} records have {', '.join(FIELDS)}" + (
        ", A, B, C, D, E" if form == "mcq" else ""
    )


def dimension_of(text: str, path: Path, where: str) -> str:
    """The dimension code of a ``task`` value: a code or the paper's name of the dimension."""
    folded = _FOLD.sub(" ", text.lower()).strip()
    for code, name in DIMENSION_NAMES.items():
        if folded in (code.lower(), name) or folded.replace(" ", "") == name.replace(" ", ""):
            return code
        if folded.endswith(f" {code.lower()}") and folded.startswith(name):  # "Name (CODE)"
            return code
    raise InputError(
        path,
        f"{where}, field 'task'",
        f"{text!r} is none of Med-CMR's dimensions ({', '.join(DIMENSIONS)} or their names)",
    )


def _image(record: native.Record, path: Path, where: str) -> tuple[ImageRef, ...]:
    """``image_path`` from the folder holding ``dataset/`` (the release), else the file's own."""
    relative = str(record["image_path"]).strip()
    for base in (path.parent.parent, path.parent):
        candidate = (base / relative).resolve()
        if candidate.is_file() and candidate.is_relative_to(base.resolve()):
            return (native.file_image(base, relative, path, f"{where}, field 'image_path'"),)
    raise InputError(
        path,
        f"{where}, field 'image_path'",
        f"image {relative!r} not found under {path.parent.parent} or {path.parent}",
    )


# Licence, access and citation of this source (read by medlens.sources.cards; decision 0009).
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

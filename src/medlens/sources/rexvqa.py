"""ReXVQA (Pal et al., 2025): chest X-ray VQA over the studies of ReXGradient-160K.

The release (``rajpurkarlab/ReXVQA``, gated) holds ``metadata/{train,valid,test}_vqa_data.json``:
one JSON object keyed by question id, each value a record with ``question``, ``options`` (four
texts written ``"A. …"``), ``correct_answer`` (a letter), ``correct_answer_explanation``,
``task_name`` (presence assessment, location analysis, negation detection, differential
diagnosis, geometric information), ``category``, ``class``, ``subcategory``, ``study_id``,
``StudyInstanceUid``, the report (``Indication``, ``Findings``, ``Impression``, …), the patient
fields and ``ImagePath``: the study's images (frontal and lateral views, ``ImageViewPosition``)
as ``../deid_png/<patient>/<accession>/…/<instance>.png``, relative to ``metadata/``. The PNGs
are ReXGradient-160K's (``rajpurkarlab/ReXGradient-160K``, ``deid_png.part*`` archive).

``rexvqa:DIR`` reads the release folder; the images are looked up under ``?images=DIR`` (the
folder the ``deid_png/`` archive was extracted into; default DIR itself, where ``../deid_png``
from ``metadata/`` points). Every question is one ``choice`` item with all its study's images
in the listed order; a listed image that is not there refuses the benchmark (file, question id,
field). The paper: about 696,000 questions on 160,000 studies across the three splits.
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

SPLITS = ("test", "valid", "train")
_LETTERED = re.compile(r"^\(?([A-Z])[.):]\s*(.*)$", re.DOTALL)
_SKIP = ("question", "options", "correct_answer")


def load_rexvqa(spec: Spec) -> Benchmark:
    """``rexvqa:DIR[?split=test|valid|train&images=DIR]``."""
    root = native.open_spec(spec, {"split", "images"})
    split = native.choose_option(spec, "split", SPLITS, "test")
    name = f"{split}_vqa_data.json"
    path = native.first_existing(
        [root / "metadata" / name, root / name], f"ReXVQA {split} file", root
    )
    images = Path(spec.option("images") or root).expanduser().resolve()
    if not images.is_dir():
        raise InputError(images, None, "?images= must be the folder holding deid_png/")

    def iter_items() -> Iterator[Item]:
        data = native.read_json(path)
        if not isinstance(data, dict):
            raise InputError(path, None, "expected one JSON object keyed by question id")
        for question_id, record in data.items():
            where = f"question {question_id!r}"
            if not isinstance(record, dict):
                raise InputError(path, where, "expected a JSON object")
            yield _item(str(question_id), record, path, where, images, split)

    return native.make_benchmark(spec, split, iter_items, description=f"ReXVQA {split}")


def _item(question_id: str, record: dict[str, Any], path: Path, where: str, images: Path,
          split: str) -> Item:  # fmt: skip
    options = _options(record.get("options"), path, where)
    answer = native.text(record, "correct_answer", path, where).upper().rstrip(".")
    if answer not in options:
        raise InputError(
            path, f"{where}, field 'correct_answer'", f"{answer!r} is none of the option letters"
        )
    refs = _images(record.get("ImagePath"), path, where, images)
    meta = native.native_meta(record, skip=_SKIP)
    meta.update(source="rexvqa", split=split, lang="en", modality="X-ray", body_system="chest",
                answer_type="closed", n_images=str(len(refs)))  # fmt: skip
    if meta.get("task_name"):
        meta["task"] = meta["task_name"]
    meta["image_id"] = meta.get("study_id") or meta.get("StudyInstanceUid") or refs[0].name
    question = native.text(record, "question", path, where)
    return Item(
        question_id, question, "choice", options=options, answer=answer, images=refs, meta=meta
    )


def _options(raw: Any, path: Path, where: str) -> dict[str, str]:
    """``["A. text", …]`` as letter → text (the written letter must be the position's)."""
    if not isinstance(raw, list) or len(raw) < 2:
        raise InputError(path, f"{where}, field 'options'", "expected a list of at least 2 options")
    options: dict[str, str] = {}
    for position, value in enumerate(raw):
        letter, text = native.LETTERS[position], str(value).strip()
        match = _LETTERED.match(text)
        if match and match.group(1) == letter:
            text = match.group(2).strip()
        options[letter] = text
    return options


def _images(raw: Any, path: Path, where: str, images: Path) -> tuple[ImageRef, ...]:
    listed = [raw] if isinstance(raw, str) else raw
    if not isinstance(listed, list) or not listed:
        raise InputError(
            path, f"{where}, field 'ImagePath'", "expected the list of the study's images"
        )
    refs = []
    for position, value in enumerate(listed):
        relative = re.sub(r"^(\.\./|\./)+", "", str(value).replace("\\", "/").strip())
        refs.append(
            native.file_image(images, relative, path, f"{where}, field 'ImagePath[{position}]'")
        )
    return tuple(refs)


CARD = {
    "licence": "ReXVQA and ReXGradient-160K dataset terms (gated on the Hugging Face Hub: "
    "accept the terms; research use)",
    "access": "registration",
    "access_note": "ReXVQA and ReXGradient-160K are gated: accept their terms on the Hugging "
    "Face Hub before use",
    "homepage": "https://huggingface.co/datasets/rajpurkarlab/ReXVQA",
    "citation": """@article{pal2025rexvqa,
  title = {ReXVQA: A Large-scale Visual Question Answering Benchmark for Generalist Chest X-ray Understanding},
  author = {Pal, Ankit and Lee, Jung-Oh and Zhang, Xiaoman and Sankarasubbu, Malaikannan and Roh, Seunghyeon and Kim, Won Jung and Lee, Meesun and Rajpurkar, Pranav},
  journal = {arXiv preprint arXiv:2506.04353},
  year = {2025}
}""",
}

"""MedXpertQA (Zuo et al. 2025): ``MM/{test,dev}.jsonl`` (+ ``images/``), ``Text/{test,dev}.jsonl``.

Records: ``id``, ``question`` (ends with the options re-typed after "Answer Choices:", which is
cut so the prompt lists them once), ``options`` (letter → text; 5 for MM, 10 for Text),
``label`` (letter), ``images`` (file names under ``images/``, MM only), ``medical_task``
(→ ``task``), ``body_system``, ``question_type`` (Reasoning / Understanding).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from medlens.core.errors import InputError
from medlens.core.items import Benchmark, ImageRef, Item
from medlens.core.specs import Spec
from medlens.sources import native

SPLITS = ("dev", "test")
CONFIGS = {"mm": "MM", "text": "Text"}
_ANSWER_CHOICES = re.compile(r"\s*Answer Choices:\s*\(A\).*\Z", re.DOTALL)


def load_medxpertqa(spec: Spec) -> Benchmark:
    """``medxpertqa:DIR[?config=mm|text&split=test|dev]``."""
    root = native.open_spec(spec, {"config", "split"})
    config = native.choose_option(spec, "config", tuple(CONFIGS), "mm")
    split = native.choose_option(spec, "split", SPLITS, "test")
    folder = CONFIGS[config]
    path = native.first_existing(
        [root / folder / f"{split}.jsonl", root / f"{split}.jsonl"], f"{folder} {split} file", root
    )
    images = next((p for p in (root / "images", root / folder / "images") if p.is_dir()), root)

    def iter_items() -> Iterator[Item]:
        for where, record in native.read_jsonl(path):
            yield _item(record, path, where, images, split, config)

    return native.make_benchmark(
        spec, split, iter_items, description=f"MedXpertQA {folder} {split}"
    )


def _item(
    record: native.Record, path: Path, where: str, images: Path, split: str, config: str
) -> Item:
    options = record.get("options")
    if not isinstance(options, dict) or len(options) < 2:
        raise InputError(path, f"{where}, field 'options'", "expected an object letter → text")
    options = {str(k).strip(): str(v).strip() for k, v in options.items()}
    label = native.text(record, "label", path, where)
    if label not in options:
        raise InputError(path, f"{where}, field 'label'", f"{label!r} is none of the options")
    names = record.get("images") or []
    if not isinstance(names, list):
        raise InputError(path, f"{where}, field 'images'", "expected a list of file names")
    refs: tuple[ImageRef, ...] = tuple(
        native.file_image(images, str(name), path, f"{where}, field 'images'") for name in names
    )
    meta = native.native_meta(record, skip=("question", "options", "label"))
    meta.update(source=f"medxpertqa-{config}", lang="en", split=split)
    if "medical_task" in meta:
        meta["task"] = meta["medical_task"]
    if refs:
        meta["image_id"] = refs[0].name
    question = _ANSWER_CHOICES.sub("", native.text(record, "question", path, where))
    return Item(
        id=native.text(record, "id", path, where),
        question=question,
        kind="choice",
        options=options,
        answer=label,
        images=refs,
        meta=meta,
    )


# Licence, access and citation of this source (read by medlens.sources.cards; decision 0009).
CARD = {
    "licence": "MIT (TsinghuaC3I/MedXpertQA)",
    "access": "open",
    "homepage": "https://medxpertqa.github.io",
    "citation": """@inproceedings{zuo2025medxpertqa,
  title = {MedXpertQA: Benchmarking Expert-Level Medical Reasoning and Understanding},
  author = {Zuo, Yuxin and Qu, Shang and Li, Yifei and Chen, Zhangren and Zhu, Xuekai and Hua, Ermo and Zhang, Kaiyan and Ding, Ning and Zhou, Bowen},
  booktitle = {International Conference on Machine Learning (ICML)},
  year = {2025},
  eprint = {2501.18362},
  archivePrefix = {arXiv}
}""",
}

"""MMMU's medical subjects (Yue et al., CVPR 2024): the release as published, per-subject parquet.

MMMU is released as the Hugging Face repository ``MMMU/MMMU`` itself: one folder per subject,
``<Subject>/{dev,validation,test}-00000-of-00001.parquet``, every file with the columns ``id``
(``validation_Clinical_Medicine_1``), ``question``, ``options`` (a Python-list literal, ``"['a',
'b']"``, ``"[]"`` for open questions), ``explanation``, ``image_1`` … ``image_7`` (``datasets``
Image structs; empty cells after the last image), ``img_type`` (a list literal such as ``"['Body
Scans: MRI, CT.']"``), ``answer`` (a letter; the text of an open answer; ``?`` where the split
hides it), ``topic_difficulty``, ``question_type`` (``multiple-choice`` / ``open``) and
``subfield``. Questions and options refer to their images as ``<image N>``.

``mmmu:DIR`` reads a clone or snapshot of that repository (``hfds:MMMU/MMMU`` reads it from the
Hub cache through the same loader). The medical subjects are MMMU's Health & Medicine discipline:
Basic_Medical_Science, Clinical_Medicine, Diagnostics_and_Laboratory_Medicine, Pharmacy,
Public_Health (dev 5, validation 30 each; test 326, 325, 162, 430, 509 = 1,752, answers hidden).
A question's images are sent in ``image_N`` order and its text keeps the ``<image N>`` tags, so
the N-th image sent is ``<image N>``; an image a question refers to whose cell is empty, or an
empty cell before a filled one, is a missing image and refuses the benchmark.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

from medlens.core.errors import InputError
from medlens.core.items import Benchmark, Item, ItemKind
from medlens.core.specs import Spec
from medlens.sources import native
from medlens.sources.hfds_presets import MMMU_MEDICAL
from medlens.sources.image_columns import ImageRow, image_rows, ordered_images, table_columns

MEDICAL_SUBJECTS = MMMU_MEDICAL
SPLITS = ("validation", "dev", "test")
PUBLISHED_COUNTS = {
    "dev": dict.fromkeys(MEDICAL_SUBJECTS, 5),
    "validation": dict.fromkeys(MEDICAL_SUBJECTS, 30),
    "test": dict(zip(MEDICAL_SUBJECTS, (326, 325, 162, 430, 509), strict=True)),
}
"""Items per subject and split as the dataset card's ``dataset_info`` states them."""
HIDDEN_ANSWERS = ("", "?")
_IMAGE_TAG = re.compile(r"<image (\d+)>")


def load_mmmu(spec: Spec) -> Benchmark:
    """``mmmu:DIR[?split=validation|dev|test&subjects=A,B,...]`` (default: the five medical ones)."""
    root = native.open_spec(spec, {"split", "subjects"})
    split = native.choose_option(spec, "split", SPLITS, "validation")
    subjects = _subjects(spec)
    files = {subject: _split_files(root, subject, split) for subject in subjects}

    def iter_items() -> Iterator[Item]:
        for subject, paths in files.items():
            text, images = table_columns(paths[0])
            for row in image_rows(paths, text, images):
                yield _item(row, images, subject, split)

    return native.make_benchmark(
        spec, split, iter_items, has_answers=split != "test",
        description=f"MMMU {split}, {len(subjects)} subject(s): {', '.join(subjects)}",
    )  # fmt: skip


def _subjects(spec: Spec) -> tuple[str, ...]:
    asked = spec.option("subjects")
    if not asked:
        return MEDICAL_SUBJECTS
    return tuple(s.strip() for s in asked.split(",") if s.strip())


def _split_files(root: Path, subject: str, split: str) -> list[Path]:
    folder = root / subject
    found = sorted(folder.glob(f"{split}-*.parquet")) if folder.is_dir() else []
    if not found:
        have = sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
        raise InputError(root, None, f"no {subject}/{split}-*.parquet (subject folders here: "
                         f"{', '.join(have[:8]) or 'none'})")  # fmt: skip
    return found


def _item(row: ImageRow, images: Sequence[str], subject: str, split: str) -> Item:
    record, where = row.record, f"row {row.row}"
    item_id = native.text(record, "id", row.path, where)
    question = native.text(record, "question", row.path, where)
    options = _options(record.get("options"), row.path, where)
    _check_references(row, images, question, options)
    refs = ordered_images(row, images, item_id)
    kind: ItemKind = "choice" if options else "open"
    answer = _answer(record.get("answer"), options, row.path, where)
    meta = native.native_meta(record, skip=("id", "question", "options", "answer"))
    meta.update(source="mmmu", subject=subject, department=subject.replace("_", " "),
                split=split, lang="en", answer_type="closed" if options else "open",
                n_images=str(len(refs)))  # fmt: skip
    if meta.get("subfield"):
        meta["task"] = meta["subfield"]
    if refs:
        meta["image_id"] = refs[0].name
    return Item(item_id, question, kind, options=options, answer=answer, images=refs, meta=meta)


def _options(raw: object, path: Path, where: str) -> dict[str, str]:
    """The options literal as letter → text (empty for an open question)."""
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return {}
    try:
        values = ast.literal_eval(raw) if isinstance(raw, str) else raw
    except (ValueError, SyntaxError):
        raise InputError(path, f"{where}, field 'options'", "not a list literal") from None
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise InputError(path, f"{where}, field 'options'", "expected a list of texts")
    return native.letter_options([v.strip() for v in values])


def _answer(raw: object, options: dict[str, str], path: Path, where: str) -> str | None:
    text = "" if raw is None else str(raw).strip()
    if text in HIDDEN_ANSWERS:
        return None
    if options and text not in options:
        raise InputError(
            path, f"{where}, field 'answer'", f"{text!r} is none of the option letters"
        )
    return text


def _check_references(row: ImageRow, images: Sequence[str], question: str,
                      options: dict[str, str]) -> None:  # fmt: skip
    """Every ``<image N>`` the question or its options name must have its cell filled."""
    for field, text in (("question", question), *((f"option {k}", v) for k, v in options.items())):
        for number in sorted({int(n) for n in _IMAGE_TAG.findall(text)}):
            column = f"image_{number}"
            held = column in images and row.present[images.index(column)]
            if not held:
                raise InputError(row.path, f"row {row.row}, field {column!r}",
                                 f"empty, but the {field} refers to <image {number}>: a missing image")  # fmt: skip


CARD = {
    "licence": "Apache 2.0 (MMMU/MMMU dataset card); questions collected from textbooks and "
    "online sources, each keeping its source's terms",
    "access": "open",
    "homepage": "https://mmmu-benchmark.github.io",
    "citation": """@inproceedings{yue2024mmmu,
  title = {MMMU: A Massive Multi-discipline Multimodal Understanding and Reasoning Benchmark for Expert AGI},
  author = {Yue, Xiang and Ni, Yuansheng and Zhang, Kai and Zheng, Tianyu and Liu, Ruoqi and Zhang, Ge and Stevens, Samuel and Jiang, Dongfu and Ren, Weiming and Sun, Yuxuan and Wei, Cong and Yu, Botao and Yuan, Ruibin and Sun, Renliang and Yin, Ming and Zheng, Boyuan and Yang, Zhenzhu and Liu, Yibo and Huang, Wenhao and Sun, Huan and Su, Yu and Chen, Wenhu},
  booktitle = {Proceedings of the IEEE/CVF Conference on Computer Vision and Pattern Recognition (CVPR)},
  year = {2024},
  eprint = {2311.16502},
  archivePrefix = {arXiv}
}""",
}

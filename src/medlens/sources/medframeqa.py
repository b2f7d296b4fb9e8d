"""MedFrameQA (Yu et al., 2025): multi-image medical VQA, 2 to 5 ordered video frames a question.

Two layouts, told apart by what the folder holds:

- **Hub** (``SuhaoYu1020/MedFrameQA``): ``data/test-*.parquet`` with ``question_id``, ``system``,
  ``organ``, ``keyword``, ``modality``, ``video_id``, ``question``, ``options`` (a list of texts),
  ``correct_answer`` (a letter), ``image_url`` and the frames in ``image_1`` … ``image_5``
  (``datasets`` Image structs; the cells after a question's last frame are empty).
- **Release JSON** (the ``MedFrameQA.json`` the repository first held and the authors' pipeline
  writes): a list of records with the same fields and ``image_path``, the frame files in order,
  relative to the JSON's folder (or ``?images=DIR``).

Every question is one ``choice`` item whose images are its frames in their temporal order. The
card's counts: 2,851 questions over 9,237 frames from 3,420 videos, nine body systems, 43 organs.
A frame that is missing (an empty cell before a filled one, a listed file that does not exist) or
a question with fewer than two frames refuses the benchmark, naming the file, row and field.
Axes: ``body_system`` (``system``), ``modality``, ``task`` (``organ``); ``image_id`` is the video,
so questions cut from one video are one cluster.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from medlens.core.errors import InputError
from medlens.core.items import Benchmark, ImageRef, Item
from medlens.core.specs import Spec
from medlens.sources import native
from medlens.sources.image_columns import image_rows, ordered_images, table_columns

RELEASE_NAMES = ("MedFrameQA.json", "data/MedFrameQA.json")
MIN_FRAMES, MAX_FRAMES = 2, 5
PUBLISHED = {"questions": 2851, "frames": 9237, "videos": 3420}
_SKIP = ("question_id", "question", "options", "correct_answer", "image_path")


def load_medframeqa(spec: Spec) -> Benchmark:
    """``medframeqa:DIR|FILE.json[?images=DIR]``: the Hub parquet or the release JSON."""
    root = native.open_spec(spec, {"images"}, want="any")
    release = _release_file(root)
    if release is not None:
        images = Path(spec.option("images") or release.parent).expanduser().resolve()
        return native.make_benchmark(
            spec, "test", lambda: _release_items(release, images),
            description=f"MedFrameQA release JSON ({release.name})",
        )  # fmt: skip
    if spec.option("images"):
        raise InputError(
            root, None, "?images= is for the release JSON; the Hub parquet holds its frames"
        )
    files = sorted(p for p in root.rglob("*.parquet") if "test" in p.name)
    if not files:
        raise InputError(root, None, "no MedFrameQA.json and no test-*.parquet here")
    return native.make_benchmark(
        spec, "test", lambda: _table_items(files), description="MedFrameQA (Hub parquet)"
    )


def _release_file(root: Path) -> Path | None:
    if root.is_file():
        return root if root.suffix == ".json" else None
    return next((root / name for name in RELEASE_NAMES if (root / name).is_file()), None)


def _table_items(files: list[Path]) -> Iterator[Item]:
    text, images = table_columns(files[0])
    for row in image_rows(files, text, images):
        item_id = native.text(row.record, "question_id", row.path, f"row {row.row}")
        refs = ordered_images(row, images, item_id)
        _check_count(len(refs), row.path, f"row {row.row}, field {images[0]!r}")
        yield _item(row.record, refs, row.path, f"row {row.row}")


def _release_items(path: Path, images: Path) -> Iterator[Item]:
    for where, record in native.read_records(path):
        listed = record.get("image_path")
        names = [listed] if isinstance(listed, str) else listed
        if not isinstance(names, list):
            raise InputError(
                path, f"{where}, field 'image_path'", "expected the list of frame files"
            )
        refs = tuple(
            native.file_image(images, str(name), path, f"{where}, field 'image_path[{i}]'")
            for i, name in enumerate(names)
        )
        _check_count(len(refs), path, f"{where}, field 'image_path'")
        yield _item(record, refs, path, where)


def _check_count(count: int, path: Path, where: str) -> None:
    if not MIN_FRAMES <= count <= MAX_FRAMES:
        problem = f"{count} frame(s); MedFrameQA questions have {MIN_FRAMES} to {MAX_FRAMES}"
        raise InputError(path, where, problem + (": a missing image" if count < MIN_FRAMES else ""))


def _item(record: dict[str, Any], refs: tuple[ImageRef, ...], path: Path, where: str) -> Item:
    options = native.options_from({"options": record.get("options")}, path, where)
    if len(options) < 2:
        raise InputError(path, f"{where}, field 'options'", "expected a list of at least 2 options")
    answer = native.text(record, "correct_answer", path, where).upper()
    if answer not in options:
        raise InputError(
            path, f"{where}, field 'correct_answer'", f"{answer!r} is none of the option letters"
        )
    meta = native.native_meta(record, skip=_SKIP)
    meta.update(source="medframeqa", split="test", lang="en", answer_type="closed",
                n_images=str(len(refs)))  # fmt: skip
    if meta.get("system"):
        meta["body_system"] = meta["system"]
    if meta.get("organ"):
        meta["task"] = meta["organ"]
    meta["image_id"] = meta.get("video_id") or refs[0].name
    item_id = native.text(record, "question_id", path, where)
    question = native.text(record, "question", path, where)
    return Item(item_id, question, "choice", options=options, answer=answer, images=refs, meta=meta)


CARD = {
    "licence": "CC BY 4.0 (SuhaoYu1020/MedFrameQA dataset card); frames from public "
    "YouTube medical-education videos",
    "access": "open",
    "homepage": "https://ucsc-vlaa.github.io/MedFrameQA/",
    "citation": """@article{yu2025medframeqa,
  title = {MedFrameQA: A Multi-Image Medical VQA Benchmark for Clinical Reasoning},
  author = {Yu, Suhao and Wang, Haojin and Wu, Juncheng and Xie, Cihang and Zhou, Yuyin},
  journal = {arXiv preprint arXiv:2505.16964},
  year = {2025}
}""",
}

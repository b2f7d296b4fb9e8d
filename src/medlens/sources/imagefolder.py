"""Any image-classification set laid out as one sub-folder per class: ``DIR/<label>/<image>``.

Items are ``classify`` questions whose gold is the folder name; the label set (all folder names,
sorted) is in ``meta["labels"]`` joined by ``|`` and listed in the question. Genomics pileup
images (classes ``ref`` / ``het`` / ``hom-alt``, MultiMedBench) are served this way.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from medlens.core.errors import InputError
from medlens.core.items import Benchmark, Item
from medlens.core.specs import Spec
from medlens.sources import native
from medlens.sources.image_paths import resolve_inside

IMAGE_SUFFIXES = (
    ".png",
    ".jpg",
    ".jpeg",
    ".bmp",
    ".tif",
    ".tiff",
    ".gif",
    ".webp",
    ".dcm",
    ".dicom",
)
DEFAULT_QUESTION = "Which class does this image belong to? Answer with one of: {labels}."


def load_imagefolder(spec: Spec) -> Benchmark:
    """``imagefolder:DIR[?split=NAME&question=TEXT]`` (``{labels}`` in TEXT lists the classes)."""
    root = native.open_spec(spec, {"split", "question"})
    split = spec.option("split") or ""
    if split:
        root = native.first_existing([root / split], f"split folder {split!r}", root)
    labels = sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
    if len(labels) < 2:
        raise InputError(root, None, "expected at least two class folders (one folder per class)")
    template = spec.option("question") or DEFAULT_QUESTION
    question = template.replace("{labels}", ", ".join(labels))

    def iter_items() -> Iterator[Item]:
        for label in labels:
            for image in sorted((root / label).rglob("*")):
                if image.is_file() and image.suffix.lower() in IMAGE_SUFFIXES:
                    yield _item(root, image, label, labels, question, split)

    return native.make_benchmark(
        spec,
        split or "test",
        iter_items,
        description=f"image folder {root.name}: {len(labels)} classes ({', '.join(labels)})",
    )


def _item(
    root: Path, image: Path, label: str, labels: list[str], question: str, split: str
) -> Item:
    name = image.relative_to(root).as_posix()
    meta = {
        "labels": "|".join(labels),
        "source": root.name,
        "image_id": name,
        "granularity": "image",
    }
    if split:
        meta["split"] = split
    return Item(
        id=name,
        question=question,
        kind="classify",
        answer=label,
        images=(native.image_ref(resolve_inside(root, name, root, f"image {name!r}"), name),),
        meta=meta,
    )


# Licence, access and citation of this source (read by medlens.sources.cards; decision 0009).
CARD = {
    "licence": "user data: the licence of the files you supply applies; medlens adds none",
    "access": "mixed",
    "homepage": "",
    "citation": "",
}

"""VinDr-Mammo breast-level BI-RADS classification (MultiMedBench's mammography task), from
its PhysioNet release (doi:10.13026/br2v-7517).

Layout (as released): ``breast-level_annotations.csv`` beside ``images/<study_id>/<image_id>.dicom``.
Columns read, as published: ``study_id``, ``series_id``, ``image_id``, ``laterality``,
``view_position``, ``breast_birads`` (``BI-RADS 1`` … ``BI-RADS 5``, the label),
``breast_density`` and ``split`` (``training`` / ``test``, the official split). One
``classify`` item per image over the five BI-RADS categories; ``study_id`` identifies the
exam, so ``medlens check`` compares exams across the two splits.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from medlens.core.errors import InputError
from medlens.core.items import Benchmark, Item
from medlens.core.specs import Spec
from medlens.sources import native
from medlens.sources.release_csv import find_table, read_release_table

CARD = {
    "licence": "PhysioNet Credentialed Health Data License 1.5.0",
    "access": "credentialed",
    "homepage": "https://physionet.org/content/vindr-mammo/1.0.0/",
    "citation": "@article{nguyen2023vindrmammo, title={VinDr-Mammo: A large-scale benchmark "
    "dataset for computer-aided diagnosis in full-field digital mammography}, "
    "author={Nguyen, Hieu T. and others}, journal={Scientific Data}, volume={10}, "
    "year={2023}, doi={10.1038/s41597-023-02100-7}}",
}
SPLITS = ("test", "training")
LABELS = tuple(f"BI-RADS {n}" for n in range(1, 6))
REQUIRED = ("study_id", "series_id", "image_id", "laterality", "view_position",
            "breast_birads", "breast_density", "split")  # fmt: skip
QUESTION = (
    "What is the BI-RADS assessment category of this breast ({laterality}, {view})? "
    "Answer with BI-RADS 1 to BI-RADS 5."
)


def load_vindr_mammo(spec: Spec) -> Benchmark:
    """``vindr-mammo:DIR[?split=test|training]``."""
    root = native.open_spec(spec, {"split"})
    split = native.choose_option(spec, "split", SPLITS, "test")
    table = find_table(root, ("breast-level_annotations.csv",))

    def iter_items() -> Iterator[Item]:
        for where, row in read_release_table(table, REQUIRED):
            if row["split"].lower() == split:
                yield _item(row, root, table, where)

    return native.make_benchmark(spec, split, iter_items, description=f"VinDr-Mammo ({split})")


def _item(row: dict[str, str], root: Path, table: Path, where: str) -> Item:
    label = " ".join(row["breast_birads"].split()).upper()
    if label not in LABELS:
        problem = f"{row['breast_birads']!r} is not one of {', '.join(LABELS)}"
        raise InputError(table, f"{where}, field 'breast_birads'", problem)
    relative = f"images/{row['study_id']}/{row['image_id']}.dicom"
    image = native.file_image(root, relative, table, f"{where}, field 'image_id'")
    meta = {key: value for key, value in row.items() if value}
    meta.update(labels="|".join(LABELS), image_id=row["image_id"], modality="mammography")
    question = QUESTION.format(laterality=row["laterality"], view=row["view_position"])
    return Item(
        id=row["image_id"], question=question, kind="classify", answer=label,
        images=(image,), meta=meta,
    )  # fmt: skip

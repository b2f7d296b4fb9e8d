"""PAD-UFES-20 skin-lesion classification (MultiMedBench's dermatology task), from its
Mendeley Data release (doi:10.17632/zr7vgbcyr2.1).

Layout (the release as downloaded): ``metadata.csv`` and the photographs under ``images/``
(split over ``imgs_part_1`` … folders; found by file name). Columns read, as published:
``patient_id``, ``lesion_id``, ``img_id`` (the image file name) and ``diagnostic`` (the label:
``ACK``, ``BCC``, ``MEL``, ``NEV``, ``SCC``, ``SEK``; Bowen's disease is filed under SCC);
``biopsed`` and the clinical fields are kept as native axes. The release has no official
split: every row is one ``test`` item, and ``patient_id`` lets ``medlens check`` see patients
shared across any split a user makes. Each item is a ``classify`` item over the six diagnoses
written out (so a model may answer "basal cell carcinoma"); scores: macro-F1 over the six
classes, and AUROC when the model returns probabilities.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from medlens.core.errors import InputError
from medlens.core.items import Benchmark, Item
from medlens.core.specs import Spec
from medlens.sources import native
from medlens.sources.release_csv import find_table, image_index, read_release_table

CARD = {
    "licence": "CC BY 4.0",
    "access": "open",
    "homepage": "https://data.mendeley.com/datasets/zr7vgbcyr2/1",
    "citation": "@article{pacheco2020padufes20, title={PAD-UFES-20: a skin lesion dataset "
    "composed of patient data and clinical images collected from smartphones}, "
    "author={Pacheco, Andre G. C. and others}, journal={Data in Brief}, volume={32}, "
    "year={2020}, doi={10.1016/j.dib.2020.106221}}",
}
SPLITS = ("test",)
DIAGNOSES = {
    "ACK": "actinic keratosis",
    "BCC": "basal cell carcinoma",
    "MEL": "melanoma",
    "NEV": "nevus",
    "SCC": "squamous cell carcinoma",
    "SEK": "seborrheic keratosis",
}
REQUIRED = ("patient_id", "lesion_id", "img_id", "diagnostic")
QUESTION = "Which skin lesion does this clinical photograph show?"


def load_pad_ufes(spec: Spec) -> Benchmark:
    """``pad-ufes:DIR`` (the folder holding ``metadata.csv`` and ``images/``)."""
    root = native.open_spec(spec, set())
    table = find_table(root, ("metadata.csv",))

    def iter_items() -> Iterator[Item]:
        images = image_index(root / "images" if (root / "images").is_dir() else root)
        for where, row in read_release_table(table, REQUIRED):
            yield _item(row, images, table, where)

    return native.make_benchmark(spec, "test", iter_items, description="PAD-UFES-20 (all rows)")


def _item(row: dict[str, str], images: dict[str, Path], table: Path, where: str) -> Item:
    code = row["diagnostic"].upper()
    if code not in DIAGNOSES:
        problem = f"{row['diagnostic']!r} is not one of {', '.join(DIAGNOSES)}"
        raise InputError(table, f"{where}, field 'diagnostic'", problem)
    name = row["img_id"]
    if name not in images:
        raise InputError(table, f"{where}, field 'img_id'", f"image {name!r} not found")
    meta = {key: value for key, value in row.items() if value}
    meta.update(labels="|".join(DIAGNOSES.values()), image_id=name, split="test",
                modality="dermatology photograph", diagnostic_code=code)  # fmt: skip
    return Item(
        id=name,
        question=QUESTION,
        kind="classify",
        answer=DIAGNOSES[code],
        images=(native.image_ref(images[name], name),),
        meta=meta,
    )

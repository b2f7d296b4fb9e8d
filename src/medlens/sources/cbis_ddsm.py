"""CBIS-DDSM mass and calcification pathology (MultiMedBench's second mammography task),
from its TCIA release (doi:10.7937/K9/TCIA.2016.7O02S9CY).

Layout (as released): the case-description CSVs ``mass_case_description_test_set.csv``,
``calc_case_description_test_set.csv`` (and ``…_train_set.csv``) beside the DICOM tree they
point into. Columns read, as published: ``patient_id``, ``left or right breast``,
``image view``, ``abnormality id``, ``abnormality type`` (``mass`` / ``calcification``),
``assessment`` (BI-RADS), ``pathology`` (``MALIGNANT``, ``BENIGN``,
``BENIGN_WITHOUT_CALLBACK``: the label, the last two read as benign) and
``image file path`` (the full mammogram, relative to the folder). Known caveat of the
release: the CSV paths end in ``000000.dcm`` while TCIA downloads name files ``1-1.dcm``;
give the folder the CSV paths describe (a missing image is a one-line error naming the row).
One ``classify`` item per abnormality (benign / malignant); ``?classes=3`` keeps the release's
three pathology classes (benign / benign without callback / malignant) apart.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from medlens.core.errors import InputError
from medlens.core.items import Benchmark, Item
from medlens.core.specs import Spec
from medlens.sources import native
from medlens.sources.release_csv import read_release_table

CARD = {
    "licence": "CC BY 3.0",
    "access": "open",
    "homepage": "https://www.cancerimagingarchive.net/collection/cbis-ddsm/",
    "citation": "@article{lee2017cbisddsm, title={A curated mammography data set for use in "
    "computer-aided detection and diagnosis research}, author={Lee, Rebecca Sawyer and "
    "Gimenez, Francisco and Hoogi, Assaf and Miyake, Kanae Kawai and Gorovoy, Mia and "
    "Rubin, Daniel L.}, journal={Scientific Data}, volume={4}, year={2017}, "
    "doi={10.1038/sdata.2017.177}}",
}
SPLITS = ("test", "train")
ABNORMALITIES = ("mass", "calc", "all")
LABELS = ("benign", "malignant")
PATHOLOGY = {"MALIGNANT": "malignant", "BENIGN": "benign", "BENIGN_WITHOUT_CALLBACK": "benign"}
THREE_LABELS = ("benign", "benign without callback", "malignant")
THREE_PATHOLOGY = {"MALIGNANT": "malignant", "BENIGN": "benign",
                   "BENIGN_WITHOUT_CALLBACK": "benign without callback"}  # fmt: skip
QUESTION_THREE = (
    "Is the {kind} in this mammogram ({side} breast, {view} view) benign, benign without "
    "callback, or malignant?"
)
REQUIRED = ("patient_id", "left or right breast", "image view", "abnormality id",
            "abnormality type", "assessment", "pathology", "image file path")  # fmt: skip
QUESTION = "Is the {kind} in this mammogram ({side} breast, {view} view) benign or malignant?"


def load_cbis_ddsm(spec: Spec) -> Benchmark:
    """``cbis-ddsm:DIR[?split=test|train&abnormality=mass|calc|all&classes=2|3]``."""
    root = native.open_spec(spec, {"split", "abnormality", "classes"})
    three = native.choose_option(spec, "classes", ("2", "3"), "2") == "3"
    split = native.choose_option(spec, "split", SPLITS, "test")
    wanted = native.choose_option(spec, "abnormality", ABNORMALITIES, "all")
    kinds = ("mass", "calc") if wanted == "all" else (wanted,)
    tables = [root / f"{kind}_case_description_{split}_set.csv" for kind in kinds]
    missing = [t.name for t in tables if not t.is_file()]
    if missing:
        raise InputError(root, None, f"no {' or '.join(missing)} in this folder")

    def iter_items() -> Iterator[Item]:
        for table in tables:
            for where, row in read_release_table(table, REQUIRED):
                yield _item(row, root, table, where, three)

    return native.make_benchmark(
        spec, split, iter_items, description=f"CBIS-DDSM {wanted} ({split})"
    )


def _item(row: dict[str, str], root: Path, table: Path, where: str, three: bool = False) -> Item:
    label = (THREE_PATHOLOGY if three else PATHOLOGY).get(row["pathology"].upper())
    if label is None:
        problem = f"{row['pathology']!r} is not one of {', '.join(PATHOLOGY)}"
        raise InputError(table, f"{where}, field 'pathology'", problem)
    relative = row["image file path"].strip().strip('"')
    image = native.file_image(root, relative, table, f"{where}, field 'image file path'")
    kind = "mass" if row["abnormality type"].lower().startswith("mass") else "calcification"
    item_id = (
        f"{table.stem.split('_')[0]}-{row['patient_id']}-{row['left or right breast']}-"
        f"{row['image view']}-{row['abnormality id']}"
    )
    meta = {key: value for key, value in row.items() if value}
    meta.update(labels="|".join(THREE_LABELS if three else LABELS), image_id=relative,
                modality="mammography", pathology_raw=row["pathology"])  # fmt: skip
    question = (QUESTION_THREE if three else QUESTION).format(
        kind=kind, side=row["left or right breast"].lower(), view=row["image view"]
    )
    return Item(id=item_id, question=question, kind="classify", answer=label, images=(image,),
                meta=meta)  # fmt: skip

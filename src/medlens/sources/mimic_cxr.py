"""MIMIC-CXR report generation (MultiMedBench's chest X-ray report task), from the PhysioNet
releases MIMIC-CXR-JPG 2.0.0 (images, split) and MIMIC-CXR 2.0.0 (reports).

Layout read, as released: ``mimic-cxr-2.0.0-split.csv`` (columns ``dicom_id``, ``study_id``,
``subject_id``, ``split`` = ``train`` / ``validate`` / ``test``: the official split),
``mimic_cxr_sectioned.csv`` (the section file the MIMIC-CXR code repository's
``create_section_files.py`` writes; columns ``study`` = ``s<study_id>``, ``impression``,
``findings``, ``last_paragraph``, ``comparison``) and the JPGs under
``files/p<first two digits>/p<subject_id>/s<study_id>/<dicom_id>.jpg``. Either table may be
gzipped. One ``report`` item per study of the split with a non-empty target section
(``target=findings``, the default, or ``impression``), with every image of the study; studies
without that section are left out (``description`` counts none; ``medlens check`` counts the
items). ``subject_id`` and ``study_id`` are kept for the patient-level leakage check.
``?task=normal`` is the normal/abnormal classification view of the same studies
(``mimic_cxr_labels``: gold from the release's CheXpert label file).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from medlens.core.items import Benchmark, ImageRef, Item
from medlens.core.specs import Spec
from medlens.sources import native
from medlens.sources.release_csv import find_table, read_release_table

CARD = {
    "licence": "PhysioNet Credentialed Health Data License 1.5.0",
    "access": "credentialed",
    "homepage": "https://physionet.org/content/mimic-cxr-jpg/2.0.0/",
    "citation": "@article{johnson2019mimiccxr, title={MIMIC-CXR, a de-identified publicly "
    "available database of chest radiographs with free-text reports}, author={Johnson, "
    "Alistair E. W. and others}, journal={Scientific Data}, volume={6}, year={2019}, "
    "doi={10.1038/s41597-019-0322-0}}",
}
SPLITS = ("test", "validate", "train")
TARGETS = ("findings", "impression")
TASKS = ("report", "normal")
SPLIT_COLUMNS = ("dicom_id", "study_id", "subject_id", "split")
SECTION_COLUMNS = ("study", "impression", "findings")
QUESTION = {
    "findings": "Write the findings section of the radiology report for this chest X-ray study.",
    "impression": "Write the impression section of the radiology report for this chest X-ray study.",
}


def load_mimic_cxr(spec: Spec) -> Benchmark:
    """``mimic-cxr:DIR[?split=test|validate|train&target=findings|impression&task=report|normal]``."""
    root = native.open_spec(spec, {"split", "target", "task"})
    split = native.choose_option(spec, "split", SPLITS, "test")
    if native.choose_option(spec, "task", TASKS, "report") == "normal":
        return _normal_view(spec, root, split)
    target = native.choose_option(spec, "target", TARGETS, "findings")
    split_table = find_table(root, ("mimic-cxr-2.0.0-split.csv",))
    section_table = find_table(root, ("mimic_cxr_sectioned.csv",))

    def iter_items() -> Iterator[Item]:
        studies: dict[str, tuple[str, list[tuple[str, str]]]] = {}
        for where, row in read_release_table(split_table, SPLIT_COLUMNS):
            if row["split"] == split:
                entry = studies.setdefault(row["study_id"], (row["subject_id"], []))
                entry[1].append((row["dicom_id"], where))
        for _, row in read_release_table(section_table, SECTION_COLUMNS):
            study = row["study"].removeprefix("s")
            text = row[target].strip()
            if study in studies and text:
                subject, dicoms = studies[study]
                images = tuple(_image(root, subject, study, d, split_table, w) for d, w in dicoms)
                yield _item(study, subject, text, images, target, split)

    return native.make_benchmark(
        spec, split, iter_items, description=f"MIMIC-CXR {target} ({split})"
    )


def _image(root: Path, subject: str, study: str, dicom: str, table: Path, where: str) -> ImageRef:
    relative = f"files/p{subject[:2]}/p{subject}/s{study}/{dicom}.jpg"
    return native.file_image(root, relative, table, f"{where}, field 'dicom_id'")


def _item(
    study: str, subject: str, text: str, images: tuple[ImageRef, ...], target: str, split: str
) -> Item:
    meta = {"subject_id": subject, "study_id": study, "image_id": f"s{study}", "split": split,
            "modality": "chest X-ray", "target": target}  # fmt: skip
    return Item(id=f"s{study}", question=QUESTION[target], kind="report", answer=text,
                images=images, meta=meta)  # fmt: skip


def _normal_view(spec: Spec, root: Path, split: str) -> Benchmark:
    """One normal/abnormal ``classify`` item per study of the split with a defensible label."""
    from medlens.sources.mimic_cxr_labels import LABELS, QUESTION, study_labels

    split_table = find_table(root, ("mimic-cxr-2.0.0-split.csv",))
    labels, left_out = study_labels(root)

    def iter_items() -> Iterator[Item]:
        studies: dict[str, tuple[str, list[tuple[str, str]]]] = {}
        for where, row in read_release_table(split_table, SPLIT_COLUMNS):
            if row["split"] == split and row["study_id"] in labels:
                entry = studies.setdefault(row["study_id"], (row["subject_id"], []))
                entry[1].append((row["dicom_id"], where))
        for study, (subject, dicoms) in studies.items():
            images = tuple(_image(root, subject, study, d, split_table, w) for d, w in dicoms)
            meta = {"subject_id": subject, "study_id": study, "image_id": f"s{study}",
                    "split": split, "modality": "chest X-ray", "labels": "|".join(LABELS)}  # fmt: skip
            yield Item(id=f"s{study}", question=QUESTION, kind="classify",
                       answer=labels[study], images=images, meta=meta)  # fmt: skip

    description = (
        f"MIMIC-CXR normal/abnormal ({split}; {left_out} studies with only uncertain or "
        "unmentioned findings left out)"
    )
    return native.make_benchmark(spec, split, iter_items, description=description)

"""IU-Xray (Open-i, Indiana University chest X-rays) report generation, from the Kaggle
re-release of the Open-i collection ("Chest X-rays (Indiana University)").

Layout read, as released: ``indiana_reports.csv`` (columns ``uid``, ``findings``,
``impression``; ``MeSH``, ``Problems``, ``indication``, ``comparison`` kept as native fields),
``indiana_projections.csv`` (columns ``uid``, ``filename``, ``projection`` = Frontal /
Lateral) and the PNGs under ``images/images_normalized/`` (or ``images/``). Open-i publishes
no official split: every report with a non-empty target section (``target=findings``, the
default, or ``impression``) is one ``test`` item holding all of its projections; ``uid``
identifies the study (kept as ``study_id``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from medlens.core.errors import InputError
from medlens.core.items import Benchmark, ImageRef, Item
from medlens.core.specs import Spec
from medlens.sources import native
from medlens.sources.release_csv import find_table, read_release_table

CARD = {
    "licence": "CC BY-NC-ND 4.0 (Open-i)",
    "access": "open",
    "homepage": "https://openi.nlm.nih.gov/faq#collection",
    "citation": "@article{demnerfushman2016iuxray, title={Preparing a collection of radiology "
    "examinations for distribution and retrieval}, author={Demner-Fushman, Dina and others}, "
    "journal={Journal of the American Medical Informatics Association}, volume={23}, "
    "number={2}, pages={304--310}, year={2016}, doi={10.1093/jamia/ocv080}}",
}
SPLITS = ("test",)
TARGETS = ("findings", "impression")
REPORT_COLUMNS = ("uid", "findings", "impression")
PROJECTION_COLUMNS = ("uid", "filename", "projection")


def load_iu_xray(spec: Spec) -> Benchmark:
    """``iu-xray:DIR[?target=findings|impression]``."""
    root = native.open_spec(spec, {"target"})
    target = native.choose_option(spec, "target", TARGETS, "findings")
    reports = find_table(root, ("indiana_reports.csv",))
    projections = find_table(root, ("indiana_projections.csv",))
    image_root = next(
        (p for p in (root / "images" / "images_normalized", root / "images") if p.is_dir()), root
    )

    def iter_items() -> Iterator[Item]:
        images: dict[str, list[tuple[str, str, str]]] = {}
        for where, row in read_release_table(projections, PROJECTION_COLUMNS):
            images.setdefault(row["uid"], []).append((row["filename"], row["projection"], where))
        for where, row in read_release_table(reports, REPORT_COLUMNS):
            text = row[target].strip()
            if not text:
                continue
            if row["uid"] not in images:
                raise InputError(
                    reports, f"{where}, field 'uid'", "no row in indiana_projections.csv"
                )
            refs = tuple(
                _image(image_root, name, projections, w) for name, _, w in images[row["uid"]]
            )
            yield _item(row, text, refs, [p for _, p, _ in images[row["uid"]]], target)

    return native.make_benchmark(spec, "test", iter_items, description=f"IU-Xray {target}")


def _image(root: Path, name: str, table: Path, where: str) -> ImageRef:
    return native.file_image(root, name, table, f"{where}, field 'filename'")


def _item(
    row: dict[str, str], text: str, images: tuple[ImageRef, ...], views: list[str], target: str
) -> Item:
    meta = {key: value for key, value in row.items() if value and key not in TARGETS}
    meta.update(study_id=row["uid"], image_id=row["uid"], split="test", target=target,
                modality="chest X-ray", projections="+".join(views))  # fmt: skip
    question = f"Write the {target} section of the radiology report for this chest X-ray study."
    return Item(id=row["uid"], question=question, kind="report", answer=text, images=images,
                meta=meta)  # fmt: skip

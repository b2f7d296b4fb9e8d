"""MIMIC-III radiology report summarisation, findings → impression (MultiMedBench's text
summarisation task), from the PhysioNet release of MIMIC-III 1.4.

Layout read, as released: ``NOTEEVENTS.csv`` (or ``.csv.gz``), columns ``ROW_ID``,
``SUBJECT_ID``, ``HADM_ID``, ``CATEGORY``, ``DESCRIPTION``, ``TEXT``. Rows whose ``CATEGORY``
is ``Radiology`` and whose ``TEXT`` holds both a ``FINDINGS:`` and an ``IMPRESSION:`` section
become ``report`` items: the findings are the context, the impression the target (scored by
ROUGE-L, corpus BLEU-4 and the rule-based finding F1). Other notes are skipped. MIMIC-III has
no official split: every such note is one ``test`` item; ``SUBJECT_ID`` is kept as
``subject_id`` for the patient-level leakage check.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from medlens.core.items import Benchmark, Item
from medlens.core.specs import Spec
from medlens.sources import native
from medlens.sources.release_csv import find_table, read_release_table

CARD = {
    "licence": "PhysioNet Credentialed Health Data License 1.5.0",
    "access": "credentialed",
    "homepage": "https://physionet.org/content/mimiciii/1.4/",
    "citation": "@article{johnson2016mimiciii, title={MIMIC-III, a freely accessible critical "
    "care database}, author={Johnson, Alistair E. W. and others}, journal={Scientific Data}, "
    "volume={3}, year={2016}, doi={10.1038/sdata.2016.35}}",
}
SPLITS = ("test",)
REQUIRED = ("ROW_ID", "SUBJECT_ID", "HADM_ID", "CATEGORY", "TEXT")
_SECTION = re.compile(r"^\s*([A-Z][A-Z /&]+):", re.M)
QUESTION = "Summarise these radiology findings as the report's impression."


def load_mimic_iii(spec: Spec) -> Benchmark:
    """``mimic-iii:DIR|NOTEEVENTS.csv[.gz]``."""
    root = native.open_spec(spec, set(), want="any")
    table = root if root.is_file() else find_table(root, ("NOTEEVENTS.csv",))

    def iter_items() -> Iterator[Item]:
        for _, row in read_release_table(table, REQUIRED):
            if row["CATEGORY"].strip().lower() != "radiology":
                continue
            sections = report_sections(row["TEXT"])
            if sections.get("FINDINGS") and sections.get("IMPRESSION"):
                yield _item(row, sections["FINDINGS"], sections["IMPRESSION"])

    return native.make_benchmark(spec, "test", iter_items, description="MIMIC-III radiology")


def report_sections(text: str) -> dict[str, str]:
    """Upper-case ``NAME:`` headed sections of a report, whitespace squeezed."""
    marks = list(_SECTION.finditer(text))
    sections: dict[str, str] = {}
    for mark, following in zip(marks, [*marks[1:], None], strict=True):
        end = following.start() if following is not None else len(text)
        sections[mark.group(1).strip()] = " ".join(text[mark.end() : end].split())
    return sections


def _item(row: dict[str, str], findings: str, impression: str) -> Item:
    meta = {"subject_id": row["SUBJECT_ID"], "hadm_id": row["HADM_ID"], "split": "test",
            "category": row["CATEGORY"], "source": "MIMIC-III"}  # fmt: skip
    if row.get("DESCRIPTION"):
        meta["description"] = row["DESCRIPTION"]
    return Item(id=row["ROW_ID"], question=QUESTION, kind="report", answer=impression,
                context=findings, meta=meta)  # fmt: skip


__all__ = ["load_mimic_iii", "report_sections"]

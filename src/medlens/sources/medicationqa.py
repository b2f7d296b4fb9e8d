"""MedicationQA (Ben Abacha et al., MedInfo 2019): 690 consumer medication questions.

Release layout (github.com/abachaa/Medication_QA_MedInfo2019): one spreadsheet,
``MedInfo2019-QA-Medications.xlsx``, with the columns ``Question``, ``Focus (Drug)``,
``Question Type``, ``Answer``, ``Section Title`` and ``URL``. A CSV export with the same header
is read too. There is no official split: every row is the ``test`` split, as MultiMedQA uses it.

Items are ``report`` kind with ``meta["answer_format"] = "long"`` (ROUGE-L / BLEU-4 against the
answer: automatic proxies for MultiMedQA's human rating); ``question_type`` and ``focus`` are
axes; the answer's URL stays in ``meta``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from medlens.core.errors import InputError
from medlens.core.items import Benchmark, Item
from medlens.core.specs import Spec
from medlens.sources import native

SPLITS = ("test",)
RELEASE_FILE = "MedInfo2019-QA-Medications.xlsx"
REQUIRED = ("Question", "Answer")
CARD = {
    "licence": "CC BY 4.0 (as stated by the release)",
    "access": "open",
    "homepage": "https://github.com/abachaa/Medication_QA_MedInfo2019",
    "citation": (
        "@inproceedings{abacha2019medicationqa,\n"
        "  author = {Asma {Ben Abacha} and Yassine Mrabet and Mark Sharp and "
        "Travis R. Goodwin and Sonya E. Shooshan and Dina Demner{-}Fushman},\n"
        "  title = {Bridging the Gap Between Consumers' Medication Questions and Trusted "
        "Answers},\n  booktitle = {MEDINFO 2019: Health and Wellbeing e-Networks for All},\n"
        "  pages = {25--29},\n  year = {2019}\n}"
    ),
}


def load_medicationqa(spec: Spec) -> Benchmark:
    """``medicationqa:FILE.xlsx|FILE.csv|DIR``."""
    path = native.open_spec(spec, set(), want="any")
    if path.is_dir():
        path = native.first_existing([path / RELEASE_FILE], "MedicationQA spreadsheet", path)

    def iter_items() -> Iterator[Item]:
        for number, (where, row) in enumerate(_rows(path), start=1):
            yield _item(row, path, where, number)

    return native.make_benchmark(
        spec, "test", iter_items, description="MedicationQA (MedInfo 2019)"
    )


def _rows(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    if path.suffix.lower() == ".csv":
        rows = native.read_table(path, ",")
    elif path.suffix.lower() == ".xlsx":
        rows = _xlsx_rows(path)
    else:
        raise InputError(path, None, "expected the release's .xlsx or a .csv export")
    for index, (where, row) in enumerate(rows):
        if index == 0:
            missing = [c for c in REQUIRED if c not in row]
            if missing:
                raise InputError(path, "header", f"missing column {missing[0]!r}")
        yield where, row


def _xlsx_rows(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    from openpyxl import load_workbook

    try:
        book = load_workbook(path, read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises many types for a file that is no workbook
        raise InputError(path, None, f"cannot read the spreadsheet ({exc})") from None
    rows = book.worksheets[0].iter_rows(values_only=True)
    header = [str(cell or "").strip() for cell in next(rows, ())]
    for number, values in enumerate(rows, start=2):
        if any(v not in (None, "") for v in values):
            yield f"row {number}", dict(zip(header, values, strict=False))
    book.close()


def _item(row: dict[str, Any], path: Path, where: str, number: int) -> Item:
    meta = {"source": "medicationqa", "split": "test", "lang": "en", "answer_format": "long"}
    for column, key in (("Focus (Drug)", "focus"), ("Question Type", "question_type"),
                        ("Section Title", "section_title"), ("URL", "url")):  # fmt: skip
        value = native.optional_text(row, column)
        if value:
            meta[key] = value.lower() if key == "question_type" else value
    return Item(
        id=str(number),
        question=native.text(row, "Question", path, where),
        kind="report",
        answer=native.text(row, "Answer", path, where),
        meta=meta,
    )

"""HealthSearchQA (Singhal et al., Nature 2023): 3,173 consumer health search questions.

Release: published with the Med-PaLM paper (supplementary data) and mirrored as CSV — the Hugging
Face copy ``katielink/healthsearchqa`` ships ``all.csv`` (all questions) and
``multimedqa140_subset.csv`` (the 140 questions MultiMedQA rates), other copies carry ``id`` and
``question`` columns. medlens reads any CSV/TSV/JSONL with a ``question`` column (``id``
optional, else the row number) or, failing a header, a one-column file of questions.

There are **no reference answers**: answers are free text rated by people on MultiMedQA's axes
(``medlens ratings export``). Runs are never scored automatically and their reports say so
(``NO_ANSWERS_REASON``).
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path

from medlens.core.errors import InputError
from medlens.core.items import Benchmark, Item
from medlens.core.specs import Spec
from medlens.sources import native

SPLITS = ("test",)
RELEASE_FILES = ("all.csv", "multimedqa140_subset.csv", "healthsearchqa.csv")
NO_ANSWERS_REASON = (
    "HealthSearchQA has no reference answers: its answers are never scored automatically and "
    "need human rating (medlens ratings export RUN --protocol multimedqa)."
)
CARD = {
    "licence": "unknown (released by Google with the Med-PaLM paper; no licence stated)",
    "access": "open",
    "homepage": "https://www.nature.com/articles/s41586-023-06291-2",
    "citation": (
        "@article{singhal2023large,\n"
        "  author = {Karan Singhal and Shekoofeh Azizi and Tao Tu and others},\n"
        "  title = {Large language models encode clinical knowledge},\n"
        "  journal = {Nature},\n  volume = {620},\n  pages = {172--180},\n  year = {2023}\n}"
    ),
}


def load_healthsearchqa(spec: Spec) -> Benchmark:
    """``healthsearchqa:FILE.csv|DIR`` (a folder holding ``all.csv``)."""
    path = native.open_spec(spec, set(), want="any")
    if path.is_dir():
        path = native.first_existing([path / n for n in RELEASE_FILES], "HealthSearchQA CSV", path)

    def iter_items() -> Iterator[Item]:
        seen: set[str] = set()
        for where, question, identifier in _questions(path):
            if identifier in seen:
                raise InputError(path, f"{where}, field 'id'", f"duplicate id {identifier!r}")
            seen.add(identifier)
            meta = {"source": "healthsearchqa", "split": "test", "lang": "en"}
            meta["answer_format"] = "long"
            yield Item(id=identifier, question=question, kind="report", answer=None, meta=meta)

    return native.make_benchmark(
        spec, "test", iter_items, has_answers=False, description="HealthSearchQA (no references)"
    )


def _questions(path: Path) -> Iterator[tuple[str, str, str]]:
    """(where, question, id) per row; ids from an ``id`` column (``12.0`` → ``12``) or row."""
    if path.suffix.lower() in (".json", ".jsonl"):
        rows = native.read_records(path)
    else:
        rows = _table_or_list(path)
    for number, (where, row) in enumerate(rows, start=1):
        question = native.text(row, "question", path, where)
        raw = native.optional_text(row, "id") or str(number)
        identifier = raw[:-2] if raw.endswith(".0") and raw[:-2].isdigit() else raw
        yield where, question, identifier


def _table_or_list(path: Path) -> Iterator[tuple[str, dict[str, str]]]:
    delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
    with path.open(encoding="utf-8-sig", newline="") as handle:
        first = next(csv.reader(handle, delimiter=delimiter), [])
    if "question" in (cell.strip().lower() for cell in first):
        for where, row in native.read_table(path, delimiter):
            yield where, {key.strip().lower(): value for key, value in row.items()}
        return
    if len(first) != 1:
        raise InputError(path, "header", "no 'question' column")
    for where, cells in native.read_csv(path, header=False, delimiter=delimiter):
        yield where, {"question": cells[0] if cells else ""}

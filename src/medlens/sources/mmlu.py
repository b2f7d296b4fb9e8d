"""MMLU clinical subjects (Hendrycks et al. 2021): headerless CSVs ``question,A,B,C,D,answer``.

The six subjects of MultiMedQA / MIRAGE "MMLU-Med" give 1,089 test questions; ``subject`` is the
axis. Options keep the release's text exactly (e.g. ``1.0/64`` in medical_genetics).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from medlens.core.errors import InputError, SpecError
from medlens.core.items import Benchmark, Item
from medlens.core.specs import Spec
from medlens.sources import native

SPLITS = ("dev", "test")
EXEMPLAR_SPLIT = "dev"
"""MMLU ships its 5-shot exemplars as the dev split."""
CLINICAL_SUBJECTS = (
    "anatomy",
    "clinical_knowledge",
    "college_biology",
    "college_medicine",
    "medical_genetics",
    "professional_medicine",
)


def load_mmlu(spec: Spec) -> Benchmark:
    """``mmlu:DIR[?split=test|dev&subjects=anatomy,clinical_knowledge,...]``."""
    root = native.open_spec(spec, {"split", "subjects"})
    split = native.choose_option(spec, "split", SPLITS, "test")
    subjects = _subjects(spec)
    folder = root / split if (root / split).is_dir() else root
    paths = [
        native.first_existing([folder / f"{subject}_{split}.csv"], f"{subject} {split} CSV", root)
        for subject in subjects
    ]

    def iter_items() -> Iterator[Item]:
        for subject, path in zip(subjects, paths, strict=True):
            for number, (where, row) in enumerate(native.read_csv(path, header=False), start=1):
                yield _item(row, path, where, subject, split, number)

    return native.make_benchmark(
        spec, split, iter_items, description=f"MMLU {split}: {', '.join(subjects)}"
    )


def _subjects(spec: Spec) -> tuple[str, ...]:
    text = spec.option("subjects")
    if not text:
        return CLINICAL_SUBJECTS
    chosen = tuple(s.strip() for s in text.split(",") if s.strip())
    unknown = [s for s in chosen if not s.replace("_", "").isalnum()]
    if unknown or not chosen:
        raise SpecError(f"mmlu: subjects={text!r} must be comma-separated subject names")
    return chosen


def _item(row: list[str], path: Path, where: str, subject: str, split: str, number: int) -> Item:
    if len(row) != 6:
        raise InputError(path, where, f"{len(row)} fields; expected question, A, B, C, D, answer")
    letter = row[5].strip()
    options = native.letter_options([cell.strip() for cell in row[1:5]])
    if letter not in options:
        raise InputError(path, f"{where}, field 'answer'", f"{letter!r} is not A, B, C or D")
    return Item(
        id=f"{subject}-{number}",
        question=row[0].strip(),
        kind="choice",
        options=options,
        answer=letter,
        meta={"subject": subject, "source": "mmlu", "lang": "en", "split": split},
    )


# Licence, access and citation of this source (read by medlens.sources.cards; decision 0009).
CARD = {
    "licence": "MIT (hendrycks/test)",
    "access": "open",
    "homepage": "https://github.com/hendrycks/test",
    "citation": """@inproceedings{hendrycks2021mmlu,
  title = {Measuring Massive Multitask Language Understanding},
  author = {Hendrycks, Dan and Burns, Collin and Basart, Steven and Zou, Andy and Mazeika, Mantas and Song, Dawn and Steinhardt, Jacob},
  booktitle = {International Conference on Learning Representations (ICLR)},
  year = {2021}
}""",
}

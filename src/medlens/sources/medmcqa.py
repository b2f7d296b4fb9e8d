"""MedMCQA (Pal et al. 2022): Indian medical-entrance MCQs, JSON Lines with ``opa..opd``.

``cop`` is 1-based in the raw release (1 = ``opa``); ``?cop=0`` reads the 0-based HF export.
The dev split (4,183 questions) is the evaluation split; the official test split
(``?split=test``, ``test.json``: 6,150 questions whose answers the authors withhold) loads as an
inference-only split (no gold, ``has_answers`` false: run it, then export the predictions).
``subject_name`` is the ``subject`` axis; the explanation ``exp`` is never kept (it gives the answer away); ``choice_type``
(single/multi) is kept, though every item has one correct option.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from medlens.core.errors import InputError
from medlens.core.items import Benchmark, Item
from medlens.core.specs import Spec
from medlens.sources import native

SPLITS = ("dev", "test")
NO_ANSWERS_REASON = (
    "MedMCQA's test answers are withheld by its authors: this split is for inference only, "
    "scores need the official answer key."
)
OPTION_KEYS = ("opa", "opb", "opc", "opd")


def load_medmcqa(spec: Spec) -> Benchmark:
    """``medmcqa:FILE[?cop=1|0&split=dev|test]`` (a folder holding ``dev.json`` / ``test.json``
    works too; a file named ``test…`` is the test split)."""
    path, split = _resolve(spec)
    base = int(native.choose_option(spec, "cop", ("1", "0"), "1"))

    def iter_items() -> Iterator[Item]:
        for where, record in native.read_records(path):
            yield _item(record, path, where, base, with_answer=split == "dev")

    return native.make_benchmark(
        spec, split, iter_items, has_answers=split == "dev",
        description=f"MedMCQA {split} ({path.name})",
    )  # fmt: skip


def _resolve(spec: Spec) -> tuple[Path, str]:
    path = native.open_spec(spec, {"cop", "split"}, want="any")
    default = "test" if path.is_file() and path.name.startswith("test") else "dev"
    split = native.choose_option(spec, "split", SPLITS, default)
    if path.is_dir():
        path = native.first_existing(
            [path / f"{split}.json", path / f"{split}.jsonl"], f"MedMCQA {split} file", path
        )
    return path, split


def exemplar_spec(spec: Spec) -> Spec:
    """Few-shot exemplars: the release's train file beside the dev file."""
    from medlens.sources.train_files import train_file_beside

    return train_file_beside(spec, str(_resolve(spec)[0]), "MedMCQA")


def _item(
    record: native.Record, path: Path, where: str, base: int, *, with_answer: bool = True
) -> Item:
    options = native.letter_options([native.text(record, key, path, where) for key in OPTION_KEYS])
    if not with_answer:  # the test split: no gold (HF's cop = -1), never a guess
        meta = native.native_meta(record, skip=("question", "exp", "cop", *OPTION_KEYS))
        meta.update(source="medmcqa", lang="en", split="test", subject=meta.get("subject_name", ""))
        question = native.text(record, "question", path, where)
        item_id = native.text(record, "id", path, where)
        return Item(id=item_id, question=question, kind="choice", options=options, meta=meta)
    raw = native.text(record, "cop", path, where)
    index = int(raw) - base if raw.isdigit() else -1
    if not 0 <= index < len(OPTION_KEYS):
        raise InputError(
            path,
            f"{where}, field 'cop'",
            f"{raw!r} is not an option number ({base}–{base + len(OPTION_KEYS) - 1})",
        )
    meta = native.native_meta(record, skip=("question", "exp", "cop", *OPTION_KEYS))
    meta.update(source="medmcqa", lang="en", split="dev", subject=meta.get("subject_name", ""))
    return Item(
        id=native.text(record, "id", path, where),
        question=native.text(record, "question", path, where),
        kind="choice",
        options=options,
        answer=native.LETTERS[index],
        meta=meta,
    )


# Licence, access and citation of this source (read by medlens.sources.cards; decision 0009).
CARD = {
    "licence": "MIT (medmcqa/medmcqa)",
    "access": "open",
    "homepage": "https://medmcqa.github.io/",
    "citation": """@inproceedings{pal2022medmcqa,
  title = {MedMCQA: A Large-scale Multi-Subject Multi-Choice Dataset for Medical domain Question Answering},
  author = {Pal, Ankit and Umapathi, Logesh Kumar and Sankarasubbu, Malaikannan},
  booktitle = {Proceedings of the Conference on Health, Inference, and Learning},
  series = {PMLR},
  volume = {174},
  pages = {248--260},
  year = {2022}
}""",
}

"""PubMedQA PQA-L (Jin et al. 2019): yes/no/maybe questions about a PubMed abstract.

``test`` = the canonical 500-question split (``test_set.json``, labels from
``test_ground_truth.json`` when present); ``train`` = the other 500 labelled questions of
``ori_pqal.json``. The abstract (without its conclusion, ``LONG_ANSWER``, which gives the answer
away) is the item's context unless ``?context=none`` (the reasoning-free setting).

``?format=choice`` asks the questions as Med-PaLM does: lettered options "(A) yes (B) no
(C) maybe", kind ``choice``, the gold as its letter; ids, questions and contexts are the same
(``meta["raw_answer"]`` keeps the word). The default ``format=yes_no`` is the three-way yes/no
item.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from medlens.core.errors import InputError
from medlens.core.items import Benchmark, Item
from medlens.core.specs import Spec
from medlens.sources import native

SPLITS = ("train", "test")
EXEMPLAR_SPLIT = "train"
CONTEXTS = ("abstract", "none")
FORMATS = ("yes_no", "choice")
ANSWERS = ("yes", "no", "maybe")
LETTERS = {"yes": "A", "no": "B", "maybe": "C"}
"""Med-PaLM's lettered options (Singhal et al. 2023, PubMedQA prompt): (A) yes (B) no (C) maybe."""
_NOT_META = (
    "QUESTION",
    "CONTEXTS",
    "LONG_ANSWER",
    "final_decision",
    "LABELS",
    "reasoning_required_pred",
    "reasoning_free_pred",
)


def load_pubmedqa(spec: Spec) -> Benchmark:
    """``pubmedqa:DIR[?split=test|train&context=abstract|none&format=yes_no|choice]``."""
    root = native.open_spec(spec, {"split", "context", "format"})
    split = native.choose_option(spec, "split", SPLITS, "test")
    context = native.choose_option(spec, "context", CONTEXTS, "abstract")
    lettered = native.choose_option(spec, "format", FORMATS, "yes_no") == "choice"
    every = native.first_existing([root / "ori_pqal.json"], "ori_pqal.json", root)
    test = root / "test_set.json"
    truth = root / "test_ground_truth.json"
    if split == "test":
        native.first_existing([test], "test_set.json", root)

    def iter_items() -> Iterator[Item]:
        labels = _ground_truth(truth) if truth.is_file() else {}
        if split == "test":
            records = _pmid_records(test)
        else:
            held_out = set(_pmid_records(test)) if test.is_file() else set(labels)
            records = {k: v for k, v in _pmid_records(every).items() if k not in held_out}
        source = test if split == "test" else every
        for pmid, record in records.items():
            item = _item(pmid, record, labels.get(pmid), source, split, context == "abstract")
            yield as_choice(item) if lettered else item

    shown = ", lettered options" if lettered else ""
    return native.make_benchmark(
        spec, split, iter_items, description=f"PubMedQA PQA-L {split} (context: {context}{shown})"
    )


def as_choice(item: Item) -> Item:
    """The item with Med-PaLM's lettered options: kind ``choice``, gold as its letter."""
    answer = item.answer if isinstance(item.answer, str) else None
    meta = {**item.meta, "raw_answer": answer} if answer else dict(item.meta)
    return replace(
        item,
        kind="choice",
        options={letter: word for word, letter in LETTERS.items()},
        answer=LETTERS[answer] if answer else None,
        meta=meta,
    )


def _pmid_records(path: Path) -> dict[str, dict[str, Any]]:
    data = native.read_json(path)
    if not isinstance(data, dict):
        raise InputError(path, None, "expected a JSON object mapping PMID → record")
    for pmid, record in data.items():
        if not isinstance(record, dict):
            raise InputError(path, f"PMID {pmid}", "expected a JSON object")
    return data


def _ground_truth(path: Path) -> dict[str, str]:
    data = native.read_json(path)
    if not isinstance(data, dict):
        raise InputError(path, None, "expected a JSON object mapping PMID → yes/no/maybe")
    return {str(k): str(v).strip().lower() for k, v in data.items()}


def _item(
    pmid: str, record: dict[str, Any], label: str | None, path: Path, split: str, with_context: bool
) -> Item:
    where = f"PMID {pmid}"
    answer = label or native.text(record, "final_decision", path, where).lower()
    if answer not in ANSWERS:
        raise InputError(
            path, f"{where}, field 'final_decision'", f"{answer!r} is not yes/no/maybe"
        )
    paragraphs = record.get("CONTEXTS") or []
    if not isinstance(paragraphs, list):
        raise InputError(path, f"{where}, field 'CONTEXTS'", "expected a list of paragraphs")
    # The *_pred fields are annotators' labels that equal the answer: never kept.
    meta = native.native_meta(record, skip=_NOT_META)
    meta.update(answer_set="/".join(ANSWERS), source="pubmedqa", lang="en", split=split, pmid=pmid)
    return Item(
        id=pmid,
        question=native.text(record, "QUESTION", path, where),
        kind="yes_no",
        answer=answer,
        context=_abstract(paragraphs, record.get("LABELS")) if with_context else None,
        meta=meta,
    )


def _abstract(paragraphs: list[Any], labels: Any) -> str:
    """Paragraphs headed by their section labels, as the PubMedQA baselines show them."""
    heads = labels if isinstance(labels, list) and len(labels) == len(paragraphs) else None
    lines = [
        f"{str(heads[index]).capitalize()}: {text}" if heads else str(text)
        for index, text in enumerate(paragraphs)
    ]
    return "\n".join(lines)


# Licence, access and citation of this source (read by medlens.sources.cards; decision 0009).
CARD = {
    "licence": "MIT (pubmedqa/pubmedqa); abstracts from PubMed",
    "access": "open",
    "homepage": "https://pubmedqa.github.io/",
    "citation": """@inproceedings{jin2019pubmedqa,
  title = {PubMedQA: A Dataset for Biomedical Research Question Answering},
  author = {Jin, Qiao and Dhingra, Bhuwan and Liu, Zhengping and Cohen, William W. and Lu, Xinghua},
  booktitle = {Proceedings of EMNLP-IJCNLP 2019},
  pages = {2567--2577},
  year = {2019}
}""",
}

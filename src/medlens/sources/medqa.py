"""MedQA (Jin et al. 2021), USMLE English: JSON Lines with ``options`` A–D(E) and ``answer_idx``.

The 4-option test file has 1,273 questions. ``meta_info`` (step1 / step2&3) is the ``task`` axis.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from medlens.core.errors import InputError
from medlens.core.items import Benchmark, Item
from medlens.core.specs import Spec
from medlens.sources import native

SPLITS = ("test",)
KNOWN_FILES = (
    "phrases_no_exclude_test.jsonl",
    "test.jsonl",
    "US/4_options/phrases_no_exclude_test.jsonl",
)


def load_medqa(spec: Spec) -> Benchmark:
    """``medqa:FILE.jsonl`` (or a folder holding ``phrases_no_exclude_test.jsonl``)."""
    path = _resolve(spec)

    def iter_items() -> Iterator[Item]:
        for where, record in native.read_jsonl(path):
            yield _item(record, path, where)

    return native.make_benchmark(spec, "test", iter_items, description=f"MedQA ({path.name})")


def _resolve(spec: Spec) -> Path:
    path = native.open_spec(spec, set(), want="any")
    if path.is_dir():
        path = native.first_existing([path / name for name in KNOWN_FILES], "MedQA test file", path)
    return path


def exemplar_spec(spec: Spec) -> Spec:
    """Few-shot exemplars: the release's train file beside the test file."""
    from medlens.sources.train_files import train_file_beside

    return train_file_beside(spec, str(_resolve(spec)), "MedQA")


def _item(record: native.Record, path: Path, where: str) -> Item:
    options = record.get("options")
    if not isinstance(options, dict) or not options:
        raise InputError(path, f"{where}, field 'options'", "expected an object letter → text")
    options = {str(k).strip(): str(v).strip() for k, v in options.items()}
    letter = native.text(record, "answer_idx", path, where)
    if letter not in options:
        raise InputError(path, f"{where}, field 'answer_idx'", f"{letter!r} is none of the options")
    answer_text = record.get("answer")
    if answer_text is not None and str(answer_text).strip() != options[letter]:
        raise InputError(
            path, f"{where}, field 'answer'", "differs from the option answer_idx names"
        )
    meta = native.native_meta(
        record, skip=("question", "options", "answer", "answer_idx", "metamap_phrases")
    )
    meta.update(source="medqa", lang="en", split="test")
    if "meta_info" in meta:
        meta["task"] = meta["meta_info"]
    return Item(
        id=str(record.get("id", where.removeprefix("line "))),
        question=native.text(record, "question", path, where),
        kind="choice",
        options=options,
        answer=letter,
        meta=meta,
    )


# Licence, access and citation of this source (read by medlens.sources.cards; decision 0009).
CARD = {
    "licence": "MIT (jind11/MedQA)",
    "access": "open",
    "homepage": "https://github.com/jind11/MedQA",
    "citation": """@article{jin2021medqa,
  title = {What Disease Does This Patient Have? A Large-Scale Open Domain Question Answering Dataset from Medical Exams},
  author = {Jin, Di and Pan, Eileen and Oufattole, Nassim and Weng, Wei-Hung and Fang, Hanyi and Szolovits, Peter},
  journal = {Applied Sciences},
  volume = {11},
  number = {14},
  pages = {6421},
  year = {2021}
}""",
}

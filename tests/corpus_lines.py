"""Lines of the real-output reading corpus (tests/reading_corpus/) looked up by file and id, for
the reading tests that quote real model outputs."""

from __future__ import annotations

import functools
from pathlib import Path

from medlens.core.items import Item
from medlens.scoring.reader_agreement import item_of
from medlens.scoring.reading_corpus import CorpusFile, CorpusLine, load_file

CORPUS = Path(__file__).resolve().parent / "reading_corpus"


@functools.cache
def _file(name: str) -> CorpusFile:
    return load_file(CORPUS / name, CORPUS)


def corpus_line(name: str, item_id: str) -> CorpusLine:
    """The line of corpus file `name` (``medqa/gpt-4__….jsonl``) with id `item_id`."""
    found = [line for line in _file(name).lines if line.id == item_id]
    assert len(found) == 1, f"{name}: {len(found)} lines with id {item_id}"
    return found[0]


def corpus_case(name: str, item_id: str) -> tuple[Item, str, str | None, CorpusLine]:
    """(item, output, finish_reason, line) of one corpus line."""
    line = corpus_line(name, item_id)
    return item_of(line), line.output or "", line.finish_reason, line

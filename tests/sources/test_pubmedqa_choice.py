"""``pubmedqa:DIR?format=choice``: PubMedQA as Med-PaLM prompts it, lettered options
(A) yes (B) no (C) maybe; same ids, questions and contexts; letters and reasoning that ends in a
letter read correctly; peers, which read PubMedQA as yes/no/maybe, refuse it."""

from __future__ import annotations

import pytest

from data_paths import items_of, realdata_dir
from medlens.core.errors import SpecError
from medlens.extract import extract
from medlens.extract.peers import check_supported


def _both() -> tuple[list, list]:
    root = realdata_dir("pubmedqa")
    return items_of(f"pubmedqa:{root}"), items_of(f"pubmedqa:{root}?format=choice")


def test_lettered_items_keep_ids_questions_and_contexts() -> None:
    plain, lettered = _both()
    assert [i.id for i in plain] == [i.id for i in lettered]
    for word, letter in zip(plain, lettered, strict=True):
        assert letter.kind == "choice" and word.kind == "yes_no"
        assert letter.options == {"A": "yes", "B": "no", "C": "maybe"}
        assert letter.options[letter.answer] == word.answer
        assert (letter.question, letter.context) == (word.question, word.context)
        assert letter.meta["raw_answer"] == word.answer


@pytest.mark.parametrize(
    ("output", "letter"),
    [
        ("A", "A"),
        ("(B) no", "B"),
        (
            "The authors found that anorectal endosonography distinguished the groups, and the "
            "no-difference hypothesis was rejected. So the answer is A.",
            "A",
        ),
        ("Although some findings were mixed, the study reports no benefit. Answer: (B)", "B"),
        ("Evidence is limited; the data neither confirm nor refute it. Therefore, C.", "C"),
    ],
)
def test_letters_and_reasoning_that_ends_in_a_letter(output: str, letter: str) -> None:
    item = _both()[1][0]
    found = extract(item, output)
    assert (found.status, found.answer) == ("ok", letter)


def test_peer_modes_refuse_the_lettered_format() -> None:
    lettered = _both()[1]
    for mode in ("evalscope", "medevalkit", "multimedeval"):
        with pytest.raises(SpecError, match="format=choice"):
            check_supported(mode, lettered[:1])


def test_unknown_format_is_refused() -> None:
    with pytest.raises(SpecError, match="format"):
        items_of(f"pubmedqa:{realdata_dir('pubmedqa')}?format=letters")

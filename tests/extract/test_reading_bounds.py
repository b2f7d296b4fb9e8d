"""Any output is read, in bounded work, without raising (issue 42): empty, whitespace, a role
label alone, or a megabyte of text of the shapes that cost the rules most. The work is bounded
by the characters the rules are given (``extract.MAX_READ``), asserted here without timing;
``bench/reading_bounds.py`` prints the times."""

from __future__ import annotations

import pytest

import medlens.extract as extract_module
from medlens.core.items import Item
from medlens.extract import MAX_READ, bounded, extract
from medlens.scoring.item_scores import read_and_score

OPTIONS = {"A": "Pneumonia", "B": "Asthma", "C": "Increased ventricular wall stiffness"}
ITEMS = [
    Item(id="c", question="Which is the cause?", kind="choice", options=OPTIONS, answer="C"),
    Item(id="m", question="Which apply?", kind="multi_choice", options=OPTIONS, answer="AC"),
    Item(id="y", question="Is there a fracture of the left rib?", kind="yes_no", answer="no"),
    Item(
        id="p",
        question="Does X improve Y?",
        kind="yes_no",
        answer="maybe",
        meta={"answer_set": "yes/no/maybe"},
    ),
    Item(id="o", question="Where is the mass?", kind="open", answer="right upper lobe"),
    Item(
        id="k",
        question="Which label?",
        kind="classify",
        options={"A": "benign", "B": "malignant"},
        answer="A",
    ),
]
MEGABYTE = 1_000_000
UNITS = ("The answer is A. ", "A) Pneumonia - possible.\n", "Is it? ", ", ", "Yes, ", "答案是A。",
         "\\boxed{", "{", "**", "1.2.3.4 ", "[1, 2, 3, 4] ", "a", "<think>x ", "There is no ",
         "is, ", "a ")  # fmt: skip
LONG = [(unit * (MEGABYTE // len(unit) + 1))[:MEGABYTE] for unit in UNITS]
NOTHING = [
    "",
    "   \n\t ",
    "ASSISTANT:",
    "### Response:",
    "<image>",
    "\n" * MEGABYTE,
    " " * MEGABYTE,
]


@pytest.mark.parametrize("text", NOTHING, ids=lambda t: repr(t[:12]))
@pytest.mark.parametrize("item", ITEMS, ids=lambda i: i.kind + i.id)
def test_an_output_with_nothing_in_it_is_empty(item: Item, text: str) -> None:
    for finish in (None, "length"):
        found, value = read_and_score(item, text, "medlens", finish)
        assert (found.answer, found.status, value) == (None, "empty", 0.0)


@pytest.mark.parametrize("item", ITEMS, ids=lambda i: i.kind + i.id)
def test_a_megabyte_is_read_by_at_most_max_read_characters(
    item: Item, monkeypatch: pytest.MonkeyPatch
) -> None:
    given: list[int] = []
    reader = extract_module._read_committed

    def counting(item: Item, text: str, finish_reason: str | None) -> object:
        given.append(len(text))
        return reader(item, text, finish_reason)

    monkeypatch.setattr(extract_module, "_read_committed", counting)
    for text in LONG:
        for finish in (None, "length"):
            found, value = read_and_score(item, text, "medlens", finish)
            assert found.status in ("ok", "unparsed", "refused", "empty")
            assert value in (0.0, 1.0)
    assert len(given) == 2 * len(LONG)
    assert max(given) <= MAX_READ + 2  # the head, a paragraph break, the tail


def test_a_long_output_is_read_by_its_head_and_tail() -> None:
    item = ITEMS[0]
    loop = "Let me reconsider the vignette once more. " * 30_000
    assert extract(item, "C) Increased ventricular wall stiffness.\n" + loop).answer == "C"
    assert extract(item, loop + "\nTherefore, the answer is C.").answer == "C"
    # a reasoning model: what it answered after its last thought, however long the thought
    assert extract(item, "<think>" + loop + "</think>The answer is C.").answer == "C"
    # options merely mentioned are not read where the middle went unread
    found = extract(item, "Pneumonia fits. " + loop)
    assert (found.answer, found.method) == (None, "too_long:option_text")


def test_the_head_and_tail_are_cut_between_words() -> None:
    text = "word " * 10_000
    kept = bounded(text)
    assert len(kept) <= MAX_READ + 2
    assert all(part == "word" for part in kept.split())
    assert bounded("short answer") == "short answer"

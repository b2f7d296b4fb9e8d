from __future__ import annotations

import pytest

from medlens.core.errors import SpecError
from medlens.core.items import Item
from medlens.execution.prompts import build_prompt

OPTIONS = {"A": "Normal", "B": "Diabetic retinopathy", "C": "Drusen", "D": "Glaucoma"}


def test_vlmeval_prompt_is_byte_identical() -> None:
    item = Item(
        id="1", question="What does the fundus show?", kind="choice", options=OPTIONS, answer="C"
    )
    assert build_prompt(item, "vlmeval") == (
        "Question: What does the fundus show?\n"
        "Options:\n"
        "A. Normal\n"
        "B. Diabetic retinopathy\n"
        "C. Drusen\n"
        "D. Glaucoma\n"
        "Please select the correct answer from the options above. \n"
    )


def test_vlmeval_prompt_puts_hint_first() -> None:
    item = Item(
        id="1", question="Q?", kind="choice", options={"A": "x", "B": "y"}, context="A hint"
    )
    assert build_prompt(item, "vlmeval").startswith(
        "Hint: A hint\nQuestion: Q?\nOptions:\nA. x\nB. y\n"
    )


@pytest.mark.parametrize(
    ("kind", "meta", "needle"),
    [
        ("choice", {}, "letter of the single correct option"),
        ("multi_choice", {}, "letters of every correct option"),
        ("yes_no", {}, "yes or no"),
        ("yes_no", {"answer_set": "yes/no/maybe"}, "yes, no or maybe"),
        ("open", {}, "concisely"),
        ("classify", {"labels": "ref|het|hom-alt"}, "ref, het, hom-alt"),
    ],
)
def test_medlens_prompt_states_the_answer_format(
    kind: str, meta: dict[str, str], needle: str
) -> None:
    options = OPTIONS if kind in ("choice", "multi_choice") else {}
    item = Item(id="1", question="Q?", kind=kind, options=options, meta=meta)  # type: ignore[arg-type]
    text = build_prompt(item, "medlens")
    assert needle in text
    assert text.startswith("Question: Q?\n")


def test_unknown_style_is_a_user_error() -> None:
    with pytest.raises(SpecError, match="unknown prompt style"):
        build_prompt(Item(id="1", question="Q", kind="open"), "fancy")

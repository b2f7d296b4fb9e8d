"""Default prompts end with no concrete example answer (it anchors weak models on that letter
or word); the protocol card names the prompt version (issue 34)."""

from __future__ import annotations

import pytest

from medlens.core.items import Item
from medlens.execution.prompts import medlens_prompt, prompt_version
from medlens.report.card import _prompt_style


@pytest.mark.parametrize(
    ("kind", "options", "meta"),
    [
        ("choice", {"A": "liver", "B": "lung"}, {}),
        ("multi_choice", {"A": "liver", "B": "lung"}, {}),
        ("yes_no", {}, {}),
        ("yes_no", {}, {"answer_set": "yes/no/maybe"}),
    ],
)
def test_no_example_answer_in_the_default_prompt(kind: str, options: dict, meta: dict) -> None:
    item = Item(id="1", question="Which organ?", kind=kind, options=options, meta=meta)  # type: ignore[arg-type]
    text = medlens_prompt(item)
    assert "for example" not in text.lower()
    assert "Answer: B" not in text and "Answer: yes" not in text and "Answer: maybe" not in text


def test_the_card_names_the_prompt_version() -> None:
    assert prompt_version("medlens") == 2 and prompt_version("vlmeval") == 1
    assert _prompt_style({"prompt": "medlens", "prompt_version": 2}).startswith(
        "medlens (prompt version 2"
    )
    assert "version 1" in _prompt_style({"prompt": "medlens"})  # a run made before versions
    assert _prompt_style({"prompt": "vlmeval"}) == "vlmeval"

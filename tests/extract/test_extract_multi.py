"""Multi-answer multiple choice: every way models write a set of letters, as sorted strings."""

from __future__ import annotations

import pytest

from medlens.core.items import Item
from medlens.extract import extract

FINDINGS = {
    "A": "Pleural effusion",
    "B": "Pneumothorax",
    "C": "Consolidation",
    "D": "Cardiomegaly",
    "E": "Rib fracture",
}

MULTI_CASES: list[tuple[str, str | None, str]] = [
    ("A, C", "AC", "ok"),
    ("AC", "AC", "ok"),
    ("A,C", "AC", "ok"),
    ("C, A", "AC", "ok"),
    ("A and C", "AC", "ok"),
    ("A/C", "AC", "ok"),
    ("A & C", "AC", "ok"),
    ("A, C and D", "ACD", "ok"),
    ("A, C, and E", "ACE", "ok"),
    ("(A) and (C)", "AC", "ok"),
    ("a, c", "AC", "ok"),
    ("A\nC", "AC", "ok"),
    ("A. Pleural effusion\nC. Consolidation", "AC", "ok"),
    ("- A\n- C\n- D", "ACD", "ok"),
    ("A", "A", "ok"),
    ("The answers are A and C.", "AC", "ok"),
    ("The correct answers are A, C and D.", "ACD", "ok"),
    ("Answer: A, C", "AC", "ok"),
    ("Final answer: ACE", "ACE", "ok"),
    ("\\boxed{A, C}", "AC", "ok"),
    ("\\boxed{AC}", "AC", "ok"),
    ("<answer>B, D</answer>", "BD", "ok"),
    ('{"answer": ["A", "C"]}', "AC", "ok"),
    ('```json\n{"answer": ["B", "D", "E"]}\n```', "BDE", "ok"),
    ('["A", "C"]', "AC", "ok"),
    ('{"answer": "A, C"}', "AC", "ok"),
    ("答案是A和C", "AC", "ok"),
    ("答案：A、C", "AC", "ok"),
    ("正确答案为ACD", "ACD", "ok"),
    ("B、D选项正确", "BD", "ok"),
    ("A和C都正确", "AC", "ok"),
    ("A、B选项错误，C选项正确", "C", "ok"),
    ("There is a pleural effusion and a consolidation.", "AC", "ok"),
    ("Pleural effusion and cardiomegaly are present; no pneumothorax.", "AD", "ok"),
    ("The findings include consolidation, but there is no rib fracture.", "C", "ok"),
    (
        "The image shows pleural effusion, consolidation.\nTherefore, the answer is A, C.",
        "AC",
        "ok",
    ),
    ("I would choose A and D.", "AD", "ok"),
    ("Options B and D are correct.", "BD", "ok"),
    ("Both A and C.", "AC", "ok"),
    ("Options A and C are incorrect.", None, "unparsed"),
    ("Both B and C are possible.", None, "unparsed"),
    # hedges and non-answers
    ("A or C", None, "unparsed"),
    ("The answer is A or C.", None, "unparsed"),
    ("The answer is F.", None, "unparsed"),
    ("I cannot interpret chest radiographs. Please consult a radiologist.", None, "refused"),
    ("", None, "empty"),
]


@pytest.mark.parametrize(("output", "answer", "status"), MULTI_CASES)
def test_multi_choice_extraction(output: str, answer: str | None, status: str) -> None:
    item = Item(
        id="m", question="Which findings?", kind="multi_choice", options=FINDINGS, answer="AC"
    )
    extraction = extract(item, output)
    assert (extraction.answer, extraction.status) == (answer, status), extraction.method


@pytest.mark.parametrize(
    "output", ["A, C", "AC", "A and C", "A/C", "A\nC", '["A","C"]', "答案是A和C"]
)
def test_single_answer_items_do_not_take_sets(output: str) -> None:
    item = Item(id="s", question="Which finding?", kind="choice", options=FINDINGS, answer="A")
    extraction = extract(item, output)
    assert (extraction.answer, extraction.status) == (None, "unparsed"), extraction.method
    assert extraction.method.endswith(":ambiguous")

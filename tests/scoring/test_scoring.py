"""Main score and secondary per-item scores for every item kind."""

from __future__ import annotations

import pytest

from medlens.core.items import Answer, Item
from medlens.extract import Extraction, extract
from medlens.scoring.item_scores import item_scores, score

FOUR = {"A": "Normal", "B": "Diabetic retinopathy", "C": "Drusen", "D": "Glaucoma"}


def _ok(answer: str) -> Extraction:
    return Extraction(answer, "ok", "test")


MISSING = Extraction(None, "unparsed", "no_answer_found")

SCORE_CASES: list[tuple[str, dict[str, str], Answer, Extraction, float | None]] = [
    ("choice", FOUR, "C", _ok("C"), 1.0),
    ("choice", FOUR, "C", _ok("B"), 0.0),
    ("choice", FOUR, "C", MISSING, 0.0),
    ("choice", FOUR, None, _ok("C"), None),
    ("multi_choice", FOUR, "AC", _ok("AC"), 1.0),
    ("multi_choice", FOUR, "AC", _ok("A"), 0.0),
    ("multi_choice", FOUR, "A,C", _ok("AC"), 1.0),
    ("yes_no", {}, "yes", _ok("yes"), 1.0),
    ("yes_no", {}, "Yes", _ok("yes"), 1.0),
    ("yes_no", {}, "maybe", _ok("no"), 0.0),
    ("open", {}, "left lower lobe", _ok("The left lower lobe."), 1.0),
    ("open", {}, "left lower lobe", _ok("left lobe"), 0.0),
    ("classify", {}, "malignant", _ok("Malignant"), 1.0),
    ("classify", {"A": "Benign", "B": "Malignant"}, "B", _ok("Malignant"), 1.0),
    ("report", {}, "no acute disease", _ok("no acute disease"), 1.0),
    ("report", {}, "no acute disease", MISSING, 0.0),
    ("detect", {}, ((0.0, 0.0, 10.0, 10.0),), _ok("[[0, 0, 10, 10]]"), 1.0),
    ("detect", {}, ((0.0, 0.0, 10.0, 10.0),), _ok("[[0, 0, 10, 4]]"), 0.0),
    ("detect", {}, ((0.0, 0.0, 10.0, 10.0),), _ok("[[0, 0, 10, 6]]"), 1.0),
]


@pytest.mark.parametrize(("kind", "options", "gold", "extraction", "expected"), SCORE_CASES)
def test_score(
    kind: str, options: dict[str, str], gold: Answer, extraction: Extraction, expected: float | None
) -> None:
    item = Item(id="s", question="q", kind=kind, options=options, answer=gold)  # type: ignore[arg-type]
    assert score(item, extraction) == expected


def test_report_score_is_rouge_l() -> None:
    item = Item(id="r", question="q", kind="report", answer="mass in the left lower lobe")
    assert score(item, _ok("left lower lobe mass")) == pytest.approx(0.6)


EXACT = {"token_f1": 1.0, "token_recall": 1.0, "exact": 1.0, "contains": 1.0, "framed_match": 1.0}
OPEN_ZERO = {"token_f1": 0.0, "token_recall": 0.0, "bleu1": 0.0, "exact": 0.0, "contains": 0.0,
             "framed_match": 0.0}  # fmt: skip
SECONDARY_CASES: list[tuple[str, Answer, Extraction, dict[str, float]]] = [
    ("choice", "C", _ok("C"), {}),
    ("yes_no", "yes", _ok("yes"), {}),
    ("multi_choice", "AC", _ok("A"), {"jaccard": 0.5, "recall": 0.5}),
    ("multi_choice", "AC", _ok("ABC"), {"jaccard": 2 / 3, "recall": 1.0}),
    ("multi_choice", "AC", MISSING, {"jaccard": 0.0, "recall": 0.0}),
    ("open", "left lung", _ok("left lung"), {"bleu1": 1.0, **EXACT}),
    ("open", "left lung", MISSING, OPEN_ZERO),
    # the gold as VQA-RAD writes it vs the extracted answer (final full stop dropped)
    ("open", "On the right shoulder.", _ok("On the right shoulder"), {"bleu1": 1.0, **EXACT}),
    ("open", "Left", _ok("left"), {"bleu1": 1.0, **EXACT}),
    ("detect", ((0.0, 0.0, 10.0, 10.0),), _ok("[[0, 0, 10, 5]]"), {"iou": 0.5, "hit50": 1.0}),
    ("detect", ((0.0, 0.0, 10.0, 10.0),), MISSING, {"iou": 0.0, "hit50": 0.0}),
    ("multi_choice", None, _ok("A"), {}),
]


@pytest.mark.parametrize(("kind", "gold", "extraction", "expected"), SECONDARY_CASES)
def test_item_scores(
    kind: str, gold: Answer, extraction: Extraction, expected: dict[str, float]
) -> None:
    item = Item(id="s", question="q", kind=kind, options=FOUR, answer=gold)  # type: ignore[arg-type]
    assert item_scores(item, extraction) == pytest.approx(expected)


def test_open_secondary_scores_are_partial() -> None:
    item = Item(id="o", question="q", kind="open", answer="left upper lobe")
    scores = item_scores(item, _ok("left lower lobe"))
    assert scores["exact"] == 0.0
    assert scores["token_f1"] == pytest.approx(2 / 3)
    assert 0.0 < scores["bleu1"] < 1.0
    assert set(item_scores(Item("r", "q", "report", answer="x y"), _ok("x y"))) == {
        "rouge_l",
        "bleu4",
    }


def test_extraction_and_scoring_end_to_end() -> None:
    item = Item(id="e", question="q", kind="choice", options=FOUR, answer="C")
    assert score(item, extract(item, "answer: (c)")) == 1.0
    assert score(item, extract(item, "answer: (c)", "vlmeval")) == 0.0

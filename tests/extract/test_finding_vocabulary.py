"""Findings as vocabulary (issue 42, Deliver 4): another name of a gold finding (SNOMED CT / UMLS
synonyms, RadLex noun forms, abbreviations, the benchmarks' own misspellings of a gold) answers an
open question, and names the finding a yes/no question asks about; a negation, hedge or another
finding still does not."""

from __future__ import annotations

import pytest

from corpus_lines import corpus_case
from medlens.core.items import Item
from medlens.extract import extract
from medlens.scoring.item_scores import read_and_score

LORA_QUICK = "vqa-rad/qwen2-vl-2b-instruct-lora-quick__gr5293-finetuned.jsonl"


def test_a_hypodensity_answers_what_is_abnormal_about_the_spleen() -> None:
    item, output, finish, line = corpus_case(LORA_QUICK, "vqa-rad:321")  # gold hypodense lesion
    assert read_and_score(item, output, "medlens", finish)[1] == float(line.reader_credited)


OPEN = [
    ("What is the abnormality by the right hemidiaphragm?", "free air", "pneumoperitoneum", 1.0),
    ("What is abnormal?", "free air", "There is pneumoperitoneum under the right hemidiaphragm.", 1.0),
    ("What is seen in the chest?", "cardiomegaly", "An enlarged heart.", 1.0),
    ("What is seen in the chest?", "enlarged heart", "Cardiomegaly.", 1.0),
    ("What is in the gallbladder?", "gallstones", "cholelithiasis", 1.0),
    ("What is the liver lesion?", "hepatocellular carcioma", "HCC", 1.0),  # the gold misspelt
    ("What is the liver lesion?", "hepatocellular carcioma", "hepatocellular carcinoma", 1.0),
    ("What is seen in the brain?", "hemorrhage", "There is an acute bleed.", 1.0),
    ("How many kidneys are visible?", "2", "Both kidneys are visible.", 1.0),  # "both" counts two
    ("How many kidneys are visible?", "1", "Both kidneys are visible.", 0.0),
    # negated, hedged, or another finding: not credited
    ("What is seen in the brain?", "hemorrhage", "There is no bleeding.", 0.0),
    ("What is seen in the brain?", "hemorrhage", "This could be a bleed.", 0.0),
    ("What is seen in the chest?", "pleural effusion", "pleural thickening", 0.0),
    ("What is seen in the chest?", "cardiomegaly", "pneumoperitoneum", 0.0),
]  # fmt: skip


@pytest.mark.parametrize(("question", "gold", "output", "score"), OPEN)
def test_another_name_of_a_gold_finding_answers_an_open_question(
    question: str, gold: str, output: str, score: float
) -> None:
    item = Item(id="f", question=question, kind="open", answer=gold)
    assert read_and_score(item, output, "medlens")[1] == score


YES_NO = [
    ("Is there free air?", "Pneumoperitoneum is present.", "yes"),
    ("Is there pneumoperitoneum?", "Free air is seen under the diaphragm.", "yes"),
    ("Is there free air?", "There is no pneumoperitoneum.", "no"),
    ("Is there an enlarged heart?", "Cardiomegaly is present.", "yes"),
    ("Is there a hemorrhage?", "No bleeding is seen.", "no"),
    ("Are there gallstones?", "Cholelithiasis is seen.", "yes"),
    # "Is the heart enlarged?" asks of cardiomegaly, by whichever name the answer gives it
    ("Is the heart enlarged?", "Cardiomegaly is present.", "yes"),
    ("Is the heart enlarged?", "There is no cardiomegaly.", "no"),
    ("Is the liver enlarged?", "Hepatomegaly is seen.", "yes"),
    ("Is the heart enlarged?", "The heart is normal in size.", "no"),
    ("Is the spleen enlarged?", "Hepatomegaly is seen.", None),  # another organ's enlargement
    ("Is the heart enlarged?", "Cardiomegaly cannot be excluded.", None),
    ("Is there free air?", "Pneumoperitoneum may be present.", None),  # a hedge
    ("Is there a pleural effusion?", "There is a pneumothorax.", None),  # another finding
]


@pytest.mark.parametrize(("question", "output", "reading"), YES_NO)
def test_a_yes_no_answer_names_the_finding_asked_by_another_name(
    question: str, output: str, reading: str | None
) -> None:
    item = Item(id="f", question=question, kind="yes_no", answer="yes")
    assert extract(item, output).answer == reading

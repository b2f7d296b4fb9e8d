"""Open answers read against what the question asks (issue 42): the gold's modality answers a
question that asks only the modality, the gold's words the question gives need not be repeated,
a gold's bracketed aside and generic head noun are no part of the answer, and narrower terms
(FLAIR for MRI) and abbreviations (xr) are vocabulary. Real VQA-RAD outputs from the corpus;
each guard is what the careful reader still refuses."""

from __future__ import annotations

import pytest

from corpus_lines import corpus_case
from medlens.core.items import Item
from medlens.scoring.item_scores import read_and_score

QUICK = "vqa-rad/qwen2-vl-2b-instruct-lora-quick__gr5293-finetuned.jsonl"
ZERO = "vqa-rad/qwen2-vl-2b-instruct__gr5293-zeroshot.jsonl"

# (file, id, the rule that credits it): the careful reader credits each
CREDITED = [
    (
        ZERO,
        "vqa-rad:773",
        "asked:modality",
    ),  # "what type of image is this?" plain film x-ray: "x-ray"
    (ZERO, "vqa-rad:813", "asked:modality"),  # ct with contrast: "CT scan"
    (QUICK, "vqa-rad:1035", "asked:modality"),  # "how was this image taken" t2-mri: "mri"
    (ZERO, "vqa-rad:1461", "asked:modality"),  # mri - t2 weighted: "MRI"
    (ZERO, "vqa-rad:2939", "asked:modality"),  # "what is the imaging modality?" mr-flair: "MRI"
    (QUICK, "vqa-rad:1185", "asked:given"),  # "… which part of the pancreas?" the pancreatic head
    (ZERO, "vqa-rad:1551", "asked:given"),  # "which hemisphere …?" right hemisphere: "right"
    (ZERO, "vqa-rad:472", "asked:given"),  # "which lung is abnormal?" right lung: "right"
    (QUICK, "vqa-rad:1690", "asked:parenthetical"),  # supine (see air-fluid level): "supine"
    (QUICK, "vqa-rad:319", "asked:generic_head"),  # hypodense lesion: "hypodense"
    (QUICK, "vqa-rad:2617", "vocab:modality:flair"),  # "what modality …?" mri: "flair"
    (ZERO, "vqa-rad:2391", "vocab:modality:xr"),  # xr: "x-ray"
    (ZERO, "vqa-rad:1996", "vocab:organ:bowel"),  # "name one organ …" intestines: "bowel"
    (QUICK, "vqa-rad:1602", "vocab:organ:fat"),  # adipose tissue: "fat"
]


@pytest.mark.parametrize(("name", "item_id", "rule"), CREDITED)
def test_an_answer_to_what_the_question_asks_is_credited(
    name: str, item_id: str, rule: str
) -> None:
    item, output, finish, line = corpus_case(name, item_id)
    assert line.reader_credited
    found, value = read_and_score(item, output, "medlens", finish)
    assert value == 1.0
    assert found.method == f"free_text:{rule}"


def _open(question: str, gold: str) -> Item:
    return Item(id="q", question=question, kind="open", answer=gold)


REFUSED = [
    # the modality is asked, but the answer contradicts the rest of the gold, or is another one
    ("What type of image is this?", "ct with contrast", "CT without contrast"),
    ("What type of image is this?", "ct with contrast", "It is an MRI."),
    ("What type of imaging modality is used?", "mri - t2 weighted", "A T1-weighted MRI."),
    ("What type of image is this?", "ct with contrast", "It could be a CT or an MRI."),
    # the modality is not what is asked: the sequence is
    ("What is the sequence of this MRI?", "t2-mri", "MRI"),
    # the given word is not enough, the other side is wrong, a list is no answer
    ("Which lung is abnormal?", "right lung", "the lung"),
    ("Which lung is abnormal?", "right lung", "left"),
    ("Which lung is abnormal?", "right lung", "right and left"),
    # words the question offers as alternatives are not given
    ("Is the left or the right kidney enlarged?", "left kidney", "kidney"),
    ("How would you describe the spleen abnormality", "hypodense lesion", "hyperdense"),
    ("How is the patient positioned for this scan?", "supine (see air-fluid level)", "prone"),
]


@pytest.mark.parametrize(("question", "gold", "said"), REFUSED)
def test_what_the_question_asks_credits_no_other_answer(
    question: str, gold: str, said: str
) -> None:
    assert read_and_score(_open(question, gold), said, "medlens")[1] == 0.0

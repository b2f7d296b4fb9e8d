"""Yes/no (VQA closed questions) and yes/no/maybe (PubMedQA) outputs, English and Chinese."""

from __future__ import annotations

import pytest

from medlens.core.items import Item
from medlens.extract import extract

TWO_WAY: list[tuple[str, str | None, str, str]] = [
    ("Yes", "yes", "ok", "Is there a fracture?"),
    ("yes.", "yes", "ok", "Is there a fracture?"),
    ("No", "no", "ok", "Is there a fracture?"),
    ("no", "no", "ok", "Is there a fracture?"),
    ("Yes, there is a pneumothorax in the right apex.", "yes", "ok", "Is there a pneumothorax?"),
    ("No, the lungs are clear.", "no", "ok", "Is there a pneumothorax?"),
    ("Absolutely not.", "no", "ok", "Is there a fracture?"),
    ("Definitely yes.", "yes", "ok", "Is there a fracture?"),
    ("I don't think so.", "no", "ok", "Is there a fracture?"),
    ("No evidence of pneumothorax.", "no", "ok", "Is there a pneumothorax?"),
    ("There is no evidence of a fracture.", "no", "ok", "Is there a fracture?"),
    ("There is no pleural effusion.", "no", "ok", "Is there a pleural effusion?"),
    ("A pleural effusion is not seen.", "no", "ok", "Is there a pleural effusion?"),
    (
        "The liver does not show any focal lesion.",
        "no",
        "ok",
        "Does the liver have a focal lesion?",
    ),
    (
        "There is a large mass in the left upper lobe.",
        "yes",
        "ok",
        "Is there a mass in the left upper lobe?",
    ),
    ("A mass is present in the left upper lobe.", "yes", "ok", "Is there a mass?"),
    (
        "The image shows evidence of free air under the diaphragm.",
        "yes",
        "ok",
        "Is there free air?",
    ),
    ("Answer: yes", "yes", "ok", "Is there a fracture?"),
    ("Final answer: No", "no", "ok", "Is there a fracture?"),
    ("The answer is yes.", "yes", "ok", "Is there a fracture?"),
    ("\\boxed{No}", "no", "ok", "Is there a fracture?"),
    ("\\boxed{\\text{yes}}", "yes", "ok", "Is there a fracture?"),
    ("<answer>no</answer>", "no", "ok", "Is there a fracture?"),
    ('{"answer": "yes"}', "yes", "ok", "Is there a fracture?"),
    ('{"answer": false}', "no", "ok", "Is there a fracture?"),
    ("**Yes**", "yes", "ok", "Is there a fracture?"),
    ("YES", "yes", "ok", "Is there a fracture?"),
    (
        "Looking at the chest radiograph, the costophrenic angles are sharp. So, no.",
        "no",
        "ok",
        "Is there a fracture?",
    ),
    ("After careful review of the CT, I would say yes.", "yes", "ok", "Is there a fracture?"),
    (
        "The kidney is normal in size. No hydronephrosis is seen.",
        "no",
        "ok",
        "Is there hydronephrosis?",
    ),
    ("是", "yes", "ok", "Is there a fracture?"),
    ("是的，存在骨折。", "yes", "ok", "Is there a fracture?"),
    ("不是", "no", "ok", "Is there a fracture?"),
    ("否", "no", "ok", "Is there a fracture?"),
    ("没有", "no", "ok", "Is there a fracture?"),
    ("没有明显的骨折。", "no", "ok", "Is there a fracture?"),
    ("未见胸腔积液。", "no", "ok", "Is there a fracture?"),
    ("答案：是", "yes", "ok", "Is there a fracture?"),
    ("答案是否", "no", "ok", "Is there a fracture?"),
    ("Absent.", "no", "ok", "Is there a fracture?"),
    ("Present.", "yes", "ok", "Is there a fracture?"),
    ("Negative.", "no", "ok", "Is there a fracture?"),
    ("I don't see any fracture.", "no", "ok", "Is there a fracture?"),
    ("There does not appear to be a fracture.", "no", "ok", "Is there a fracture?"),
    ("No fracture is seen.", "no", "ok", "Is there a fracture?"),
    (
        "Yes, but further imaging is recommended. Please consult a doctor.",
        "yes",
        "ok",
        "Is there a fracture?",
    ),
    ("对", "yes", "ok", "Is there a fracture?"),
    ("不对", "no", "ok", "Is there a fracture?"),
    ("无", "no", "ok", "Is there a fracture?"),
    ("<think>The cortex is interrupted.</think>\nYes", "yes", "ok", "Is there a fracture?"),
    # hedges and contradictions are not answers on a two-way item
    ("Not necessarily.", None, "unparsed", "Is there a fracture?"),
    ("Normal.", None, "unparsed", "Is there a fracture?"),
    ("I don't have access to the image.", None, "refused", "Is there a fracture?"),
    ("Maybe", None, "unparsed", "Is there a fracture?"),
    ("Possibly, but the image quality is poor.", None, "unparsed", "Is there a fracture?"),
    ("Yes and no.", None, "unparsed", "Is there a fracture?"),
    ("It is unclear whether there is a fracture.", None, "unparsed", "Is there a fracture?"),
    (
        "There is no pneumothorax, but there is a small pleural effusion.",
        None,
        "unparsed",
        "Is there a fracture?",
    ),
    ("The image is an axial CT of the abdomen.", None, "unparsed", "Is there a fracture?"),
    # refusals, and disclaimers followed by answers
    (
        "I cannot provide a diagnosis. Please consult a radiologist.",
        None,
        "refused",
        "Is there a fracture?",
    ),
    (
        "No, I cannot tell from this image; please consult a doctor.",
        None,
        "refused",
        "Is there a fracture?",
    ),
    (
        "As an AI, I can't diagnose, but there is no evidence of a fracture.",
        "no",
        "ok",
        "Is there a fracture?",
    ),
    (
        "I'm not a doctor, but yes, there appears to be a fracture.",
        "yes",
        "ok",
        "Is there a fracture?",
    ),
    ("抱歉，我无法判断，请咨询医生。", None, "refused", "Is there a fracture?"),
    ("", None, "empty", "Is there a fracture?"),
]

THREE_WAY: list[tuple[str, str | None, str]] = [
    ("yes", "yes", "ok"),
    ("no", "no", "ok"),
    ("maybe", "maybe", "ok"),
    ("Maybe.", "maybe", "ok"),
    ("Answer: maybe", "maybe", "ok"),
    ("The answer is maybe, because the trial was underpowered.", "maybe", "ok"),
    ("Yes. The study found that statins reduced mortality (HR 0.8).", "yes", "ok"),
    ("No. The randomized trial showed no significant difference between groups.", "no", "ok"),
    ("The evidence is inconclusive; further studies are needed.", "maybe", "ok"),
    ("It remains unclear whether the intervention improves outcomes.", "maybe", "ok"),
    ("The results do not support a benefit of early surgery.", "no", "ok"),
    ("Possibly.", "maybe", "ok"),
    ("可能", "maybe", "ok"),
    ("不确定", "maybe", "ok"),
    ("Yes or maybe.", None, "unparsed"),
    ("I cannot give medical advice.", None, "refused"),
]


@pytest.mark.parametrize(("output", "answer", "status", "question"), TWO_WAY)
def test_yes_no(output: str, answer: str | None, status: str, question: str) -> None:
    item = Item(id="y", question=question, kind="yes_no", answer="yes")
    extraction = extract(item, output)
    assert (extraction.answer, extraction.status) == (answer, status), extraction.method


@pytest.mark.parametrize(("output", "answer", "status"), THREE_WAY)
def test_yes_no_maybe(output: str, answer: str | None, status: str) -> None:
    item = Item(
        id="p", question="Do statins reduce mortality?", kind="yes_no", answer="maybe",
        meta={"answer_set": "yes/no/maybe"},
    )  # fmt: skip
    extraction = extract(item, output)
    assert (extraction.answer, extraction.status) == (answer, status), extraction.method


@pytest.mark.parametrize(
    ("output", "answer"),
    [("A", "yes"), ("B. No", "no"), ("The answer is B.", "no"), ("Yes", "yes")],
)
def test_yes_no_as_lettered_options(output: str, answer: str) -> None:
    item = Item(
        id="o", question="Fracture?", kind="yes_no", options={"A": "Yes", "B": "No"}, answer="no"
    )
    assert extract(item, output).answer == answer
    assert extract(item, "A", "vlmeval").answer == "yes"

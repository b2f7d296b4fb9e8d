"""Yes/no (VQA closed questions) and yes/no/maybe (PubMedQA) outputs, English and Chinese."""

from __future__ import annotations

import pytest

from medlens.core.items import Item
from medlens.extract import extract

TWO_WAY: list[tuple[str, str | None, str]] = [
    ("Yes", "yes", "ok"),
    ("yes.", "yes", "ok"),
    ("No", "no", "ok"),
    ("no", "no", "ok"),
    ("Yes, there is a pneumothorax in the right apex.", "yes", "ok"),
    ("No, the lungs are clear.", "no", "ok"),
    ("Absolutely not.", "no", "ok"),
    ("Definitely yes.", "yes", "ok"),
    ("I don't think so.", "no", "ok"),
    ("No evidence of pneumothorax.", "no", "ok"),
    ("There is no evidence of a fracture.", "no", "ok"),
    ("There is no pleural effusion.", "no", "ok"),
    ("A pleural effusion is not seen.", "no", "ok"),
    ("The liver does not show any focal lesion.", "no", "ok"),
    ("There is a large mass in the left upper lobe.", "yes", "ok"),
    ("A mass is present in the left upper lobe.", "yes", "ok"),
    ("The image shows evidence of free air under the diaphragm.", "yes", "ok"),
    ("Answer: yes", "yes", "ok"),
    ("Final answer: No", "no", "ok"),
    ("The answer is yes.", "yes", "ok"),
    ("\\boxed{No}", "no", "ok"),
    ("\\boxed{\\text{yes}}", "yes", "ok"),
    ("<answer>no</answer>", "no", "ok"),
    ('{"answer": "yes"}', "yes", "ok"),
    ('{"answer": false}', "no", "ok"),
    ("**Yes**", "yes", "ok"),
    ("YES", "yes", "ok"),
    ("Looking at the chest radiograph, the costophrenic angles are sharp. So, no.", "no", "ok"),
    ("After careful review of the CT, I would say yes.", "yes", "ok"),
    ("The kidney is normal in size. No hydronephrosis is seen.", "no", "ok"),
    ("是", "yes", "ok"),
    ("是的，存在骨折。", "yes", "ok"),
    ("不是", "no", "ok"),
    ("否", "no", "ok"),
    ("没有", "no", "ok"),
    ("没有明显的骨折。", "no", "ok"),
    ("未见胸腔积液。", "no", "ok"),
    ("答案：是", "yes", "ok"),
    ("答案是否", "no", "ok"),
    ("Absent.", "no", "ok"),
    ("Present.", "yes", "ok"),
    ("Negative.", "no", "ok"),
    ("I don't see any fracture.", "no", "ok"),
    ("There does not appear to be a fracture.", "no", "ok"),
    ("No fracture is seen.", "no", "ok"),
    ("Yes, but further imaging is recommended. Please consult a doctor.", "yes", "ok"),
    ("对", "yes", "ok"),
    ("不对", "no", "ok"),
    ("无", "no", "ok"),
    ("<think>The cortex is interrupted.</think>\nYes", "yes", "ok"),
    # hedges and contradictions are not answers on a two-way item
    ("Not necessarily.", None, "unparsed"),
    ("Normal.", None, "unparsed"),
    ("I don't have access to the image.", None, "refused"),
    ("Maybe", None, "unparsed"),
    ("Possibly, but the image quality is poor.", None, "unparsed"),
    ("Yes and no.", None, "unparsed"),
    ("It is unclear whether there is a fracture.", None, "unparsed"),
    ("There is no pneumothorax, but there is a small pleural effusion.", None, "unparsed"),
    ("The image is an axial CT of the abdomen.", None, "unparsed"),
    # refusals, and disclaimers followed by answers
    ("I cannot provide a diagnosis. Please consult a radiologist.", None, "refused"),
    ("No, I cannot tell from this image; please consult a doctor.", None, "refused"),
    ("As an AI, I can't diagnose, but there is no evidence of a fracture.", "no", "ok"),
    ("I'm not a doctor, but yes, there appears to be a fracture.", "yes", "ok"),
    ("抱歉，我无法判断，请咨询医生。", None, "refused"),
    ("", None, "empty"),
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


@pytest.mark.parametrize(("output", "answer", "status"), TWO_WAY)
def test_yes_no(output: str, answer: str | None, status: str) -> None:
    item = Item(id="y", question="Is there a fracture?", kind="yes_no", answer="yes")
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

"""Free-text kinds: open answers, classification labels, reports and detection boxes."""

from __future__ import annotations

import json

import pytest

from medlens.core.items import Item
from medlens.extract import extract

OPEN_CASES: list[tuple[str, str | None, str]] = [
    ("Left lower lobe", "Left lower lobe", "ok"),
    ("Answer: left lower lobe.", "left lower lobe", "ok"),
    ("The answer is pneumonia.", "pneumonia", "ok"),
    ("\\boxed{Right kidney}", "Right kidney", "ok"),
    ('{"answer": "brain MRI"}', "brain MRI", "ok"),
    ("<answer>T2-weighted</answer>", "T2-weighted", "ok"),
    ("The lesion is in the liver.", "The lesion is in the liver", "ok"),
    ("Pneumonia. Please consult a doctor for confirmation.", "Pneumonia", "ok"),
    ("I cannot provide a diagnosis. Please consult a radiologist.", None, "refused"),
    ("", None, "empty"),
]


@pytest.mark.parametrize(("output", "answer", "status"), OPEN_CASES)
def test_open_answers(output: str, answer: str | None, status: str) -> None:
    item = Item(id="o", question="Where is the lesion?", kind="open", answer="left lower lobe")
    extraction = extract(item, output)
    assert (extraction.answer, extraction.status) == (answer, status), extraction.method


LABELS = "benign|malignant|normal"
CLASSIFY_CASES: list[tuple[str, str | None, str]] = [
    ("malignant", "malignant", "ok"),
    ("Malignant.", "malignant", "ok"),
    ("The lesion appears malignant.", "malignant", "ok"),
    ("This is not malignant; it is benign.", "benign", "ok"),
    ("Answer: benign", "benign", "ok"),
    ("Benign or malignant, hard to say.", None, "unparsed"),
    ("A spiculated mass.", None, "unparsed"),
    ("I'm unable to classify this image. Please consult a pathologist.", None, "refused"),
]


@pytest.mark.parametrize(("output", "answer", "status"), CLASSIFY_CASES)
def test_classify_with_labels_in_meta(output: str, answer: str | None, status: str) -> None:
    item = Item(
        id="c", question="Class?", kind="classify", answer="malignant", meta={"labels": LABELS}
    )
    extraction = extract(item, output)
    assert (extraction.answer, extraction.status) == (answer, status), extraction.method


@pytest.mark.parametrize(
    ("output", "answer"),
    [
        ("B", "Malignant"),
        ("B. Malignant", "Malignant"),
        ("malignant", "Malignant"),
        ("A or B", None),
    ],
)
def test_classify_with_options_answers_the_label(output: str, answer: str | None) -> None:
    item = Item(
        id="c", question="Class?", kind="classify",
        options={"A": "Benign", "B": "Malignant", "C": "Normal"}, answer="Malignant",
    )  # fmt: skip
    assert extract(item, output).answer == answer


def test_report_keeps_the_text_and_drops_disclaimers() -> None:
    item = Item(id="r", question="Write the report.", kind="report", answer="No acute findings.")
    text = "Findings: The lungs are clear.\nImpression: No acute disease.\nPlease consult a doctor."
    extraction = extract(item, text)
    assert extraction.status == "ok"
    assert extraction.answer == "Findings: The lungs are clear. Impression: No acute disease."
    assert extract(item, "As an AI, I cannot write medical reports.").status == "refused"


DETECT_CASES: list[tuple[dict[str, str], str, list[list[float]] | None, str]] = [
    ({}, "[10, 20, 110, 220]", [[10, 20, 110, 220]], "box"),
    ({}, "The lesion is at [110, 220, 10, 20].", [[10, 20, 110, 220]], "box"),
    ({}, "(10, 20), (110, 220)", [[10, 20, 110, 220]], "box"),
    ({}, "<box>(10,20),(110,220)</box>", [[10, 20, 110, 220]], "box"),
    ({}, "[10, 20, 30, 40] and [50, 60, 70, 80]", [[10, 20, 30, 40], [50, 60, 70, 80]], "box"),
    ({"box_format": "normalized"}, "[0.1, 0.2, 0.5, 0.6]", [[0.1, 0.2, 0.5, 0.6]], "box"),
    # pixel output on a normalised item, converted with the image size
    (
        {"box_format": "normalized", "image_width": "200", "image_height": "400"},
        "[20, 80, 100, 240]",
        [[0.1, 0.2, 0.5, 0.6]],
        "box:converted",
    ),
    # normalised output on a pixel item, converted with the image size
    (
        {"image_width": "200", "image_height": "400"},
        "[0.1, 0.2, 0.5, 0.6]",
        [[20, 80, 100, 240]],
        "box:converted",
    ),
    ({"box_format": "normalized"}, "[20, 80, 100, 240]", None, "box:frame_unknown"),
    ({}, "There is a nodule in the right upper lobe.", None, "no_box"),
]


@pytest.mark.parametrize(("meta", "output", "boxes", "method"), DETECT_CASES)
def test_detect_boxes(
    meta: dict[str, str], output: str, boxes: list[list[float]] | None, method: str
) -> None:
    item = Item(
        id="d", question="Locate the nodule.", kind="detect", answer=((0, 0, 1, 1),), meta=meta
    )
    extraction = extract(item, output)
    assert extraction.method == method
    if boxes is None:
        assert extraction.answer is None
        return
    assert extraction.answer is not None
    got = json.loads(extraction.answer)
    assert [len(box) for box in got] == [4] * len(boxes)
    assert [v for box in got for v in box] == pytest.approx([v for box in boxes for v in box])

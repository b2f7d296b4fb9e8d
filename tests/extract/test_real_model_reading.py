"""Reading outputs as real models write them, per class, on real questions (../shared/realdata):
open answers given as sentences, final choices after option-by-option reasoning, non-answers,
yes/no answers that restate the image, and the over-crediting a careful reader refuses. Every
output here is written in the styles of LLaVA-like and GPT-like models (issue 34)."""

from __future__ import annotations

import pytest

from medlens.extract import extract
from medlens.scoring.item_scores import read_and_score
from real_items import real_item

# (benchmark, id, output, credited) — open answers a careful reader credits
OPEN_CREDITED = [
    ("slake", "11934", "The scan shown here is a computed tomography image of the chest."),
    ("slake", "11934", "This image was acquired with CT."),
    ("slake", "11965", "This is a plain radiograph of the chest."),
    ("slake", "11972", "The image is a magnetic resonance image of the brain."),
    ("slake", "11935", "This image belongs to the thorax."),
    ("slake", "11973", "It shows the abdominal region."),
    ("slake", "11974", "This is a T2-weighted MR image, with bright cerebrospinal fluid."),
    ("slake", "12084", "Both kidneys are visible, so there are two."),
    ("slake", "12058", "There is only one kidney in this image."),
    ("slake", "12059", "The largest organ here is the liver, seen in cross-section."),
    ("slake", "12230", "The rightmost organ in this image is the colon."),
    ("slake", "12265", "The image was scanned in the coronal plane."),
    ("slake", "12564", "This is an axial slice."),
    ("slake", "12268", "The pneumothorax is in the right upper lobe."),
    ("slake", "12807", "The colon is smaller than the liver."),
    ("slake", "11971", "The heart is abnormal; the lung looks normal."),
    ("vqa-rad", "1492", "The patient is a woman."),
    ("vqa-rad", "809", "This CT image is in the transverse plane."),
    ("vqa-rad", "1108", "The cavitary lesion is located in the upper right lung."),
    ("vqa-rad", "2328", "The thoracic region is visualized."),
    ("vqa-rad", "1265", "The abdomen is imaged here, including the liver and both kidneys."),
]

# the careful reader refuses: lists, hedges, comparisons, less specific answers, negations
OPEN_REFUSED = [
    ("slake", "11934", "It could be a CT or an MRI."),
    ("slake", "11934", "This is probably a computed tomography scan."),
    ("slake", "11934", "This is not a CT; it is an MRI."),
    ("slake", "11974", "This is an MRI."),  # less specific than T2
    ("slake", "12268", "The pneumothorax is in the right lung."),  # less specific
    ("slake", "12059", "The spleen appears larger than the liver."),
    ("slake", "12059", "The liver, spleen and kidneys are visible."),
    ("slake", "12084", "There are two or three kidneys."),
    ("slake", "11935", "The image shows the chest and the abdomen."),
    ("vqa-rad", "1492", "Is the patient female?"),
    ("vqa-rad", "1238", "It is a CT scan. An MRI would show the soft tissue better."),
]


@pytest.mark.parametrize(("bench", "item_id", "output"), OPEN_CREDITED)
def test_open_sentences_asserting_the_gold_are_credited(
    bench: str, item_id: str, output: str
) -> None:
    item = real_item(bench, item_id)
    assert read_and_score(item, output, "medlens")[1] == 1.0


@pytest.mark.parametrize(("bench", "item_id", "output"), OPEN_REFUSED)
def test_open_answers_a_careful_reader_refuses(bench: str, item_id: str, output: str) -> None:
    item = real_item(bench, item_id)
    assert read_and_score(item, output, "medlens")[1] == 0.0


def test_a_vocabulary_verdict_names_its_entry_and_framed_match_stays_secondary() -> None:
    from medlens.scoring.item_scores import item_scores

    item = real_item("slake", "11934")  # gold CT
    found, value = read_and_score(item, "The scan is a computed tomography image.", "medlens")
    assert value == 1.0
    assert found.method == "free_text:vocab:modality:computed tomography"
    assert item_scores(item, found)["framed_match"] == 0.0


# (benchmark, id, output, letter) — the last explicit commitment wins
CHOICE_CASES = [
    (
        "medqa",
        "3",
        "Renal papillary necrosis (A) is unlikely without analgesic abuse. "
        "Polyarteritis nodosa (D) spares the glomeruli; the most likely cause is: B) Cholesterol "
        "embolization. Option C would show eosinophilia and asthma.",
        "B",
    ),
    (
        "medqa",
        "3",
        "A is unlikely given no NSAID use, and recent catheterization eliminates D; that leaves B.",
        "B",
    ),
    (
        "medqa",
        "5",
        "Erythromycin ointment treats bacterial conjunctivitis, not this. Warm "
        "compresses help a chalazion. The best treatment here is option B.",
        "B",
    ),
    (
        "medqa",
        "5",
        "Considering each: A no, C no, D carries steroid risks. The underlying "
        "condition is allergic, so the treatment is B.",
        "B",
    ),
    (
        "medqa",
        "4",
        "The picture fits Legionella... wait, no: the organism forming pink colonies "
        "on MacConkey agar fits best.\nFinal answer: D",
        "D",
    ),
    ("medqa", "5", "The most appropriate treatment is drops of ketotifen for the eye.", "B"),
    (
        "medmcqa",
        "b64a9cd7-d076-4c55-8be1-f9c44fece6cc",
        "Ultrasound cannot definitely tell her. "
        "Blood screening is not diagnostic either. Amniotic fluid samples plus chromosomal analysis "
        "will definitely tell her that next baby will be down syndromic or not.",
        "C",
    ),
]


@pytest.mark.parametrize(("bench", "item_id", "output", "letter"), CHOICE_CASES)
def test_final_choice_after_reasoning(bench: str, item_id: str, output: str, letter: str) -> None:
    found = extract(real_item(bench, item_id), output)
    assert (found.status, found.answer) == ("ok", letter)


# (benchmark, id, output, status, method prefix) — non-answers carry no polarity or option
NON_ANSWERS = [
    (
        "vqa-rad",
        "36",
        "Could you upload the chest X-ray so I can check the ribs?",
        "unparsed",
        "non_answer:question",
    ),
    (
        "vqa-rad",
        "36",
        "What do you mean by a rib fracture here?",
        "unparsed",
        "non_answer:question",
    ),
    ("vqa-rad", "811", "synpic50958.jpg", "unparsed", "non_answer:file_name"),
    ("vqa-rad", "811", "2019-03-14 10:22:51", "unparsed", "non_answer:timestamp"),
    ("vqa-rad", "36", "There is no evidence of", "unparsed", "truncated"),
    ("vqa-rad", "811", "ASSISTANT:", "empty", "boilerplate"),
    ("slake", "11934", "Can you tell me which image you mean?", "unparsed", "non_answer:question"),
    ("slake", "11934", "IMG_0412.png", "unparsed", "non_answer:file_name"),
    (
        "medqa",
        "3",
        "Let's go through the options one by one. Option B, cholesterol embolization, "
        "fits the livedo reticularis and the",
        "unparsed",
        "truncated",
    ),
]


@pytest.mark.parametrize(("bench", "item_id", "output", "status", "method"), NON_ANSWERS)
def test_non_answers_commit_to_nothing(
    bench: str, item_id: str, output: str, status: str, method: str
) -> None:
    found = extract(real_item(bench, item_id), output)
    assert (found.answer, found.status, found.method) == (None, status, method)


def test_cut_at_the_token_cap_reads_only_what_was_finished() -> None:
    item = real_item("vqa-rad", "36")  # "Is there a rib fracture?" no
    cut = "The ribs are intact. There is a small"
    assert extract(item, cut, finish_reason="length").answer == "no"
    # a leading "Yes" committed before the cut (issue 42: was thrown away with its sentence)
    committed = extract(item, "Yes, there is a displaced fracture of the", "medlens", "length")
    assert committed.answer == "yes"
    assert extract(item, "There is no evidence of", "medlens", "length").answer is None
    choice = real_item("medqa", "5")
    reasoning = "Ketotifen is a mast-cell stabiliser; fluorometholone is a steroid. Option B"
    assert extract(choice, reasoning, finish_reason="length").answer is None


# (benchmark, id, output, reading) — clear answers, not contradictions
YES_NO_CASES = [
    ("vqa-rad", "759", "No, the temporal bones appear intact.", "no"),
    ("vqa-rad", "946", "No. The vertebral bodies are intact.", "no"),
    ("vqa-rad", "790", "The gyri appear normal.", "no"),
    ("vqa-rad", "790", "No, the gyri and sulci look normal for age.", "no"),
    ("vqa-rad", "811", "No, this is an MRI of the head.", "no"),
    ("vqa-rad", "1209", "No, it is a computed tomography scan of the abdomen.", "no"),
    ("vqa-rad", "513", "No, this image is in the axial plane.", "no"),
    ("vqa-rad", "985", "Yes, the X-ray shows a widened mediastinum.", "yes"),
    ("vqa-rad", "36", "This is not seen in the image.", "no"),
    ("vqa-rad", "36", "Yes, the ribs appear intact.", None),  # says yes, then no fracture
]


@pytest.mark.parametrize(("bench", "item_id", "output", "reading"), YES_NO_CASES)
def test_yes_no_answers_that_describe_the_image(
    bench: str, item_id: str, output: str, reading: str | None
) -> None:
    assert extract(real_item(bench, item_id), output).answer == reading

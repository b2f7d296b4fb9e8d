"""Yes/no answers in sentences, read against real VQA-RAD, SLAKE and PathVQA questions (issue 42,
the synthetic held-out classes): presence and absence stated in a sentence, negation inside a
noun phrase ("no evidence of", "without"), generic presence ("Abnormalities are seen."), the
question's modality named by another name, and the question's own words — its commas, its
"probably", its "gram negative", its "no neck", its "without tilting" — which are no hedge
and no negation of the answer."""

from __future__ import annotations

import pytest

from medlens.extract import extract
from medlens.scoring.item_scores import read_and_score
from real_items import real_item

# (benchmark, id, output, reading)
CASES = [
    # a question with commas: the clause is not split at them
    ("pathvqa", "6318", "Sectioned surface shows circumscribed, dark tan, haemorrhagic and "
     "necrotic tumour.", "yes"),
    ("pathvqa", "6319", "The sectioned surface of rectal wall does not show circumscribed, dark "
     "tan, haemorrhagic and necrotic tumour.", "no"),
    # the question's own "probably" is no hedge
    ("pathvqa", "6427", "Yes, this image shows opened muscle probably psoas natural color large "
     "ovoid typical sarcoma.", "yes"),
    # "gram negative" negates nothing; "no neck" in the question negates no answer
    ("pathvqa", "6532", "This image does not show gram negative septicemia due to scalp "
     "electrode in a neonate.", "no"),
    ("pathvqa", "6532", "This image shows gram negative septicemia due to scalp electrode in a "
     "neonate.", "yes"),
    ("pathvqa", "6556", "This image does not show lateral view of body with renal facies no "
     "neck.", "no"),
    ("pathvqa", "6556", "Yes, the image clearly shows this.", "yes"),
    # "… without tilting?" is not a negated question: "this" refers to what it asks
    ("vqa-rad", "49", "Yes, the image clearly shows this.", "yes"),
    ("vqa-rad", "49", "No, this is not seen in the image.", "no"),
    # generic presence and negation inside the noun phrase
    ("vqa-rad", "1943", "Abnormalities are seen in this image.", "yes"),
    ("vqa-rad", "1943", "There are no abnormal findings.", "no"),
    ("vqa-rad", "2045", "The image is without abnormality in the lungs.", "no"),
    ("slake", "11975", "No abnormality is seen in the spleen.", "no"),
    # the question's modality by another name, or another modality
    ("vqa-rad", "1379", "This is a computed tomography image.", "yes"),
    ("vqa-rad", "1209", "This is a computed tomography scan of the abdomen.", "no"),
    ("slake", "12549", "This is a magnetic resonance image.", "no"),
    ("vqa-rad", "1456", "This is a CT scan.", "yes"),  # the region is not contradicted
    ("vqa-rad", "1456", "This is a CT of the chest.", "no"),
]  # fmt: skip


@pytest.mark.parametrize(("bench", "item_id", "output", "reading"), CASES)
def test_a_statement_answers_the_question_it_restates(
    bench: str, item_id: str, output: str, reading: str
) -> None:
    assert extract(real_item(bench, item_id), output).answer == reading


def test_a_hedge_of_its_own_still_leaves_a_question_unanswered() -> None:
    item = real_item("pathvqa", "6427")
    said = "This image probably shows opened muscle probably psoas natural color large ovoid typical sarcoma."
    assert extract(item, said).answer is None
    assert extract(real_item("vqa-rad", "1379"), "This may be a CT image.").answer is None


def test_an_open_caption_restated_is_credited_with_its_own_words() -> None:
    item = real_item("pathvqa", "6426")  # a caption gold holding "probably"
    gold = str(item.answer)
    assert read_and_score(item, f"It is {gold}.", "medlens")[1] == 1.0
    assert read_and_score(item, f"It is probably {gold}.", "medlens")[1] == 0.0

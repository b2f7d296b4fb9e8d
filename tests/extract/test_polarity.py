"""Question polarity on real SLAKE and VQA-RAD questions (../shared/realdata): a yes/no
statement counts only when its proposition is the question's, complementary terms flip it,
another proposition says nothing, and hedges are never yes or no."""

from __future__ import annotations

import pytest

from medlens.core.items import Item
from medlens.extract import extract
from medlens.extract.polarity import COMPLEMENTARY_PAIRS, parse_question, terms_in
from real_items import real_item

# (benchmark, item id, model output, reading); the question is quoted for the reader
POLARITY_CASES: list[tuple[str, str, str, str | None]] = [
    # "Does the liver look normal?": the question's term, its complement, another organ
    ("slake", "11976", "There is no abnormality.", "yes"),
    ("slake", "11976", "No abnormality is seen in the liver.", "yes"),
    ("slake", "11976", "The liver looks normal.", "yes"),
    ("slake", "11976", "The liver appears abnormal.", "no"),
    ("slake", "11976", "The liver is not normal.", "no"),
    ("slake", "11976", "There is a mass in the liver.", "no"),
    ("slake", "11976", "The kidney is abnormal.", None),
    ("slake", "11976", "There is no mass in the liver.", None),
    ("slake", "11976", "Yes, there is no abnormality.", "yes"),
    ("slake", "11976", "No, there is no abnormality.", None),  # the word and the statement disagree
    # "Is the lung healthy?": healthy reads as normal, diseased as abnormal
    ("slake", "11942", "The lung is diseased.", "no"),
    ("slake", "11942", "No abnormality is seen.", "yes"),
    ("slake", "11942", "The lung looks healthy.", "yes"),
    ("slake", "11942", "The lung is unremarkable.", "yes"),
    ("slake", "11942", "There is a nodule in the left lung.", "no"),
    # "Are there abnormalities in this image?"
    ("slake", "11970", "There is no abnormality.", "no"),
    ("slake", "11970", "There is a nodule in the right lung.", "yes"),
    ("slake", "11970", "The image looks normal.", "no"),
    ("slake", "11970", "No effusion is seen.", None),
    # "Does the kidney look abnormal?", "Does this image look normal?"
    ("slake", "12064", "The kidney looks normal.", "no"),
    ("slake", "12064", "The kidney is not normal.", "yes"),
    ("slake", "12064", "No abnormality of the kidney is seen.", "no"),
    ("slake", "12092", "This image looks abnormal.", "no"),
    ("slake", "12092", "There is no abnormality in this image.", "yes"),
    # "Is anything not normal in the image?": "not normal" is the term abnormal
    ("vqa-rad", "2084", "Everything appears normal.", "no"),
    ("vqa-rad", "2084", "There is an abnormality in the liver.", "yes"),
    # "is the heart enlarged?" / "… within normal size limits?": enlarged ↔ normal-sized
    ("vqa-rad", "989", "The heart is enlarged.", "yes"),
    ("vqa-rad", "989", "The heart is not enlarged.", "no"),
    ("vqa-rad", "989", "The heart is normal in size.", "no"),
    ("vqa-rad", "989", "There is cardiomegaly.", "yes"),  # the finding vocabulary names it
    ("vqa-rad", "164", "The cardiac silhouette is enlarged.", "no"),
    ("vqa-rad", "164", "The cardiac silhouette is normal in size.", "yes"),
    # present / absent
    ("vqa-rad", "2137", "Cardiomegaly is present.", "yes"),
    ("vqa-rad", "2137", "Cardiomegaly is absent.", "no"),
    ("vqa-rad", "629", "The gallbladder is present.", "yes"),
    ("vqa-rad", "629", "The gallbladder is absent.", "no"),
    # "Is the liver normal?", "Does this look like a healthy liver?", "… abnormality …?"
    ("vqa-rad", "487", "There is no abnormality.", "yes"),
    ("vqa-rad", "485", "The liver appears diseased.", "no"),
    ("vqa-rad", "1943", "There is no abnormality.", "no"),
    ("vqa-rad", "2045", "The lungs are normal.", "no"),
    ("vqa-rad", "2045", "There is an abnormality in the lungs.", "yes"),
    # finding questions: the finding itself, another one, the other side
    ("vqa-rad", "1046", "There is a mass.", "yes"),
    ("vqa-rad", "1046", "No mass is seen.", "no"),
    ("vqa-rad", "1046", "There is no effusion.", None),
    ("vqa-rad", "222", "There is a left apical pneumothorax.", "yes"),
    ("vqa-rad", "222", "There is no pneumothorax.", "no"),
    ("vqa-rad", "222", "There is a right apical pneumothorax.", None),
    ("vqa-rad", "222", "There is no pleural effusion.", None),
]

HEDGE_CASES: list[tuple[str, str, str]] = [
    ("vqa-rad", "1046", "I can't rule out a mass."),
    ("vqa-rad", "1046", "A mass cannot be excluded."),
    ("vqa-rad", "1046", "This may represent a mass."),
    ("vqa-rad", "1046", "Possibly a mass."),
    ("vqa-rad", "1046", "Yes, possibly."),
    ("vqa-rad", "1046", "The findings are suspicious for a mass."),
    ("vqa-rad", "1210", "No pneumothorax is seen, although a small one cannot be excluded."),
    ("vqa-rad", "222", "There is likely a small left apical pneumothorax."),
    ("slake", "11976", "The liver may be abnormal."),
    ("slake", "11970", "There is possibly an abnormality in the right lung."),
]


@pytest.mark.parametrize(("bench", "item_id", "output", "reading"), POLARITY_CASES)
def test_statement_read_against_the_question(
    bench: str, item_id: str, output: str, reading: str | None
) -> None:
    item = real_item(bench, item_id)
    assert item.kind == "yes_no"
    found = extract(item, output)
    assert found.answer == reading, f"{item.question!r}: {found.method}"
    assert found.status == ("ok" if reading else "unparsed")


@pytest.mark.parametrize(("bench", "item_id", "output"), HEDGE_CASES)
def test_hedges_are_never_yes_or_no(bench: str, item_id: str, output: str) -> None:
    found = extract(real_item(bench, item_id), output)
    assert (found.answer, found.status) == (None, "unparsed")
    assert found.method.endswith(":hedge"), found.method


def test_the_issue_examples() -> None:
    """ "There is no abnormality." is no to "Is there an abnormality?", yes to "Does the liver
    look normal?"; "I can't rule out a mass." is no "no"."""

    def read(question: str, output: str) -> str | None:
        return extract(Item("q", question, "yes_no", answer="yes"), output).answer

    assert read("Is there an abnormality?", "There is no abnormality.") == "no"
    assert read("Does the liver look normal?", "There is no abnormality.") == "yes"
    assert read("Is there a mass?", "I can't rule out a mass.") is None


@pytest.mark.parametrize(("first", "second"), COMPLEMENTARY_PAIRS)
def test_every_pair_reads_both_ways(first: str, second: str) -> None:
    """Each term of the table, named in a question, is flipped by its complement."""
    for term, complement in ((first, second), (second, first)):
        item = Item("p", f"Is the lesion {term}?", "yes_no", answer="yes")
        assert extract(item, f"The lesion is {term}.").answer == "yes"
        assert extract(item, f"The lesion is {complement}.").answer == "no"
        assert extract(item, f"The lesion is not {complement}.").answer == "yes"


def test_question_terms() -> None:
    assert parse_question("Is the lung healthy?").term == "normal"
    assert parse_question("Is anything not normal in the image?").term == "abnormal"
    assert not parse_question("Is anything not normal in the image?").negated
    assert parse_question("Is cardiomegaly present?").term is None
    assert parse_question("Is the gallbladder absent?").negated
    assert terms_in("The heart is normal in size.") == ["normal-sized"]


def test_forms_counted_on_the_real_questions() -> None:
    """44 of SLAKE's 355 English yes/no questions ask whether something is normal."""
    from real_items import _items

    slake = [i for i in _items("slake").values() if i.kind == "yes_no"]
    terms = [parse_question(item.question).term for item in slake]
    assert (len(slake), terms.count("normal")) == (355, 44)


def test_chinese_answers_keep_the_presence_cues() -> None:
    item = Item("z", "Is there a fracture?", "yes_no", answer="no")
    assert extract(item, "未见骨折。").answer == "no"

"""Reading choices that real older models wrote (issue 42; ThoughtSource outputs in the corpus):
the question restated and answered by a bare letter, a last line that is only an option, the
options echoed on one line (no choice), "the one that … is option A", "described by B)", "the
answer to the original question is A)", and to a negative question the one option said not to
be so."""

from __future__ import annotations

import pytest

from corpus_lines import corpus_case
from medlens.core.items import Item
from medlens.extract import extract

FLAN = "medqa/flan-t5-xxl__thoughtsource-ts33-six-prompts.jsonl"
DAVINCI = "medmcqa/text-davinci-003__thoughtsource-ts33-six-prompts.jsonl"
COMMAND = "medmcqa/command-xlarge-nightly__thoughtsource-ts167-direct.jsonl"
FLAN_MEDMCQA = "medmcqa/flan-t5-xxl__thoughtsource-ts33-six-prompts.jsonl"

CASES = [
    (FLAN, "medqa:448@qa-16"),  # the stem echoed, "…compared to a healthy adult? A"
    (FLAN, "medqa:789@qa-16"),  # "Which organs are involved in the development of the lungs? D."
    (FLAN, "medqa:578@qa-17"),  # "A: Left ventricular … B: … E: Decreased right atrial pressure"
    (FLAN, "medqa:648@qa-17"),  # "A: Defect in WASP gene B: Defect in ATM gene C: …": no choice
    (FLAN, "medqa:1147@qa-16"),  # "B) What is the patient's religion? C) What is …": no choice
    (FLAN_MEDMCQA, "medmcqa:8e64201e-6d6b-4187-98df-bb12e0945c78@qa-16"),  # "B) What is …? D) …?"
    (COMMAND, "medmcqa:b0a05a95-cb2d-4ec4-9e19-c25742e18221"),  # "C) <option D's text>"
    (DAVINCI, "medmcqa:62e089d3-5425-4349-8edc-3ce132c0bf66@qa-10"),  # "…question.\nC) RNA editing"
    (
        DAVINCI,
        "medmcqa:08773184-d813-48bd-b8ac-fdcaab87d67c@qa-16",
    ),  # answer to the original question
    (
        DAVINCI,
        "medmcqa:c8c58b43-3a44-4e38-a6b3-245af1dcf2ab@qa-10",
    ),  # "most closely described by B)"
    # negative questions ("… except"): the one said not to be so
    (DAVINCI, "medmcqa:fd1abff0-73fe-49da-b311-3184d0c0e54d@qa-10"),  # "The test that should not …"
    (
        DAVINCI,
        "medmcqa:fd1abff0-73fe-49da-b311-3184d0c0e54d@qa-17",
    ),  # "a lumbar puncture should not"
    (
        DAVINCI,
        "medmcqa:60b9f4b0-f993-4236-9378-3c87762aefff@qa-17",
    ),  # "The one that does not … is option A"
    (DAVINCI, "medmcqa:409873c7-dd6c-4284-a0b2-dda6e861d639@qa-16"),  # "…that is not true is A)"
    (
        COMMAND,
        "medmcqa:16f26f56-f5ab-4542-910b-eca95b907278",
    ),  # "… relevant in all except Birth asphyxia."
]


@pytest.mark.parametrize(("name", "item_id"), CASES)
def test_the_reader_and_medlens_read_the_same_choice(name: str, item_id: str) -> None:
    item, output, finish, line = corpus_case(name, item_id)
    assert extract(item, output, finish_reason=finish).answer == line.reader_answer


OPTIONS = {"A": "Complete blood counts", "B": "Random blood sugar", "C": "Lumbar puncture",
           "D": "Non-contrast CT head"}  # fmt: skip


def _item(question: str) -> Item:
    return Item(id="q", question=question, kind="choice", options=OPTIONS, answer="C")


GUARDS = [
    # a review that lists options per line and concludes is not an echo
    ("Which test is most useful?", "A) Complete blood counts: useful.\nB) Random blood sugar: "
     "essential.\nC) Lumbar puncture: risky.\nThe answer is B.", "B"),
    # to a positive question the option said not to be so is rejected
    ("Which test should be done?", "A lumbar puncture should not be done. Complete blood counts "
     "are the first step.", "A"),
    # the last of an echoed list of option lines is no closing answer
    ("Which test should be done?", "Options:\nA) Complete blood counts\nB) Random blood sugar\n"
     "C) Lumbar puncture\nD) Non-contrast CT head", None),
    # to a negative question, several options said not to be so: no answer
    ("All of these tests should be done except:", "A lumbar puncture should not be done, and a "
     "random blood sugar is not needed.", None),
    # a fact stated with "that … is" does not commit without a lettered option after it
    ("Which test should be done?", "The test that is safest is not listed.", None),
]  # fmt: skip


@pytest.mark.parametrize(("question", "output", "reading"), GUARDS)
def test_what_the_new_rules_do_not_read(question: str, output: str, reading: str | None) -> None:
    assert extract(_item(question), output).answer == reading


CONTRADICTIONS = [
    # a letter with another option's exact text names two options: no answer, however framed
    ("C) Non-contrast CT head", None, "leading_letter:contradicted"),
    ("C. non-contrast CT head.\nIt shows the bleed.", None, "leading_letter:contradicted"),
    ("The answer is C: Non-contrast CT head", None, "answer_phrase:contradicted"),
    ("Answer: (B) Lumbar puncture", None, "answer_phrase:contradicted"),
    # the letter with its own text, or with words that are no option, stays the answer
    ("D) Non-contrast CT head", "D", "leading_letter"),
    ("C) Lumbar puncture, after a CT head", "C", "leading_letter"),
    ("The answer is C: a lumbar puncture.", "C", "answer_phrase"),
    # the model's own lettered questions are no choice; one lettered question is a leading letter
    ("B) What is the first test? D) Which test is safest?", None, "labelled_questions"),
    ("C) Lumbar puncture. What else could be done? Nothing.", "C", "leading_letter"),
]


@pytest.mark.parametrize(("output", "reading", "method"), CONTRADICTIONS)
def test_a_letter_with_another_options_text_commits_to_neither(
    output: str, reading: str | None, method: str
) -> None:
    found = extract(_item("Which test should be done first?"), output)
    assert (found.answer, found.method) == (reading, method)

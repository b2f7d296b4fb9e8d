"""The final conclusion of a reasoning output outranks the options weighed before it (issue 42),
on real outputs of the corpus (tests/reading_corpus/): a long commitment phrase, a conclusion
opened by "Based on …,", a hedged conclusion (no answer), and an answer to a negative question
("Which is NOT …") stated as "X is not …"."""

from __future__ import annotations

import pytest

from corpus_lines import corpus_case
from medlens.core.items import Item
from medlens.extract import extract

GPT35_MEDMCQA = "medmcqa/gpt-3.5-turbo__thoughtsource-ts100-direct.jsonl"
GPT35_MEDQA = "medqa/gpt-3.5-turbo__thoughtsource-ts100-direct.jsonl"
GPT4_COT = "medqa/gpt-4__thoughtsource-ts100-zhou-cot.jsonl"

# GPT-4's option-by-option MedQA answers, each ending on its conclusion (real outputs)
OPTION_BY_OPTION = [
    "medqa:165",  # "… the most likely underlying mechanism of the disease is viral … (A)."
    "medqa:192",  # "Based on this information, the strongest predisposing factor … is:\n\nD) …"
    "medqa:383",  # "… the medication that should be most avoided is:\n\nC) Bupropion - due to …"
    "medqa:533",  # "… the most likely cause of these findings is:\n\nB) Fluphenazine"
    "medqa:565",  # "… the most appropriate step in the management of this patient would be: B)"
    "medqa:597",  # "- Based on the clinical scenario …, the most likely cause … is B) Closure …"
    "medqa:1267",  # "… either Verapamil (B) or Nifedipine (C). … we can go with …, which is … (C)."
]


GPT4_MEDMCQA_COT = "medmcqa/gpt-4__thoughtsource-ts100-zhou-cot.jsonl"
OPTION_BY_OPTION += [
    # "… but the most commonly used and recommended method for HbA1c measurement is ion
    # exchange chromatography (C)."
    f"{GPT4_MEDMCQA_COT}|medmcqa:ad5ec8c2-dd73-4a3e-8904-8675c689bca2",
    # to "Which … does not enter the Krebs cycle …?": "Based on this information, the amino acid
    # that does not enter the Krebs cycle … is Hydroxyproline (C)."
    f"{GPT4_MEDMCQA_COT}|medmcqa:3728d7be-8279-4b79-a826-e568441ff21a",
    # to "Optic atrophy is not seen in:": "So, optic atrophy is not seen in … vasculopathy (D)."
    f"{GPT4_MEDMCQA_COT}|medmcqa:1e8c037d-b7d9-48c9-8aba-39b01a178619",
    # "… the best-suited study design for the research question is:\n\nB) Prospective cohort"
    f"{GPT4_MEDMCQA_COT}|medmcqa:51234bc7-9170-45cc-8494-837fe23af441",
]


@pytest.mark.parametrize("item_id", OPTION_BY_OPTION)
def test_the_conclusion_after_weighing_every_option_is_the_answer(item_id: str) -> None:
    name, _, item_id = item_id.rpartition("|")
    item, output, finish, line = corpus_case(name or GPT4_COT, item_id)
    assert line.reader_answer is not None
    assert extract(item, output, finish_reason=finish).answer == line.reader_answer


# (file, id, the letter the careful reader reads)
NEGATIVE_QUESTIONS = [
    # "Which of the following is not true …": "A) <option> is not true about …"
    (GPT35_MEDMCQA, "medmcqa:b944ada9-d776-4c2a-9180-3ae5f393f72d", "A"),
    # "… Not present:-": "D) Overstimulation of respiratory centre is not present."
    (GPT35_MEDMCQA, "medmcqa:c9aa8c5b-b009-4c7e-a8d4-05cf46db9282", "D"),
    # "All are causes of subcortical dementia except": "A) Alzheimer's disease is not a cause …"
    (GPT35_MEDMCQA, "medmcqa:85d37c8a-2bcc-48d9-bc5c-b63495f25ab3", "A"),
    # "… is NOT transmitted by it?": "D) Carrion's Disease is not transmitted by a mosquito."
    (GPT35_MEDMCQA, "medmcqa:8be0f11a-fb38-4996-95b7-b3fcf36de7c4", "D"),
]


@pytest.mark.parametrize(("name", "item_id", "letter"), NEGATIVE_QUESTIONS)
def test_the_answer_to_a_negative_question_is_said_not_to_be_so(
    name: str, item_id: str, letter: str
) -> None:
    item, output, finish, line = corpus_case(name, item_id)
    assert line.reader_answer == letter
    assert extract(item, output, finish_reason=finish).answer == letter


def test_to_a_positive_question_an_option_said_not_to_be_so_is_rejected() -> None:
    item = Item(
        id="q",
        question="Which of the following is transmitted by the sand fly?",
        kind="choice",
        options={"A": "Kala Azar", "B": "Dengue", "C": "Malaria", "D": "Carrion's Disease"},
        answer="A",
    )
    found = extract(item, "D) Carrion's Disease is not transmitted by the sand fly.")
    assert found.answer != "D"
    # a vignette's "not" is no negative question: the question is its last asking sentence
    vignette = Item(**{**item.__dict__, "question": "She does not smoke. " + item.question})
    assert (
        extract(vignette, "D) Carrion's Disease is not transmitted by the sand fly.").answer != "D"
    )


def test_a_hedged_conclusion_commits_to_nothing() -> None:
    # "Without the figure, it is difficult … Therefore, it is possible that the B pattern belongs
    # to REM sleep."
    item, output, finish, line = corpus_case(
        GPT35_MEDMCQA, "medmcqa:74d6497b-16bd-44f8-bba0-a9a139482e77"
    )
    assert line.reader_answer is None
    found = extract(item, output, finish_reason=finish)
    assert (found.answer, found.method) == (None, "conclusion:hedge")


def test_a_long_commitment_phrase_outranks_the_options_set_aside_after_it() -> None:
    # "The mediator most likely responsible for the presence of neutrophils in the lung tissue is
    # E) Leukotriene D4, … Platelet activating factor (B) and Interleukin-10 (D) are not …"
    item, output, finish, line = corpus_case(GPT35_MEDQA, "medqa:677")
    assert line.reader_answer == "E"
    assert extract(item, output, finish_reason=finish).answer == "E"


OPTIONS = {
    "A": "Viral reactivation in dorsal root ganglia", "B": "IgA deposits in the upper dermis",
    "C": "Protein C deficiency", "D": "Maternal diabetes", "E": "Bupropion",
}  # fmt: skip
CONCLUDING = [
    # the GPT-4 ThoughtSource closings (MedQA, option by option before them)
    ("E) Bupropion is contraindicated in bulimia.\n\nBased on the information provided, the "
     "strongest predisposing factor for this patient's condition is:\n\nD) Maternal diabetes", "D"),
    ("C) is possible. D) is unlikely.\n\nBased on the patient's history and symptoms, the "
     "medication that should be most avoided is:\n\nE) Bupropion - due to its potential to "
     "exacerbate anxiety.", "E"),
    ("B) IgA deposits are seen in dermatitis herpetiformis, but the rash described does not "
     "match.\n\nBased on the patient's symptoms and rash description, the most likely underlying "
     "mechanism of the disease is viral reactivation in dorsal root ganglia (A). This is "
     "consistent with a diagnosis of herpes zoster (shingles).", "A"),
    ("E) is not a specific inherited condition.\n\nGiven these findings, the pathophysiology of "
     "this patient's condition is a deficiency in protein C (option C).", "C"),
]  # fmt: skip


@pytest.mark.parametrize(("output", "letter"), CONCLUDING)
def test_a_conclusion_opened_by_based_on_or_given_is_the_answer(output: str, letter: str) -> None:
    item = Item(id="q", question="Which is it?", kind="choice", options=OPTIONS, answer=letter)
    assert extract(item, output).answer == letter


def test_an_analysis_that_never_concludes_stays_unread() -> None:
    item = Item(id="q", question="Which is it?", kind="choice", options=OPTIONS, answer="A")
    weighed = (
        "A) Viral reactivation in dorsal root ganglia: possible.\nB) IgA deposits in the upper "
        "dermis: possible.\nC) Protein C deficiency: less likely.\nBased on the findings, both A "
        "and B remain possible."
    )
    assert extract(item, weighed).answer is None

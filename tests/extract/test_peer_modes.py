"""Each peer reading mode against the worked examples of the research note
(``/work/notes/issue23-peers.md`` §6), whose verdicts were computed by running the peers' own
functions; the deciding lines of each peer's code are cited per row. A row is (reply, item,
expected score, expected rule or None)."""

from __future__ import annotations

import pytest

from medlens.core.errors import SpecError
from medlens.core.items import Item
from medlens.extract.peers import check_supported, peer_prompt, read_as

MEDQA_OPTIONS = {"A": "Metformin", "B": "Insulin glargine", "C": "Glipizide", "D": "Sitagliptin"}
MEDMCQA_OPTIONS = {
    "A": "Impulse through myelinated fibers is slower than non-myelinated fibers",
    "B": "Membrane currents are generated at nodes of Ranvier",
    "C": "Saltatory conduction of impulses is seen",
    "D": "Local anesthesia is effective only when the nerve is not covered by myelin sheath",
}


def slake(gold: str, *, closed: bool = True, lang: str = "en") -> Item:
    """A SLAKE item as the loader makes it: yes/no golds folded, the raw spelling kept."""
    meta = {"source": "slake", "answer_type": "closed" if closed else "open", "q_lang": lang,
            "lang": lang}  # fmt: skip
    if gold.lower() in ("yes", "no"):
        meta |= {"answer_set": "yes/no", "raw_answer": gold}
        return Item("s", "Is there a lesion?", "yes_no", answer=gold.lower(), meta=meta)
    return Item("s", "Which organ is shown?", "open", answer=gold, meta=meta)


def vqa_rad(gold: str, source: str = "vqa-rad") -> Item:
    meta = {"source": source, "answer_type": "closed" if gold in ("yes", "no") else "open"}
    if gold in ("yes", "no"):
        meta |= {"answer_set": "yes/no", "raw_answer": gold}
        return Item("v", "Is there a mass?", "yes_no", answer=gold, meta=meta)
    return Item("v", "Where is the lesion?", "open", answer=gold, meta=meta)


def medqa(gold: str) -> Item:
    return Item("q", "Which drug?", "choice", options=MEDQA_OPTIONS, answer=gold,
                meta={"source": "medqa"})  # fmt: skip


def medmcqa(gold: str) -> Item:
    return Item("m", "Which of the following is not true for myelinated nerve fibers:", "choice",
                options=MEDMCQA_OPTIONS, answer=gold, meta={"source": "medmcqa"})  # fmt: skip


def pubmedqa(gold: str) -> Item:
    return Item("p", "Do statins help?", "yes_no", answer=gold, context="Abstract text.",
                meta={"source": "pubmedqa", "answer_set": "yes/no/maybe"})  # fmt: skip


# lmms-eval, EvolvingLMMs-Lab/lmms-eval 75571cfe: tasks/slake/utils.py, tasks/medqa/utils.py
LMMS_EVAL = [
    ("Yes.", slake("Yes"), 1.0, "exact_match"),  # L1: utils.py:123-127
    ("Yes, there is.", slake("Yes"), 0.0, "no_match"),  # L2: whole-string collapse, l.232-237
    ("The liver", slake("Liver", closed=False), 0.0, "no_match"),  # L3: no article removal
    ("CT (computed tomography)", slake("CT", closed=False), 1.0, "exact_match"),  # L4: l.121
    ("X-ray", slake("X-Ray", closed=False), 1.0, "exact_match"),  # L5: l.123-126, 240-243
    ("Two", slake("2", closed=False), 0.0, "no_match"),  # L6: no number words
    ("<think>It is the brain</think>Brain", slake("Brain", closed=False), 1.0, None),  # L7
    ("nope", slake("No"), 1.0, None),  # L8: l.31-32
    ("true", slake("Yes"), 1.0, None),  # L8
    ("", slake("No"), 0.0, "empty"),  # L9: l.101
    ("正常", slake("是的", lang="zh"), 1.0, None),  # 正常 counts as yes (l.33)
    ("A 45-year-old man has ... so the answer is D", medqa("D"), 1.0, "spaced_letter:last"),  # L10
    ("I think B or C", medqa("B"), 0.0, "spaced_letter:last"),  # L11: l.109-112
    ("(A) and (C) are wrong; (B)", medqa("B"), 0.0, "parenthesis:last"),  # L12: l.90-93
    ("C. Metformin", medqa("C"), 1.0, "letter_dot"),  # L13: l.102-105
    ("b", medqa("B"), None, "random_fallback"),  # L14: l.107-108, a random letter
]

# EvalScope, modelscope/evalscope fde259d2: benchmarks/slake/utils.py, utils/multi_choices.py,
# benchmarks/pumed_qa/pubmed_qa_adapter.py
EVALSCOPE = [
    ("The scan is axial.\nANSWER: CT", slake("CT", closed=False), 1.0, None),  # E1: l.19
    ("Answer: The lung", slake("Lung", closed=False), 1.0, None),  # E2: articles, l.85
    ("ANSWER: Two", slake("2", closed=False), 1.0, None),  # E3: l.25-50
    ("Yes, there is", slake("Yes"), 0.0, None),  # E4: whole reply, l.118
    ("Final answer: yes", slake("Yes"), 1.0, None),  # E5: the marker inside "Final answer:"
    ("The answer is lung", slake("Lung", closed=False), 0.0, None),  # E6: no colon
    ("ANSWER: Right side", slake("Right", closed=False), 0.0, None),  # E7
    ("ANSWER:\nLiver", slake("Liver", closed=False), 1.0, None),  # E8: \s* crosses a newline
    ("ANSWER: B, not C", medmcqa("B"), 1.0, "answer_marker"),  # E9: l.182-197
    ("ANSWER: [LETTER]\nthinking...\nANSWER: D", medmcqa("D"), 1.0, "answer_marker"),  # E10
    ("The correct option is C.", medmcqa("C"), 1.0, "last_capital"),  # E11: l.171-179
    ("I'd pick option B because of the ECG.", medmcqa("B"), 0.0, "no_label"),  # E12
    ("ANSWER: AB", medmcqa("A"), 0.0, "not_one_label"),  # E13: l.193, 276-282
    ("answer: b", medmcqa("A"), 0.0, None),  # E13
    ("ANSWER: E", medmcqa("A"), 0.0, None),  # E13
    ("Answer: Bone marrow", medmcqa("B"), 1.0, "last_capital"),  # E14: the B of "Bone"
    ("No, but maybe", pubmedqa("maybe"), 1.0, "gold_word_found"),  # E15: l.86
    ("No, but maybe", pubmedqa("no"), 1.0, "gold_word_found"),  # E15
    ("Not", pubmedqa("no"), 0.0, "gold_word_absent"),  # E16
]

# MedEvalKit, alibaba-damo-academy/MedEvalKit 9b12e3b3: utils/utils.py, utils/*/*.py
MEDEVALKIT = [
    ("No abnormality", vqa_rad("no"), 1.0, "substring_xor"),  # M1: utils.py:168-175
    ("Yes, there is a nodule", vqa_rad("yes"), 0.0, "both_or_neither"),  # M2: "nodule" has "no"
    ("Normal", vqa_rad("no"), 1.0, None),  # M3: utils.py:172-174
    ("Normal", vqa_rad("yes"), 0.0, None),  # M3
    ("The eyes are symmetric", vqa_rad("yes"), 1.0, None),  # M4: "eyes"
    ("Right lung.", vqa_rad("right lung"), 0.0, "no_match"),  # M5: the dot is kept, l.186
    ("Answer: left", vqa_rad("left"), 0.0, "no_match"),  # M6: " left", l.147, 152-154
    ("\\boxed{Left}", vqa_rad("left"), 1.0, "exact_match"),  # M7: VQA_RAD.py:88-89, 96
    ("Lung.", slake("Lung"), 1.0, None),  # M8: SLAKE.py:138-141, utils.py:159-166
    ("Yes", slake("Yes"), 1.0, None),  # M8
    ("Yes, it does", slake("Yes"), 0.0, None),  # M8
    ("Answer: Yes", slake("Yes"), 0.0, None),  # M8: " yes"
    ("The answer is C.", medqa("C"), 1.0, "letter"),  # M9: utils.py:146, 108
    ("", medqa("A"), 1.0, "similarity_fallback"),  # M10: index 0 wins, l.79-93, 128-131
    ("", medqa("B"), 0.0, "similarity_fallback"),  # M10
    ("Glipizide", medqa("C"), 1.0, "similarity_fallback"),  # M11
    ("I think it's B", medqa("B"), 0.0, "similarity_fallback"),  # M12
    ("B\n\nBecause insulin...", medqa("B"), 1.0, "letter"),  # M13: utils.py:97-98
    ("Maybe", pubmedqa("maybe"), 1.0, "similarity_fallback"),  # M14: PubMedQA.py:44
    ("yes", pubmedqa("yes"), 1.0, "similarity_fallback"),  # M14
    ("", vqa_rad("liver"), 0.0, "peer_would_crash"),  # M15: ValueError in rouge, l.187
]

# MultiMedEval, corentin-ryr/MultiMedEval d9ac283f: task_families.py, qa.py, utils.py
MULTIMEDEVAL = [
    ("Yes, there is no effusion", vqa_rad("no"), 1.0, "closed_recall"),  # X1: l.181-194
    ("Yes, there is no effusion", vqa_rad("yes"), 1.0, "closed_recall"),  # X1
    ("It is not present", vqa_rad("no"), 1.0, None),  # X2: "not" counts, l.184-185
    ("Absent", vqa_rad("no"), 0.0, None),  # X3: l.187-194
    ("isn't", vqa_rad("no"), 0.0, None),  # X3: utils.py:873-875
    ("The lesion is in the right lobe", vqa_rad("right lower lobe"), 0.0, "open_recall"),  # X4
    ("left or right lung", vqa_rad("left lung"), 1.0, "open_recall"),  # X5: l.216
    ("two", vqa_rad("2"), 1.0, None),  # X6: utils.py:805-818
    ("x-ray", vqa_rad("X-Ray"), 1.0, None),  # X6: utils.py:858-864
    ("", vqa_rad("liver"), 0.0, None),  # X7: recall 0, l.164-168
    ("A", medqa("A"), 0.0, "invalid"),  # X8: clean_str("A") == "", qa.py:101-103
    ("The answer is A.", medqa("A"), 0.0, "invalid"),  # X9: qa.py:110-113
    ("B", medqa("B"), 1.0, "option_bleu1"),  # X10: BLEU 0.135, qa.py:105-115
    ("The answer is A: Metformin", medqa("A"), 1.0, "option_bleu1"),  # X11
    ("B", medmcqa("B"), 0.0, "invalid"),  # X12: "b" is not "b:", qa.py:295-301, 318-324
    ("B. Membrane currents are generated at nodes of Ranvier", medmcqa("B"), 1.0, None),  # X13
    ("No, maybe not", pubmedqa("no"), 1.0, "word_count"),  # X14: qa.py:209-222
    ("Maybe yes", pubmedqa("yes"), 1.0, "word_count"),  # X14: ties go yes > no > maybe
    ("Yes/No", pubmedqa("yes"), 1.0, "word_count"),  # X14
    ("The answer is uncertain", pubmedqa("maybe"), 0.0, "invalid"),  # X15: qa.py:218-219
]

CASES = [
    *(("lmms-eval", *row) for row in LMMS_EVAL),
    *(("evalscope", *row) for row in EVALSCOPE),
    *(("medevalkit", *row) for row in MEDEVALKIT),
    *(("multimedeval", *row) for row in MULTIMEDEVAL),
]


@pytest.mark.parametrize(("mode", "reply", "item", "expected", "rule"), CASES)
def test_peer_verdicts_match_the_peers_own_functions(
    mode: str, reply: str, item: Item, expected: float | None, rule: str | None
) -> None:
    reading = read_as(item, reply, mode)
    if expected is not None:
        assert reading.score == expected, reading
    if rule is not None:
        assert reading.rule == rule, reading


def test_lmms_eval_guesses_a_letter_seeded_by_the_item() -> None:
    first = read_as(medqa("B"), "b", "lmms-eval")
    assert first.answer in MEDQA_OPTIONS and first.rule == "random_fallback"
    assert read_as(medqa("B"), "b", "lmms-eval") == first  # the same every time


def test_prompts_are_the_peers_own() -> None:
    assert peer_prompt(slake("Yes"), "lmms-eval") == (
        "Is there a lesion?\nAnswer the question using a single word or phrase."
    )
    assert peer_prompt(medqa("A"), "lmms-eval").startswith(
        "Answer the following multiple choice question. There is only one correct answer."
    )
    assert peer_prompt(medqa("A"), "lmms-eval").endswith("C. Glipizide\nD. Sitagliptin\n")
    assert peer_prompt(medmcqa("A"), "evalscope").endswith(
        "\n\nA) Impulse through myelinated fibers is slower than non-myelinated fibers\nB) "
        "Membrane currents are generated at nodes of Ranvier\nC) Saltatory conduction of impulses "
        "is seen\nD) Local anesthesia is effective only when the nerve is not covered by myelin "
        "sheath"
    )
    assert peer_prompt(pubmedqa("yes"), "medevalkit") == (
        "Context: Abstract text.\n\nQuestion: Do statins help?\nOptions: \nA.yes\nB.no\nC.maybe\n"
        "Answer with the option's letter from the given choices directly."
    )
    # SLAKE's raw gold is "Yes": MultiMedEval's yes/no instruction never reaches it
    assert peer_prompt(slake("Yes"), "multimedeval") == "Is there a lesion?"
    assert peer_prompt(vqa_rad("yes"), "multimedeval") == (
        "Answer the following question with yes or no. is there a mass?"
    )
    assert peer_prompt(vqa_rad("yes"), "medevalkit") == (
        "is there a mass?\nPlease output 'yes' or 'no'(no extra output)."
    )


@pytest.mark.parametrize(
    ("mode", "item", "message"),
    [
        ("lmms-eval", vqa_rad("yes"), "lmms-eval has no vqa-rad task"),
        ("evalscope", medqa("A"), "evalscope has no medqa task"),
        ("lmms-eval", pubmedqa("yes"), "lmms-eval has no pubmedqa task"),
        ("multimedeval", slake("是的", lang="zh"), "English questions only"),
    ],
)
def test_unsupported_pairs_are_refused(mode: str, item: Item, message: str) -> None:
    with pytest.raises(SpecError, match=message):
        check_supported(mode, [item])

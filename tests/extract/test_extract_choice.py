"""Single-answer multiple choice: realistic model outputs and what a careful reader reads in them.

Each row: (model output, expected answer or None, expected status). ``None`` with ``unparsed``
means a careful reader could not name one option (ambiguous, hedged, or no answer given).
"""

from __future__ import annotations

import pytest

from medlens.core.items import Item
from medlens.extract import extract

FUNDUS = {"A": "Normal", "B": "Diabetic retinopathy", "C": "Drusen", "D": "Glaucoma"}
MODALITY = {"A": "CT", "B": "MRI", "C": "X-ray", "D": "Ultrasound"}
FIVE = {
    "A": "Pneumonia",
    "B": "Pleural effusion",
    "C": "Pneumothorax",
    "D": "Atelectasis",
    "E": "Cardiomegaly",
}
DEPTH = {
    "A": "Retinopathy",
    "B": "Proliferative diabetic retinopathy",
    "C": "Macular hole",
    "D": "Normal",
}

LONG_COT = (
    "Let's look at the image step by step. The fundus shows multiple small yellow deposits "
    "scattered around the macula. There are no hemorrhages or microaneurysms, which argues "
    "against diabetic retinopathy. The optic cup is not enlarged, so glaucoma is unlikely. "
    "The appearance is not normal either."
)

FUNDUS_CASES: list[tuple[str, str | None, str]] = [
    # bare letters and light wrapping
    ("C", "C", "ok"),
    ("C.", "C", "ok"),
    ("(C)", "C", "ok"),
    ("[C]", "C", "ok"),
    ("**C**", "C", "ok"),
    ("c", "C", "ok"),
    ("b", "B", "ok"),
    ("(c)", "C", "ok"),
    ("  D  \n", "D", "ok"),
    ("Ｃ", "C", "ok"),
    ("C\n\nExplanation: yellow deposits around the macula are drusen.", "C", "ok"),
    # letter then option text or explanation
    ("C. Drusen", "C", "ok"),
    ("C) Drusen", "C", "ok"),
    ("C: Drusen", "C", "ok"),
    ("C - Drusen", "C", "ok"),
    ("(C) Drusen", "C", "ok"),
    ("(c) Drusen", "C", "ok"),
    ("B Diabetic retinopathy", "B", "ok"),
    (
        "B. Diabetic retinopathy is characterized by microaneurysms, dot-blot hemorrhages and hard "
        "exudates, all of which are visible in this photograph.",
        "B",
        "ok",
    ),
    ("D. Glaucoma. The cup-to-disc ratio is markedly increased (about 0.8).", "D", "ok"),
    ("A. Normal — no abnormality is seen.", "A", "ok"),
    ("c. drusen", "C", "ok"),
    ("C. Drusen\nOption A is incorrect because the fundus is clearly abnormal.", "C", "ok"),
    # explicit containers
    ("Answer: C", "C", "ok"),
    ("answer: d", "D", "ok"),
    ("answer: (c)", "C", "ok"),
    ("Answer: (B) Diabetic retinopathy", "B", "ok"),
    ("ANSWER: C", "C", "ok"),
    ("Final answer: C", "C", "ok"),
    ("Final Answer: \\boxed{C}", "C", "ok"),
    ("\\boxed{D}", "D", "ok"),
    ("The answer is $\\boxed{\\text{B}}$.", "B", "ok"),
    ("<answer>D</answer>", "D", "ok"),
    ("<answer> c </answer>", "C", "ok"),
    ("<think>The deposits look like drusen.</think>\n<answer>C</answer>", "C", "ok"),
    ('{"answer": "B"}', "B", "ok"),
    ('{"answer": "C", "confidence": 0.8}', "C", "ok"),
    ('```json\n{"answer": "D", "reason": "enlarged cup"}\n```', "D", "ok"),
    ("{'answer': 'B'}", "B", "ok"),
    ('{"reasoning": "yellow deposits", "answer": "C. Drusen"}', "C", "ok"),
    ("The answer is C.", "C", "ok"),
    ("The answer is b.", "B", "ok"),
    ("The correct answer is (D) Glaucoma.", "D", "ok"),
    ("The correct option is A.", "A", "ok"),
    ("The best answer is C: Drusen.", "C", "ok"),
    ("The most likely diagnosis is drusen.", "C", "ok"),
    ("The most likely diagnosis is glaucoma, given the cupping.", "D", "ok"),
    ("I would choose C.", "C", "ok"),
    ("I'd go with B.", "B", "ok"),
    ("I will select option D.", "D", "ok"),
    ("My answer is A.", "A", "ok"),
    ("Based on the findings, the answer is **C**.", "C", "ok"),
    ("### Answer\nC", "C", "ok"),
    ("**Answer:** C", "C", "ok"),
    ("The answer is not A. The answer is C.", "C", "ok"),
    ("The answer is C, not D.", "C", "ok"),
    # Chinese
    ("答案是C", "C", "ok"),
    ("答案：C", "C", "ok"),
    ("答案为 B", "B", "ok"),
    ("正确答案是D。", "D", "ok"),
    ("选C", "C", "ok"),
    ("我选择B", "B", "ok"),
    ("根据图像中的黄色沉积物，答案是C。", "C", "ok"),
    ("故选D", "D", "ok"),
    ("答案：Ｃ", "C", "ok"),
    ("这是玻璃膜疣，答案C", "C", "ok"),
    ("B选项错误，C选项正确", "C", "ok"),  # B is rejected, not read as the leading answer
    ("B项错误", None, "unparsed"),
    ("选项C是正确的。", "C", "ok"),
    # chain of thought with a conclusion
    (LONG_COT + "\nTherefore, the answer is C.", "C", "ok"),
    (LONG_COT + " Therefore, C.", "C", "ok"),
    (LONG_COT + " So the findings are most consistent with drusen.", "C", "ok"),
    (LONG_COT + "\n\nFinal answer: C", "C", "ok"),
    (LONG_COT + " In conclusion, these are drusen (C).", "C", "ok"),
    (
        "Let me analyze each option:\nA. Normal – incorrect, there are deposits.\n"
        "B. Diabetic retinopathy – no hemorrhages.\nC. Drusen – matches the yellow deposits.\n"
        "D. Glaucoma – the disc is normal.\n\nThe answer is C.",
        "C",
        "ok",
    ),
    (
        "Step 1: Identify the lesion. Step 2: Compare with options.\nThe correct answer is B.",
        "B",
        "ok",
    ),
    (
        "The answer is A. Wait, on closer inspection there are yellow deposits. The answer is C.",
        "C",
        "ok",
    ),
    ("Option B is incorrect; the correct option is A", "A", "ok"),
    ("Option C is correct.", "C", "ok"),
    ("C is the correct answer because of the yellow deposits.", "C", "ok"),
    ("Drusen (C) is the most likely finding.", "C", "ok"),
    ("Options A, B and D can be excluded, so the answer must be C.", "C", "ok"),
    # option text only, with negation
    ("Drusen", "C", "ok"),
    ("drusen.", "C", "ok"),
    ("Glaucoma", "D", "ok"),
    ("It is not glaucoma; it is drusen.", "C", "ok"),
    ("This is drusen rather than glaucoma.", "C", "ok"),
    ("The image shows drusen. Glaucoma is unlikely.", "C", "ok"),
    ("Not glaucoma. Drusen.", "C", "ok"),
    (
        "There is no evidence of glaucoma or diabetic retinopathy; the deposits are drusen.",
        "C",
        "ok",
    ),
    ("Proliferative changes are absent; this looks like diabetic retinopathy.", "B", "ok"),
    ("The fundus photograph shows diabetic retinopathy.", "B", "ok"),
    ("Diabetic retinopathy, moderate non-proliferative.", "B", "ok"),
    ("Glaucoma is ruled out. Diabetic retinopathy is ruled out. Drusen.", "C", "ok"),
    # "X, not Y": the verbless "not" negates Y only
    ("This is diabetic retinopathy, not glaucoma.", "B", "ok"),
    ("Drusen, not glaucoma.", "C", "ok"),
    ("The image is consistent with drusen, not diabetic retinopathy.", "C", "ok"),
    ("Glaucoma, not likely.", None, "unparsed"),
    # a leading letter that is rejected is not the answer
    ("C is incorrect.", None, "unparsed"),
    ("C is wrong.", None, "unparsed"),
    ("B is not the answer.", None, "unparsed"),
    ("Options A and C are incorrect.", None, "unparsed"),
    ("Options B and D are correct.", None, "unparsed"),
    ("Most likely B", "B", "ok"),
    ("The answer is most likely B.", "B", "ok"),
    # articles and English words are not letters
    ("A 65-year-old with drusen.", "C", "ok"),
    ("A normal fundus.", "A", "ok"),
    ("A diagnosis of glaucoma is most likely.", "D", "ok"),
    ("I think it is drusen.", "C", "ok"),
    # ambiguity and hedges: never a guess
    ("B or C", None, "unparsed"),
    ("A, C", None, "unparsed"),
    ("AC", None, "unparsed"),
    ("The answer is either B or C.", None, "unparsed"),
    ("It could be drusen or diabetic retinopathy.", None, "unparsed"),
    ("Both B and C are possible.", None, "unparsed"),
    ("Drusen and glaucoma are both visible.", None, "unparsed"),
    ("The answer is B or D, I cannot be sure.", None, "unparsed"),
    ("I think it's B, but C is also possible.", None, "unparsed"),
    ("B, though C is a possibility.", None, "unparsed"),
    ("The answer is C, although D could also be considered.", None, "unparsed"),
    ("B is possible.", None, "unparsed"),
    (LONG_COT, None, "unparsed"),
    # an option-by-option review that keeps exactly one option ("C. Drusen: yes") answers it
    (
        "Let me analyze:\nA. Normal: no\nB. Diabetic retinopathy: no\nC. Drusen: yes\n"
        "D. Glaucoma: no",
        "C",
        "ok",
    ),
    ("- A (Normal): no\n- B (Diabetic retinopathy): no\n- C (Drusen): yes\n- D: no", "C", "ok"),
    ("A: No. B: No. C: Yes. D: No.", "C", "ok"),  # the one option said yes (as one per line)
    ("C. Drusen is not the answer.", None, "unparsed"),
    ("B is unlikely. Drusen are seen.", "C", "ok"),
    ("A. Normal\nB. Diabetic retinopathy\nC. Drusen\nD. Glaucoma", None, "unparsed"),
    ("The image is a color fundus photograph of the left eye.", None, "unparsed"),
    ("Hmm.", None, "unparsed"),
    # letters that are not options
    ("E", None, "unparsed"),
    ("The answer is E.", None, "unparsed"),
    ("Answer: F", None, "unparsed"),
    # refusals, and disclaimers followed by answers
    ("I cannot provide medical advice. Please consult an ophthalmologist.", None, "refused"),
    ("I'm sorry, but I can't help with diagnosing medical images.", None, "refused"),
    ("As an AI language model, I am not able to provide a diagnosis.", None, "refused"),
    ("I am unable to determine the answer from this image.", None, "refused"),
    ("I'm not a doctor. Please see an eye specialist for an accurate diagnosis.", None, "refused"),
    (
        "I cannot determine whether this is glaucoma. Please consult an ophthalmologist.",
        None,
        "refused",
    ),
    ("抱歉，我无法提供医疗诊断，请咨询医生。", None, "refused"),
    ("As an AI, I can't diagnose. However, the answer is C.", "C", "ok"),
    (
        "I am not a doctor, but the image shows drusen, so the answer is C. Please consult an "
        "ophthalmologist.",
        "C",
        "ok",
    ),
    ("I cannot give medical advice, but based on the image: B", "B", "ok"),
    ("作为AI，我不能提供诊断，但根据图像，答案是D。", "D", "ok"),
    # empty
    ("", None, "empty"),
    ("   \n ", None, "empty"),
]

MORE_FUNDUS_CASES: list[tuple[str, str | None, str]] = [
    ("Hepatitis B is not related. The answer is C.", "C", "ok"),
    ("Vitamin D deficiency is not relevant here.", None, "unparsed"),
    ("Type A lesion.", None, "unparsed"),
    ("I think the answer is C, but it could also be B.", None, "unparsed"),
    ("C (Drusen) or possibly B", None, "unparsed"),
    ("Based on the image, I believe it's option C.", "C", "ok"),
    ("**Answer: C. Drusen**\n\n**Explanation:** The image shows yellow deposits.", "C", "ok"),
    ("Option C: Drusen", "C", "ok"),
    ("The correct answer is: **C. Drusen**", "C", "ok"),
    ("Answer: The image shows drusen.", "C", "ok"),
    ("Answer: None of the above", None, "unparsed"),
    ("The image quality is insufficient to determine the diagnosis.", None, "unparsed"),
    ("I'd rule out glaucoma and diabetic retinopathy. Normal is also unlikely.", None, "unparsed"),
    ("C\nD", None, "unparsed"),
    ("The findings suggest drusen. However, early glaucoma cannot be excluded.", None, "unparsed"),
    ("(A) Normal (B) Diabetic retinopathy (C) Drusen (D) Glaucoma\nAnswer: C", "C", "ok"),
    ("This is a case of diabetic retinopathy. Answer: B", "B", "ok"),
    ("Answer:\nC", "C", "ok"),
    ("The answer is C) Drusen", "C", "ok"),
    ("答案：C. 玻璃膜疣", "C", "ok"),
    ("该图像显示玻璃膜疣，因此选C。", "C", "ok"),
    ("我认为是C", "C", "ok"),
    ("正确选项是C", "C", "ok"),
    ("C选项", "C", "ok"),
    ("It's B.", "B", "ok"),
    ("I would say B.", "B", "ok"),
    ("B is my answer.", "B", "ok"),
    ("B would be my choice.", "B", "ok"),
    ("Best answer: B", "B", "ok"),
    ("b) diabetic retinopathy", "B", "ok"),
    ("Option b", "B", "ok"),
    ("the answer is a", "A", "ok"),
    ("I'd pick (d).", "D", "ok"),
    ("D because the cup is enlarged.", "D", "ok"),
    ("A because the fundus looks healthy.", "A", "ok"),
    ("It is a fundus photograph with yellow deposits: drusen.", "C", "ok"),
    ("<think>\nB or C? The deposits are yellow, so drusen.\n</think>\n\nC", "C", "ok"),
    ("<think>The answer must be drusen, option C.</think>", "C", "ok"),
    ("This answers a key question: the deposits are drusen.", "C", "ok"),
    ("The optic disc is normal, the most likely finding being drusen.", None, "unparsed"),
    ("Option a.", "A", "ok"),
    ("option a is wrong, drusen is right", "C", "ok"),
]

MODALITY_CASES: list[tuple[str, str | None, str]] = [
    ("CT", "A", "ok"),
    ("MRI", "B", "ok"),
    ("This is an axial CT image of the abdomen.", "A", "ok"),
    ("This is not a CT scan; it is an MRI.", "B", "ok"),
    ("The image is an X-ray.", "C", "ok"),
    ("ultrasound", "D", "ok"),
    ("The answer is MRI (B).", "B", "ok"),
    ("B. MRI", "B", "ok"),
    ("The modality is MRI rather than CT.", "B", "ok"),
    ("CT or MRI", None, "unparsed"),
    ("A", "A", "ok"),
    ("a", "A", "ok"),
    ("Answer: a", "A", "ok"),
]

FIVE_CASES: list[tuple[str, str | None, str]] = [
    ("E", "E", "ok"),
    ("e", "E", "ok"),
    ("E. Cardiomegaly", "E", "ok"),
    ("The correct answer is E. The cardiothoracic ratio exceeds 0.5.", "E", "ok"),
    ("The heart is enlarged: cardiomegaly.", "E", "ok"),
    ("\\boxed{E}", "E", "ok"),
    ("答案是E", "E", "ok"),
    ("There is a large pleural effusion on the right.", "B", "ok"),
    ("No pneumothorax is seen; there is a pleural effusion.", "B", "ok"),
    ("Pneumothorax (C)", "C", "ok"),
    ("Answer: C. Pneumothorax", "C", "ok"),
    ("Pneumonia or atelectasis", None, "unparsed"),
    ("The answer is D or E.", None, "unparsed"),
    ("F", None, "unparsed"),
]

DEPTH_CASES: list[tuple[str, str | None, str]] = [
    # a longer option text contains a shorter one: the longer claims its words
    ("Proliferative diabetic retinopathy", "B", "ok"),
    ("Retinopathy", "A", "ok"),
    ("There is proliferative diabetic retinopathy with neovascularisation.", "B", "ok"),
    ("Normal", "D", "ok"),
    ("The macula looks normal, but there is a macular hole.", None, "unparsed"),
]


def _item(options: dict[str, str]) -> Item:
    return Item(id="q", question="Which finding?", kind="choice", options=options, answer="A")


ALL_CASES = (
    [(FUNDUS, *case) for case in FUNDUS_CASES]
    + [(FUNDUS, *case) for case in MORE_FUNDUS_CASES]
    + [(MODALITY, *case) for case in MODALITY_CASES]
    + [(FIVE, *case) for case in FIVE_CASES]
    + [(DEPTH, *case) for case in DEPTH_CASES]
)


@pytest.mark.parametrize(("options", "output", "answer", "status"), ALL_CASES)
def test_choice_extraction(
    options: dict[str, str], output: str, answer: str | None, status: str
) -> None:
    extraction = extract(_item(options), output, "medlens")
    assert (extraction.answer, extraction.status) == (answer, status), extraction.method


def test_methods_name_the_rule() -> None:
    item = _item(FUNDUS)
    expected = {
        "C": "bare_letter",
        "\\boxed{C}": "boxed",
        "<answer>C</answer>": "answer_tag",
        '{"answer": "C"}': "json",
        "Final answer: C": "final_answer",
        "The answer is C.": "answer_phrase",
        "I would choose C.": "choose_phrase",
        "答案是C": "zh_answer",
        "Option C is correct.": "affirmed_option",
        LONG_COT + " Therefore, C.": "conclusion",
        "C. Drusen is seen.": "leading_letter",
        "It is drusen.": "option_text",
        "The answer is B or C.": "answer_phrase:ambiguous",
        "The answer is E.": "answer_phrase:not_an_option:E",
        "I cannot provide medical advice.": "refusal",
    }
    got = {output: extract(item, output).method for output in expected}
    assert got == expected


def test_letters_outside_options_are_never_returned() -> None:
    item = _item(FUNDUS)
    for output in ("E", "Z", "The answer is E.", "\\boxed{F}", '{"answer": "G"}', "答案是E"):
        assert extract(item, output).answer is None, output


def test_case_table_is_large_enough() -> None:
    assert len(ALL_CASES) >= 150

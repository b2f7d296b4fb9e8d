"""``mode="vlmeval"``: every observed outcome in ../shared/VLMEVAL_COMPAT.md, reproduced exactly,
plus each documented rule on its own. ``Z`` (VLMEvalKit's "no answer") is ``answer=None``."""

from __future__ import annotations

import pytest

from medlens.core.items import Item
from medlens.extract import extract

FUNDUS = {"A": "Normal", "B": "Diabetic retinopathy", "C": "Drusen", "D": "Glaucoma"}
FIVE = {**FUNDUS, "E": "Cataract"}
LONG_B = (
    "B. Diabetic retinopathy is characterized by microaneurysms, dot-blot hemorrhages and hard "
    "exudates, which are visible in the superior arcade of this fundus photograph."
)

# The observed outcomes listed in VLMEVAL_COMPAT.md, verbatim (… expanded to a long tail).
OBSERVED: list[tuple[dict[str, str], str, str | None]] = [
    (FUNDUS, "b", None),
    (FUNDUS, "answer: (c)", None),
    (FUNDUS, "The answer is b.", "B"),
    (FUNDUS, "Option B is incorrect; the correct option is A", None),
    (FUNDUS, LONG_B, None),
    (FUNDUS, "It is not glaucoma; it is drusen.", None),
    (
        FIVE,
        "The correct answer is E. Cataract clouds the lens, so the fundus details behind it look "
        "blurred and washed out.",
        None,
    ),
    (FUNDUS, "Final Answer: \\boxed{C}", "C"),
    (FUNDUS, "Drusen", "C"),
    (FUNDUS, "A, C", None),
]

# Each documented rule, one case at a time.
RULES: list[tuple[dict[str, str], str, str | None, str]] = [
    (FUNDUS, "Failed to obtain answer via API", None, "unparsed"),
    # rule 1 skips the option step only; the text step still runs
    (FUNDUS, "Failed to obtain answer via API. Drusen", "C", "ok"),
    (FUNDUS, "Sorry, I can't help with images of people yet.", None, "refused"),
    (FUNDUS, "I can't process this file.", None, "refused"),
    (FUNDUS, "I'm sorry, but without the image provided I cannot answer.", None, "refused"),
    (FUNDUS, "Cannot determine the answer", None, "refused"),
    # reject phrases are case-sensitive
    (FUNDUS, "cannot determine the answer", None, "unparsed"),
    (FUNDUS, "C", "C", "ok"),
    (FUNDUS, "(C)", "C", "ok"),
    (FUNDUS, "**C**", "C", "ok"),
    (FUNDUS, "The answer is C", "C", "ok"),
    (FUNDUS, "[C]", "C", "ok"),
    (FUNDUS, "{C}", "C", "ok"),
    (FUNDUS, "#C#", "C", "ok"),
    (FUNDUS, "C: Drusen", "C", "ok"),
    # a single letter must first occur among the last four tokens
    (FUNDUS, "C is the answer", "C", "ok"),
    (FUNDUS, "C is the answer here", None, "unparsed"),
    # letters are case-sensitive tokens; only option letters count
    (FUNDUS, "c", None, "unparsed"),
    (FUNDUS, "E", None, "unparsed"),
    # a Z token alone → Z
    (FUNDUS, "Z", None, "unparsed"),
    # the answer-is regex is case-insensitive, A–D only
    (FUNDUS, "the correct answer is d", "D", "ok"),
    (FIVE, "the correct answer is e and the lens looks cloudy in this image", None, "unparsed"),
    # text step: one option text as a substring of a short prediction
    (FUNDUS, "glaucoma", "D", "ok"),
    (FUNDUS, "I see drusen here", "C", "ok"),
    (FUNDUS, "Normal or glaucoma", None, "unparsed"),
    # … unless the prediction is longer than twice the options' total length (2 × 40 = 80)
    (
        FUNDUS,
        "The fundus shows scattered yellow deposits at the macula, typical of drusen.",
        "C",
        "ok",
    ),
    (
        FUNDUS,
        "The fundus shows many scattered yellow deposits at the macula, typical of drusen.",
        None,
        "unparsed",
    ),
    (FUNDUS, "x" * 60 + " drusen", "C", "ok"),
    # the tagged and JSON forms medlens reads are misses for VLMEvalKit
    (FUNDUS, "<answer>D</answer>", None, "unparsed"),
    (FUNDUS, '{"answer": "B"}', None, "unparsed"),
    (FUNDUS, "答案是C", None, "unparsed"),
    (FUNDUS, "", None, "empty"),
]


def _item(options: dict[str, str], kind: str = "choice") -> Item:
    return Item(id="v", question="q", kind=kind, options=options, answer="C")  # type: ignore[arg-type]


@pytest.mark.parametrize(("options", "output", "answer"), OBSERVED)
def test_observed_outcomes(options: dict[str, str], output: str, answer: str | None) -> None:
    assert extract(_item(options), output, "vlmeval").answer == answer


@pytest.mark.parametrize(("options", "output", "answer", "status"), RULES)
def test_documented_rules(
    options: dict[str, str], output: str, answer: str | None, status: str
) -> None:
    extraction = extract(_item(options), output, "vlmeval")
    assert (extraction.answer, extraction.status) == (answer, status), extraction.method


def test_no_answer_is_reported_as_z_in_the_method() -> None:
    assert extract(_item(FUNDUS), "b", "vlmeval").method.endswith(":Z")


def test_multi_answer_items_can_only_get_one_letter() -> None:
    item = _item(FIVE, "multi_choice")
    assert extract(item, "A, C", "vlmeval").answer is None
    assert extract(item, "A, C", "medlens").answer == "AC"


def test_medlens_reads_what_vlmeval_misses() -> None:
    misses = [out for _, out, ans in OBSERVED if ans is None and out != "A, C"]
    for output in misses:
        assert extract(_item(FUNDUS), output, "medlens").status in ("ok", "unparsed"), output
    read = {out: extract(_item(FUNDUS), out).answer for out in ("b", "answer: (c)", LONG_B)}
    assert read == {"b": "B", "answer: (c)": "C", LONG_B: "B"}

"""Option-by-option reviews and repetition loops (issue 42): the first entry of a review is no
answer, nor the option line a cut review stopped in; a review's labels mid-line are labels ("…
no murmur. C) is the best answer"); an output that ends in a repetition loop ran to its token cap
and is read as cut there (what it committed to before counts, options it only mentioned do
not); one option repeated line after line is that option."""

from __future__ import annotations

import pytest

from corpus_lines import corpus_case
from medlens.core.items import Item
from medlens.extract import extract
from medlens.extract.cut import ends_in_loop

LOOPS_MEDQA = "medqa/flan-t5-xxl__thoughtsource-ts33-loops.jsonl"
LOOPS_MEDMCQA = "medmcqa/flan-t5-xxl__thoughtsource-ts33-loops.jsonl"

CORPUS = [
    # "Student: PAX-6 … Student: B … Student: C … Student: D" to the cap: no single commitment
    (LOOPS_MEDMCQA, "medmcqa:71803632-1b88-4332-88f5-be3ac2515b85@qa-17"),
    # defines option E's condition, never says it is the answer, loops to the cap
    (LOOPS_MEDQA, "medqa:531@qa-16"),
    # "A: Hydrological disasters are the most deadly …" then a loop: the leading answer stands
    (LOOPS_MEDMCQA, "medmcqa:1348a664-1ccc-422f-a083-91d77cb24b92@qa-17"),
]


@pytest.mark.parametrize(("name", "item_id"), CORPUS)
def test_the_reader_and_medlens_read_the_same_loop(name: str, item_id: str) -> None:
    item, output, finish, line = corpus_case(name, item_id)
    assert extract(item, output, finish_reason=finish).answer == line.reader_answer


OPTIONS = {
    "A": "Decreased myocardial contractility", "B": "Increased afterload",
    "C": "Increased ventricular wall stiffness", "D": "Decreased preload",
    "E": "Mitral regurgitation",
}  # fmt: skip
ITEM = Item(id="s4", question="A 70-year-old man has an S4. Which is the most likely cause?",
            kind="choice", options=OPTIONS, answer="C")  # fmt: skip
REVIEW = ("A) Decreased myocardial contractility: this is possible but less likely. B) Increased "
          "afterload: possible. D) Decreased preload: unlikely. E) Mitral regurgitation: no murmur.")  # fmt: skip

CASES = [
    # a review's labels mid-line are labels: the option it then calls best is the answer
    (f"{REVIEW} C) is the best answer; A, B, D and E are not appropriate.", None, "C"),
    ("A: No. B: No. C: Yes. D: No. E: No.", None, "C"),
    # the first entry of a review that never concludes is no answer
    ("A) Decreased myocardial contractility: this is possible but less likely. B) Increased "
     "afterload: possible. Overall, both B and C remain possible.", None, None),
    # a cut inside a review's entry, or right after a line announcing the review
    ("Let's analyze each option.\nA) Decreased myocardial contractility: this is", "length", None),
    ("Let's analyze each option.\nA) Decreased myocardial contractility", "length", None),
    ("A) Decreased myocardial contractility: this is", "length", None),
    # a leading answer followed by rejections is still the answer
    ("C) Increased ventricular wall stiffness. A) and B) are wrong because the S4 is atrial.",
     None, "C"),
    ("Step 4: Answer the question.\nC) Increased ventricular wall stiffness", "length", "C"),
    # repetition loops: a commitment before (or repeated in) the loop counts, mentions do not
    ("The answer is C. The professor: The professor: The professor: The professor: The profe",
     None, "C"),
    ("Mitral regurgitation is a leaky valve. The valve is leaky. The valve is leaky. The valve "
     "is leaky. The valve is leaky. The valve is", None, None),
    ("C) Increased ventricular wall stiffness\n" * 4 + "C)", None, "C"),
]  # fmt: skip


@pytest.mark.parametrize(("output", "finish", "reading"), CASES)
def test_reviews_and_loops_read_as_a_careful_reader_reads_them(
    output: str, finish: str | None, reading: str | None
) -> None:
    assert extract(ITEM, output, finish_reason=finish).answer == reading


@pytest.mark.parametrize(
    ("text", "loops"),
    [
        ("The professor: The professor: The professor: The profe", True),
        ("Student: D Professor: Which gene? Student: D Professor: Which gene? Student: D Professor:"
         " Which gene? Student: D", True),
        ("The answer is C.", False),
        ("no, no, no, no, no", False),  # one word repeated: not a loop of a span
        ("-" * 80, False),
        ("A. A. A. A. A. A.", False),
        ("", False),
    ],
)  # fmt: skip
def test_a_loop_is_one_span_of_two_or_more_words_repeated_at_the_end(
    text: str, loops: bool
) -> None:
    assert ends_in_loop(text) is loops


SHORT = [
    # an output that is only a short phrase saying every content word of one option answers it
    ("increased stiffness of the ventricular wall", "C", "paraphrased_option"),
    ("Stiffness of the ventricular wall, increased.", "C", "paraphrased_option"),
    # negated, hedged, asked back, or saying too little: no option
    ("not increased stiffness of the ventricular wall", None, "no_answer_found"),
    ("the ventricular wall is probably stiffer", None, "no_answer_found"),
    ("increased", None, "no_answer_found"),
]


@pytest.mark.parametrize(("output", "reading", "method"), SHORT)
def test_a_short_answer_in_an_options_words_without_its_letter(
    output: str, reading: str | None, method: str
) -> None:
    found = extract(ITEM, output)
    assert (found.answer, found.method) == (reading, method)

"""Benchmark: the time medlens takes to read outputs of pathological shapes (issue 42).

    .venv/bin/python bench/reading_bounds.py [--size 1000000] [--repeat 3]

An output may be empty, whitespace, a role label, or a megabyte of text (a model looping until
its token cap, a pasted document). medlens reads at most ``extract.MAX_READ`` characters of
it (its head and tail), so every output is read in bounded time. For each shape of SIZE
characters (random answer words, one endless word, repeated answer phrases, option lines,
questions, commas, CJK, unclosed ``\\boxed{``/``{``/``<think>``, markdown, digits, boxes) and
each kind (choice, multi_choice, yes/no, yes/no/maybe, open, classify), with and without
``finish_reason: length``, prints the slowest reading (best of REPEAT) in ms, and the same for
a realistic 300-character answer measured in the same run as the baseline.
"""

from __future__ import annotations

import argparse
import random
import time

from medlens.core.items import Item
from medlens.scoring.item_scores import read_and_score

OPTIONS = {
    "A": "Decreased myocardial contractility", "B": "Pericardial effusion",
    "C": "Increased ventricular wall stiffness", "D": "Aortic valve stenosis",
}  # fmt: skip
ITEMS = (
    Item(id="c", question="Which is the cause?", kind="choice", options=OPTIONS, answer="C"),
    Item(id="m", question="Which apply?", kind="multi_choice", options=OPTIONS, answer="AC"),
    Item(id="y", question="Is there a fracture of the left rib?", kind="yes_no", answer="no"),
    Item(
        id="p",
        question="Does X improve Y?",
        kind="yes_no",
        answer="maybe",
        meta={"answer_set": "yes/no/maybe"},
    ),
    Item(id="o", question="Where is the mass?", kind="open", answer="right upper lobe"),
    Item(
        id="k",
        question="Which label?",
        kind="classify",
        options={"A": "benign", "B": "malignant"},
        answer="A",
    ),
)
WORDS = (
    "the liver is not normal there is no evidence of a mass answer option A B C yes no maybe "
    "because which , . ; : ( ) Therefore the most likely diagnosis is"
)
BASELINE = (
    "Let's weigh the options. A) is unlikely given the preserved ejection fraction, B) would "
    "cause pulsus paradoxus, D) would give a murmur. Therefore, the most likely diagnosis is: "
    "C) Increased ventricular wall stiffness, consistent with diastolic dysfunction."
)


def shapes(size: int) -> dict[str, str]:
    rng = random.Random(0)
    repeated = {
        "answer phrases": "The answer is A. ", "option lines": "A) Decreased contractility.\n",
        "questions": "Is it? ", "commas": ", ", "yes": "Yes, ", "cjk": "答案是A。",
        "boxed": "\\boxed{", "braces": "{", "bold": "**", "digits": "1.2.3.4 ",
        "boxes": "[1, 2, 3, 4] ", "spaces": " ", "newlines": "\n",
        "open clauses (cut)": "There is, ", "articles (cut)": "a ",
    }  # fmt: skip
    found = {"words": " ".join(rng.choice(WORDS.split()) for _ in range(size // 4))[:size]}
    found["one word"] = "a" * size
    found["unclosed think"] = "<think>" + "x " * (size // 2)
    found.update({name: (unit * (size // len(unit) + 1))[:size] for name, unit in repeated.items()})
    return found


def slowest(text: str, repeat: int) -> float:
    worst = 0.0
    for item in ITEMS:
        for finish in (None, "length"):
            best = float("inf")
            for _ in range(repeat):
                started = time.perf_counter()
                read_and_score(item, text, "medlens", finish)
                best = min(best, time.perf_counter() - started)
            worst = max(worst, best)
    return worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    slowest(BASELINE, 1)  # the patterns compiled, the vocabularies loaded
    base = slowest(BASELINE, args.repeat)
    print(f"{'realistic answer (baseline)':>34}: {base * 1000:7.2f} ms")
    for name, text in shapes(args.size).items():
        seconds = slowest(text, args.repeat)
        print(f"{name + f' ({len(text):,} chars)':>34}: {seconds * 1000:7.2f} ms  "
              f"{seconds / base:6.1f}× baseline")  # fmt: skip
    nothing = max(slowest(text, args.repeat) for text in ("", "  \n ", "ASSISTANT:"))
    print(f"{'empty, whitespace, role label':>34}: {nothing * 1000:7.2f} ms")


if __name__ == "__main__":
    main()

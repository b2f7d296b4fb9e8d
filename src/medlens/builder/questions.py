"""Multiple-choice item constructors: a question, gold and distractor texts → shuffled options."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from PIL import Image

LETTERS = "ABCDEFGHIJ"

DraftKind = Literal["choice", "multi_choice"]


@dataclass(frozen=True, eq=False)
class Draft:
    """An item before it is written to disk: the question plus the picture it shows."""

    id: str
    question: str
    kind: DraftKind
    options: Mapping[str, str]
    answer: str
    """One letter for ``choice``; sorted letters such as ``"AC"`` for ``multi_choice``."""
    image: Image.Image = field(repr=False)
    image_name: str
    """File stem of the picture; drafts that show the same picture share it."""
    meta: Mapping[str, str]


def choose_options(
    gold: Sequence[str], wrong: Sequence[str], rng: random.Random, n_options: int
) -> tuple[dict[str, str], str]:
    """Every gold text plus distractors drawn from ``wrong``, in shuffled order.

    Returns the options (letter → text) and the sorted gold letters. Raises ValueError when
    there are too few distinct distractors.
    """
    gold_texts = list(dict.fromkeys(gold))
    pool = sorted(set(wrong) - set(gold_texts))
    needed = n_options - len(gold_texts)
    if not gold_texts or needed < 1 or needed > len(pool):
        raise ValueError(
            f"cannot make {n_options} options from {len(gold_texts)} gold and {len(pool)} wrong"
        )
    texts = gold_texts + rng.sample(pool, needed)
    rng.shuffle(texts)
    options = {LETTERS[index]: text for index, text in enumerate(texts)}
    answer = "".join(letter for letter, text in options.items() if text in gold_texts)
    return options, answer


def ask_choice(
    item_id: str,
    question: str,
    gold: str,
    wrong: Sequence[str],
    picture: tuple[Image.Image, str],
    meta: Mapping[str, str],
    rng: random.Random,
    n_options: int = 4,
) -> Draft:
    """A single-answer question about ``picture`` (image, file stem) with one gold text."""
    options, answer = choose_options([gold], wrong, rng, n_options)
    return Draft(item_id, question, "choice", options, answer, picture[0], picture[1], dict(meta))


def ask_multi(
    item_id: str,
    question: str,
    gold: Sequence[str],
    wrong: Sequence[str],
    picture: tuple[Image.Image, str],
    meta: Mapping[str, str],
    rng: random.Random,
    n_options: int = 4,
) -> Draft:
    """A select-all-that-apply question; the answer is the sorted letters of every gold text."""
    options, answer = choose_options(gold, wrong, rng, n_options)
    return Draft(
        item_id, question, "multi_choice", options, answer, picture[0], picture[1], dict(meta)
    )


class BalancedLetters:
    """Gold positions for single-answer items: every block of K uses each position once."""

    def __init__(self, k: int, rng: random.Random) -> None:
        self.k, self.rng, self.block = k, rng, list[int]()

    def next(self) -> int:
        if not self.block:
            self.block = list(range(self.k))
            self.rng.shuffle(self.block)
        return self.block.pop()


def move_gold(options: dict[str, str], answer: str, letter: str) -> tuple[dict[str, str], str]:
    """Swap the gold text onto ``letter`` (the distractors' order stays random)."""
    swapped = dict(options)
    swapped[answer], swapped[letter] = options[letter], options[answer]
    return swapped, letter

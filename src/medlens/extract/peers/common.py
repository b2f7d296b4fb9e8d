"""What every peer reading mode shares: the verdict record and the item facts peers read.

A peer does not always *extract* an answer and compare it: MedEvalKit's yes/no rule is a
substring XOR, MultiMedEval's is a token-recall threshold, EvalScope's PubMedQA rule a regex
search for the gold word. So each mode returns a :class:`PeerReading`: the verdict (the
peer's per-item score), the text the peer compared (when it has one), and the name of the rule
that decided, which ``medlens explain`` groups by (``random_fallback``, ``similarity_fallback``,
``last_capital``, ``invalid``, ``peer_would_crash`` … say where a peer guessed or failed).
"""

from __future__ import annotations

from dataclasses import dataclass

from medlens.core.errors import SpecError
from medlens.core.items import Item
from medlens.extract.extraction import Extraction


@dataclass(frozen=True)
class PeerReading:
    """One output read and scored the way a peer tool does it."""

    score: float | None
    """The peer's per-item score (1.0 right, 0.0 wrong; a fraction for an expected score);
    None when the item has no gold answer."""
    answer: str | None
    """What the peer compared (its normalised answer, letter, or class), None when nothing."""
    rule: str
    """The rule that decided, e.g. ``exact_match``, ``similarity_fallback``, ``invalid``."""

    def extraction(self, mode: str, text: str | None) -> Extraction:
        """The reading as a record's extraction: ``method`` is ``MODE:RULE``."""
        method = f"{mode}:{self.rule}"
        if text is None or not text.strip():
            return Extraction(None, "empty", method)
        if self.answer is None or self.answer == "":
            return Extraction(None, "unparsed", method)
        return Extraction(self.answer, "ok", method)


def dataset_of(item: Item) -> str:
    """The dataset a peer task is named after: the loader's ``source`` axis."""
    return item.meta.get("source", "")


def raw_gold(item: Item) -> str:
    """The gold as the dataset wrote it: ``"Yes"`` for SLAKE, ``是的`` for Chinese SLAKE (the
    loaders keep it as ``meta["raw_answer"]`` where they fold it to yes/no)."""
    return item.meta.get("raw_answer") or ("" if item.answer is None else str(item.answer))


def lang_of(item: Item) -> str:
    return item.meta.get("q_lang") or item.meta.get("lang") or "en"


def is_open(item: Item) -> bool:
    """SLAKE's ``answer_type`` OPEN (medlens's ``answer_type`` axis, closed/open)."""
    return item.meta.get("answer_type", "").lower() == "open"


def scored(item: Item, right: bool | float) -> float | None:
    return None if item.answer is None else float(right)


def unsupported(peer: str, dataset: str, supported: dict[str, str]) -> SpecError:
    known = ", ".join(sorted(supported))
    named = dataset or "this benchmark"
    return SpecError(f"{peer} has no {named} task (its medical tasks here: {known})")

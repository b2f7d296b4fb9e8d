"""The containment rule for open answers: the gold answer inside a sentence frame is right.

A careful reader credits "The image shows free air." for gold "free air", "It is the liver.",
"Answer: MRI", "Psoas muscle is seen posterior to the appendix." (the question's own words) —
and does not credit a hedge ("free air or pneumoperitoneum") or an extra finding ("free air and
a mass"), nor a negation ("It is not free air").

The rule, on SQuAD-normalised tokens (lower case, no punctuation, no articles): the gold tokens
occur as one contiguous run in the prediction, and every other token of the prediction is a
*frame word* — a viewing verb, a copula, a pronoun, an image noun (:data:`FRAME_WORDS`) — or a
word of the question. Conjunctions, negations and hedging words are never frame words, even when
the question uses them ("Is this CT or MRI?" answered "CT or MRI" stays wrong).

MultiMedEval's looser headline (token recall ≥ 0.75) credits hedges and extra findings; medlens
reports :func:`medlens.scoring.metrics.token_recall` beside exact match and token F1 for comparison,
never as the main score.
"""

from __future__ import annotations

import re

from medlens.extract.normalise import normalize_answer


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


FRAME_WORDS = _word_set(
    """
    image images picture pictures scan scans film radiograph radiography photo photograph slide
    slides view section study figure here this that these those it its they there which what
    is are was were be being been seems seem appears appear looks look to shows show shown
    showing demonstrates demonstrate demonstrated demonstrating reveals reveal revealed depicts
    depict depicted displays display displayed illustrates illustrated indicates indicate
    contains contain containing see seen visible present noted observed identified evident
    visualized visualised apparent i we can answer final correct in on at of from as
    finding findings consistent compatible evidence
    """
)
"""Words a sentence frame may add around the gold answer."""

NEVER_FRAME = _word_set(
    """
    or and nor but versus vs plus also either neither both with without not no none never nothing
    absent absence negative except rather instead than unlikely possibly possible probably
    perhaps maybe may might could likely suggest suggests suggestive suspicious uncertain unclear
    differential rule ruled
    """
)
"""Words that make a hedge, an extra finding or a negation: never part of a frame."""

_CONSISTENT_WITH = re.compile(r"\b(?:consistent|compatible)\s+with\b")


def frame_tokens(question: str) -> frozenset[str]:
    """Frame words plus the question's own words, less the words that change a claim."""
    return frozenset(
        _stem(word) for word in FRAME_WORDS | set(normalize_answer(question).split())
    ) - {_stem(word) for word in NEVER_FRAME}


def _stem(word: str) -> str:
    """A plural or third-person "s" dropped, so "induces" restates "induce"."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def gold_in_frame(predicted: str, gold: str, question: str = "") -> bool:
    """True when `predicted` is `gold` inside a sentence frame (see the module docstring)."""
    gold_tokens = normalize_answer(gold).split()
    if not gold_tokens:
        return False
    text = _CONSISTENT_WITH.sub(" consistent ", predicted.lower())
    tokens = normalize_answer(text).split()
    allowed = frame_tokens(question)
    width = len(gold_tokens)
    for start in range(len(tokens) - width + 1):
        if tokens[start : start + width] != gold_tokens:
            continue
        rest = tokens[:start] + tokens[start + width :]
        if all(_stem(token) in allowed or token in gold_tokens for token in rest):
            return True
    return False

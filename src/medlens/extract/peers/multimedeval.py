"""MultiMedEval's prompts, answer reading and per-item score for all six datasets (SLAKE:
English questions only, as ``vqa.py:170-174`` loads it).

Reimplemented (not copied) from corentin-ryr/MultiMedEval at commit
``d9ac283f5ad989d4f78b709f7076f432de4aa69e`` (research note ``issue23-peers.md`` §5):

- ``clean_str`` (``utils.py:847-878``, the VQA v2 answer normaliser; word tables in
  ``vqa_words``): lower case; each punctuation mark deleted when it touches a space (or the text
  has a digit-comma-digit), else replaced by a space; up to 32 full stops not before a digit
  deleted (its ``sub`` passes ``re.UNICODE`` as the count); number words to digits, articles
  out, contractions restored; commas deleted. So "A" cleans to "" (an article).
- VQA (``vqa.py:51-56, 115-120, 196-201``; scoring ``task_families.py:146-208``): prompt
  ``"<img> {question}"`` with "Answer the following question with yes or no. " in front when
  the *raw* gold is "yes"/"no" (never on SLAKE, whose raw gold is "Yes"); the image goes first,
  so ``<img>`` is dropped from the text. Closed iff the cleaned gold is yes/no: right when the
  reply's token set recalls ≥ 0.4 of the gold's, "not" counting as "no" (so "Yes, there is no
  effusion" is right for both golds); open: token recall ≥ 0.75 (hedges and extra words free).
- MedQA (``qa.py:58-64, 91-117``), MedMCQA (``qa.py:259-265, 289-329``), PubMedQA
  (``qa.py:181-182, 195-222``): the option whose cleaned text has the highest BLEU-1 with the
  cleaned reply (option A loses its letter to the article rule; MedMCQA's ``a:`` never matches a
  bare letter), or the most frequent of yes/no/maybe (ties: yes > no > maybe); nothing →
  ``invalid``, which is wrong. There is no overall accuracy for VQA: closed accuracy and open
  accuracy are reported apart; medlens's item mean is medlens's number.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from medlens.core.items import Item
from medlens.extract.peers.common import PeerReading, raw_gold, scored
from medlens.extract.peers.vqa_words import ARTICLES, CONTRACTIONS, NUMBER_WORDS, PUNCTUATION

COMMIT = "d9ac283f5ad989d4f78b709f7076f432de4aa69e"
SUPPORTED = {"slake": "SLAKE (English)", "vqa-rad": "VQA-Rad", "pathvqa": "VQA-Path",
             "pubmedqa": "PubMedQA", "medqa": "MedQA", "medmcqa": "MedMCQA"}  # fmt: skip
DEPARTURES: tuple[str, ...] = (
    "MultiMedEval reports no overall VQA accuracy (closed and open apart): medlens's overall is "
    "the item mean of the same verdicts",
    "the <img> marker is dropped from the prompt (the image goes first); replayed outputs are "
    "read as MultiMedEval reads them",
)
"""Where a replay can still differ from MultiMedEval's own number (``medlens explain``)."""
YES_NO_PREFIX = "Answer the following question with yes or no. "
CLOSED_RECALL, OPEN_RECALL = 0.4, 0.75
_COMMA_DIGITS = re.compile(r"(\d)(,)(\d)")
_PERIOD = re.compile(r"(?!<=\d)(\.)(?!\d)")  # the peer's malformed look-behind, kept
_PUBMEDQA_CLASSES = ("yes", "no", "maybe")


def prompt(item: Item) -> str:
    source = item.meta.get("source")
    if source == "medqa":
        options = "\n".join(f"{key}: {text}." for key, text in item.options.items())
        return f"{item.question}\nOptions:\n{options}\nWhat is the correct answer?"
    if source == "medmcqa":
        return (
            f"{item.question}\n"
            + "\n".join(_medmcqa_options(item))
            + ("\nWhat is the correct answer?")
        )
    if source == "pubmedqa":
        return f"Answer the question with yes, no or maybe. {item.context or ''} {item.question}"
    question = item.question if source == "slake" else item.question.lower()
    return (YES_NO_PREFIX if _raw_yes_no(item) else "") + question


def _raw_yes_no(item: Item) -> bool:
    """The peer tests the raw gold: SLAKE's "Yes" fails, the lower-cased mirrors' "yes" passes."""
    gold = raw_gold(item) if item.meta.get("source") == "slake" else raw_gold(item).lower()
    return gold in ("yes", "no")


def _medmcqa_options(item: Item) -> list[str]:
    return [f"{key.lower()}: {text}." for key, text in item.options.items()]


def clean_str(token: str) -> str:
    token = token.lower()
    spaced = token
    joined = _COMMA_DIGITS.search(token) is not None
    for mark in PUNCTUATION:
        touching = (mark + " ") in token or (" " + mark) in token
        spaced = spaced.replace(mark, "" if touching or joined else " ")
    token = _PERIOD.sub("", spaced, count=32)
    words = [NUMBER_WORDS.get(word, word) for word in token.split()]
    words = [CONTRACTIONS.get(word, word) for word in words if word not in ARTICLES]
    return " ".join(words).replace(",", "")


def bleu1(predicted: str, reference: str) -> float:
    """torchmetrics ``BLEUScore(n_gram=1)`` of whitespace tokens: clipped unigram precision times
    the brevity penalty (1 when the prediction is longer, else exp(1 − r/c))."""
    said, wanted = predicted.split(), reference.split()
    if not said:
        return 0.0
    matches = sum((Counter(said) & Counter(wanted)).values())
    if not matches:
        return 0.0
    penalty = 1.0 if len(said) > len(wanted) else math.exp(1 - len(wanted) / len(said))
    return penalty * matches / len(said)


def read(item: Item, text: str) -> PeerReading:
    source = item.meta.get("source")
    if source in ("medqa", "medmcqa"):
        return _options(item, text)
    if source == "pubmedqa":
        return _pubmedqa(item, text)
    return _vqa(item, text)


def _vqa(item: Item, text: str) -> PeerReading:
    gold = clean_str(raw_gold(item).lower().strip())
    said = clean_str(text)
    said_tokens, gold_tokens = set(said.split()), set(gold.split())
    if gold in ("yes", "no"):
        if gold_tokens == {"no"}:
            gold_tokens.add("not")
        shared = len(said_tokens & gold_tokens) / len(gold_tokens) if gold_tokens else 0.0
        return PeerReading(scored(item, shared >= CLOSED_RECALL), said, "closed_recall")
    recall = len(said_tokens & gold_tokens) / len(gold_tokens) if gold_tokens else 0.0
    return PeerReading(scored(item, recall >= OPEN_RECALL), said, "open_recall")


def _options(item: Item, text: str) -> PeerReading:
    said = clean_str(text)
    if not said:
        return PeerReading(scored(item, False), None, "invalid")
    if item.meta.get("source") == "medqa":
        shown = [clean_str(f"{key} {value}") for key, value in item.options.items()]
    else:
        shown = [clean_str(option) for option in _medmcqa_options(item)]
    scores = [bleu1(said, option) for option in shown]
    if max(scores) == 0:
        return PeerReading(scored(item, False), None, "invalid")
    letter = list(item.options)[scores.index(max(scores))]
    return PeerReading(scored(item, letter == item.answer), letter, "option_bleu1")


def _pubmedqa(item: Item, text: str) -> PeerReading:
    said = clean_str(text)
    if not said:
        return PeerReading(scored(item, False), None, "invalid")
    tokens = said.split(" ")
    counts = [sum(token == name for token in tokens) for name in _PUBMEDQA_CLASSES]
    if max(counts) == 0:
        return PeerReading(scored(item, False), None, "invalid")
    named = _PUBMEDQA_CLASSES[counts.index(max(counts))]
    return PeerReading(scored(item, named == item.answer), named, "word_count")

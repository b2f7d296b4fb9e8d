"""Per-item scores from an extraction: the main score and the secondary per-item metrics.

Main score (``score``), None when the item has no gold answer:

- ``choice``, ``yes_no``: 1/0 letter or word equality; ``multi_choice``: 1/0 exact set.
- ``classify``: 1/0 label equality after normalisation (a gold letter is read as its option text).
- ``open``: 1/0, whether the answer asserts the gold concept as a careful reader reads it
  (``extract.assertion``: exact match, or a sentence stating the gold or a vocabulary name of
  it, without a negation, hedge, list, comparison or other candidate). The stricter framed
  exact match (``extract.framing``) is the secondary score ``framed_match``.
- ``report``: ROUGE-L F-measure in [0, 1] (exact match of a report is meaningless), of the
  report as written, prediction and reference normalised alike (``report_text``).
- ``detect``: 1/0 hit, i.e. IoU ≥ 0.5 between the first predicted box and a gold box.

Unread answers (unparsed, refused, empty) score 0.
"""

from __future__ import annotations

from collections.abc import Callable

from medlens.core.items import Item
from medlens.extract import Extraction
from medlens.extract.assertion import Assertion, asserts_gold
from medlens.extract.framing import gold_in_frame
from medlens.extract.open import boxes_from_text
from medlens.extract.question_scope import asked_references
from medlens.scoring import metrics
from medlens.scoring.report_text import report_text

HIT_IOU = 0.5


def score(item: Item, extraction: Extraction) -> float | None:
    """The item's main score in [0, 1]; None without gold."""
    if item.answer is None:
        return None
    if extraction.answer is None:
        return 0.0
    predicted, gold = extraction.answer, item.answer
    if item.kind == "detect":
        return 1.0 if _detect_iou(item, predicted) >= HIT_IOU else 0.0
    assert isinstance(gold, str)
    if item.kind == "multi_choice":
        return metrics.exact_set(predicted, gold)
    if item.kind == "report":
        said = report_text(predicted)
        return max(metrics.rouge_l(said, report_text(ref)) for ref in reference_answers(item, gold))
    if item.kind == "open":
        return 1.0 if open_assertion(item, predicted).credited else 0.0
    if item.kind == "classify":
        return metrics.exact_match(predicted, _gold_text(item, gold))
    return 1.0 if predicted.strip().lower() == gold.strip().lower() else 0.0


def open_assertion(item: Item, predicted: str) -> Assertion:
    """The careful reader's verdict on an open answer, against every reference answer, and
    against what the question asks of each (``extract.question_scope``)."""
    gold = item.answer
    assert isinstance(gold, str)
    references = reference_answers(item, gold)
    verdicts = [asserts_gold(predicted, ref) for ref in references]
    credited = next((v for v in verdicts if v.credited), None)
    if credited is not None:
        return credited
    for ref in references:
        for relaxed, rule in asked_references(ref, item.question, predicted):
            if asserts_gold(predicted, relaxed).credited:
                return Assertion(True, rule)
    return verdicts[0]


def item_scores(item: Item, extraction: Extraction) -> dict[str, float]:
    """Secondary per-item metrics: multi_choice → jaccard, recall; open → token_f1,
    token_recall, bleu1, exact, contains (substring containment of the normalised gold),
    framed_match (the gold inside a sentence frame, the stricter main score papers before
    medlens 0.x used); report → rouge_l, bleu4; detect → iou, hit50; other kinds (or no
    gold) → {}."""
    names = _DETECT_SCORES if item.kind == "detect" else tuple(_SECONDARY.get(item.kind, ()))
    if item.kind == "open":
        names = (*names, "framed_match")
    if item.answer is None or not names:
        return {}
    if extraction.answer is None:
        return dict.fromkeys(names, 0.0)
    if item.kind == "detect":
        overlap = _detect_iou(item, extraction.answer)
        return {"iou": overlap, "hit50": 1.0 if overlap >= HIT_IOU else 0.0}
    gold = item.answer
    assert isinstance(gold, str)
    refs = reference_answers(item, gold)
    said = extraction.answer
    if item.kind == "report":
        said, refs = report_text(said), [report_text(ref) for ref in refs]
    found = {name: max(fn(said, ref) for ref in refs) for name, fn in _SECONDARY[item.kind].items()}
    if item.kind == "open":
        found["framed_match"] = max(framed_match(said, ref, item.question) for ref in refs)
    return found


def reference_answers(item: Item, gold: str) -> list[str]:
    """Every reference answer: LiveQA lists several (``meta["reference_answers"]``, JSON); the
    best-matching one scores, as multi-reference ROUGE is usually reported."""
    listed = item.meta.get("reference_answers")
    if not listed:
        return [gold]
    import json

    return [str(ref) for ref in json.loads(listed)] or [gold]


def framed_match(predicted: str, gold: str, question: str) -> float:
    """The secondary ``framed_match`` score of an open answer: 1.0 for an exact match or the
    gold inside a sentence frame (hedges, extra findings: 0). Not the ``contains`` metric."""
    if metrics.exact_match(predicted, gold):
        return 1.0
    return 1.0 if gold_in_frame(predicted, gold, question) else 0.0


def _open_bleu1(predicted: str, gold: str) -> float:
    """BLEU-1 over SQuAD-normalised texts, like token F1 and exact match: the gold itself scores
    1 whatever its case or final full stop (VQA-RAD's "On the right shoulder." scored 0.78)."""
    p, g = metrics.normalize_answer(predicted), metrics.normalize_answer(gold)
    return (1.0 if p == g else 0.0) if not p or not g else min(1.0, metrics.bleu1(p, g))


_SECONDARY: dict[str, dict[str, Callable[[str, str], float]]] = {
    "multi_choice": {"jaccard": metrics.jaccard, "recall": metrics.recall},
    "open": {
        "token_f1": metrics.token_f1,
        "token_recall": metrics.token_recall,
        "bleu1": _open_bleu1,
        "exact": metrics.exact_match,
        "contains": metrics.contains,
    },
    "report": {"rouge_l": metrics.rouge_l, "bleu4": metrics.bleu4},
}
_DETECT_SCORES = ("iou", "hit50")
ZERO_ONE_SECONDARY = frozenset({"exact", "contains", "framed_match", "hit50"})
"""Secondary metrics that are 0/1 by definition; the others (token F1, BLEU, ROUGE, IoU,
Jaccard, recall) are continuous, whatever values a slice happens to hold."""


def _gold_text(item: Item, gold: str) -> str:
    """Classification gold given as an option letter is compared as that option's text."""
    return item.options.get(gold, gold) if item.kind == "classify" else gold


def _detect_iou(item: Item, predicted: str) -> float:
    gold = item.answer
    boxes = list(gold) if isinstance(gold, tuple) else boxes_from_text(str(gold))
    return metrics.best_iou(boxes_from_text(predicted), boxes)


def read_and_score(
    item: Item, text: str | None, mode: str, finish_reason: str | None = None
) -> tuple[Extraction, float | None]:
    """The extraction and main score of one output under a reading mode: medlens's and
    VLMEvalKit's score the extraction; a peer mode gives its own verdict (``extract.peers``)."""
    from medlens.extract import extract

    if mode in ("medlens", "vlmeval"):
        found = extract(item, text, mode, finish_reason)  # type: ignore[arg-type]
        if item.kind == "open" and item.answer is not None and found.answer is not None:
            verdict = open_assertion(item, found.answer)
            if verdict.rule.startswith(("vocab:", "asked:")):  # the entry or rule that decided
                found = Extraction(found.answer, found.status, f"{found.method}:{verdict.rule}")
            return found, 1.0 if verdict.credited else 0.0
        return found, score(item, found)
    from medlens.extract.peers import read_as

    reading = read_as(item, text, mode)
    return reading.extraction(mode, text), reading.score

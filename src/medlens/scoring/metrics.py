"""Metric library: per-item scores, aggregates, random baselines and bootstrap confidence intervals.

Library-backed where a well-kept library does the job (scikit-learn F1/AUROC, sacrebleu BLEU,
rouge-score ROUGE-L); written here only for what those libraries do not offer per item (set
metrics on letter strings, token F1, box IoU) and for the vectorised grouped bootstrap.
Heavy imports happen inside the functions that need them.
"""

from __future__ import annotations

import functools
import string
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from medlens.core.items import Box, Item
from medlens.extract.normalise import normalize_answer

if TYPE_CHECKING:
    from rouge_score.rouge_scorer import RougeScorer
    from sacrebleu.metrics import BLEU

# ---------------------------------------------------------------- closed answers


def accuracy(scores: Sequence[float] | np.ndarray) -> float:
    """Mean of per-item 0/1 scores (NaN for an empty sequence)."""
    values = np.asarray(scores, dtype=float)
    return float(values.mean()) if values.size else float("nan")


def exact_set(predicted: str, gold: str) -> float:
    """1.0 when the two letter sets (``"AC"``, ``"A,C"``) are equal."""
    return 1.0 if _letters(predicted) == _letters(gold) else 0.0


def jaccard(predicted: str, gold: str) -> float:
    """|P ∩ G| / |P ∪ G| of two letter sets (1.0 when both are empty)."""
    p, g = _letters(predicted), _letters(gold)
    union = p | g
    return len(p & g) / len(union) if union else 1.0


def recall(predicted: str, gold: str) -> float:
    """|P ∩ G| / |G|: the share of gold letters the prediction names (GMAI's multi-choice recall)."""
    p, g = _letters(predicted), _letters(gold)
    return len(p & g) / len(g) if g else 1.0


def _letters(answer: str) -> frozenset[str]:
    return frozenset(ch for ch in answer.upper() if ch in string.ascii_uppercase)


_UNANSWERED = "\x00unanswered"
"""The label an unanswered item predicts: wrong for every gold label, never a class of its own."""


def micro_f1(gold: Sequence[str], predicted: Sequence[str | None]) -> float:
    """Micro-averaged F1 (scikit-learn); an unanswered item predicts a wrong label.

    Over every label either side uses, so for single-label data it equals accuracy (restricting
    it to the gold labels would drop unanswered items from the precision and inflate it).
    """
    from sklearn.metrics import f1_score

    y_pred = [p if p is not None else _UNANSWERED for p in predicted]
    labels = sorted({*gold, *y_pred})
    return float(f1_score(gold, y_pred, labels=labels, average="micro", zero_division=0))


def macro_f1(
    gold: Sequence[str], predicted: Sequence[str | None], labels: Sequence[str] | None = None
) -> float:
    """Macro-averaged F1 over the known class set (scikit-learn's ``labels=``).

    `labels` is the benchmark's class set; without it, every class gold or a prediction names
    (scikit-learn's default), so a predicted class absent from gold counts with F1 0. A known
    class that neither gold nor any prediction names (a slice without it) has no F1 and is left
    out of the average (scikit-learn's ``zero_division=nan``), rather than counted as 0. An
    unanswered item is a miss for its gold class and no class of its own.
    """
    from sklearn.metrics import f1_score

    y_pred = [p if p is not None else _UNANSWERED for p in predicted]
    named = {p for p in predicted if p is not None}
    classes = sorted(labels) if labels is not None else sorted({*gold, *named})
    return float(f1_score(gold, y_pred, labels=classes, average="macro", zero_division=np.nan))


def auroc(
    gold: Sequence[str], probabilities: Sequence[dict[str, float]], labels: Sequence[str]
) -> float:
    """AUROC for a fixed label set with per-label probabilities: binary for two labels, else
    one-vs-rest macro (scikit-learn).

    `labels` is the benchmark's fixed class set (never option letters, whose meaning changes
    from item to item); `probabilities[i]` maps labels to probabilities, missing keys are 0, and
    rows are renormalised (top-k log-probs need not sum to 1). A gold label outside the set is a
    ValueError.
    """
    from sklearn.metrics import roc_auc_score

    classes = sorted(labels)
    unknown = set(gold) - set(classes)
    if unknown:
        raise ValueError(f"gold labels outside the label set: {sorted(unknown)}")
    matrix = np.array([[row.get(label, 0.0) for label in classes] for row in probabilities], float)
    totals = matrix.sum(axis=1, keepdims=True)
    matrix = np.divide(matrix, totals, out=np.full_like(matrix, 1 / len(classes)), where=totals > 0)
    if len(classes) == 2:
        return float(roc_auc_score([label == classes[1] for label in gold], matrix[:, 1]))
    return float(roc_auc_score(gold, matrix, labels=classes, multi_class="ovr", average="macro"))


# ---------------------------------------------------------------- open answers


def exact_match(predicted: str, gold: str) -> float:
    return 1.0 if normalize_answer(predicted) == normalize_answer(gold) else 0.0


def contains(predicted: str, gold: str) -> float:
    """1.0 when the normalised gold occurs in the normalised answer, on word boundaries (gold
    "no" is not inside "nodule"): looser than the main reading, which refuses hedges and extra
    findings ("free air or fluid" contains "free air")."""
    g = normalize_answer(gold)
    return 1.0 if g and f" {g} " in f" {normalize_answer(predicted)} " else 0.0


def token_f1(predicted: str, gold: str) -> float:
    """F1 over the multiset of normalised tokens (the SQuAD/Med-PaLM M open-VQA token F1)."""
    p_tokens, g_tokens = normalize_answer(predicted).split(), normalize_answer(gold).split()
    if not p_tokens or not g_tokens:
        return 1.0 if p_tokens == g_tokens else 0.0
    common = sum((Counter(p_tokens) & Counter(g_tokens)).values())
    if common == 0:
        return 0.0
    precision, rec = common / len(p_tokens), common / len(g_tokens)
    return 2 * precision * rec / (precision + rec)


def token_recall(predicted: str, gold: str) -> float:
    """Share of the gold's normalised tokens (multiset) that the prediction contains.

    MultiMedEval's open-VQA headline counts recall ≥ 0.75 as right, which also credits hedges
    ("X or Y") and extra findings ("X and Y"); medlens reports it beside exact match and token F1.
    """
    p_tokens, g_tokens = normalize_answer(predicted).split(), normalize_answer(gold).split()
    if not g_tokens:
        return 1.0 if not p_tokens else 0.0
    return sum((Counter(p_tokens) & Counter(g_tokens)).values()) / len(g_tokens)


@functools.lru_cache(maxsize=4)
def _bleu(order: int) -> BLEU:
    from sacrebleu.metrics import BLEU

    # effective_order: a one-word answer has no 2-grams, so BLEU-4 of short answers is not 0.
    # BLEU-1 unsmoothed: sacrebleu's default "exp" smoothing gives a wrong answer with no word in
    # common a non-zero score; BLEU-4 keeps it (sentence-level BLEU-4 is 0 far too often without).
    return BLEU(
        max_ngram_order=order, effective_order=True, smooth_method="none" if order == 1 else "exp"
    )


def bleu(predicted: str, gold: str, order: int = 1) -> float:
    """Sentence BLEU-`order` in [0, 1] (sacrebleu, default 13a tokenisation, case-sensitive)."""
    return float(_bleu(order).sentence_score(predicted, [gold]).score) / 100.0


def bleu1(predicted: str, gold: str) -> float:
    return bleu(predicted, gold, 1)


def bleu4(predicted: str, gold: str) -> float:
    return bleu(predicted, gold, 4)


def corpus_bleu(predicted: Sequence[str], gold: Sequence[str], order: int = 4) -> float:
    """Corpus BLEU-`order` in [0, 1] (sacrebleu), the figure report-generation papers quote."""
    return float(_bleu(order).corpus_score(list(predicted), [list(gold)]).score) / 100.0


@functools.lru_cache(maxsize=1)
def _rouge() -> RougeScorer:
    from rouge_score.rouge_scorer import RougeScorer

    return RougeScorer(["rougeL"], use_stemmer=True)


def rouge_l(predicted: str, gold: str) -> float:
    """ROUGE-L F-measure (rouge-score, Porter stemming)."""
    return float(_rouge().score(gold, predicted)["rougeL"].fmeasure)


# ---------------------------------------------------------------- boxes


def iou(a: Box, b: Box) -> float:
    """Intersection over union of two ``(x1, y1, x2, y2)`` boxes (corners in any order)."""
    ax1, ax2 = sorted((a[0], a[2]))
    ay1, ay2 = sorted((a[1], a[3]))
    bx1, bx2 = sorted((b[0], b[2]))
    by1, by2 = sorted((b[1], b[3]))
    width = min(ax2, bx2) - max(ax1, bx1)
    height = min(ay2, by2) - max(ay1, by1)
    inter = width * height if width > 0 and height > 0 else 0.0
    union = (ax2 - ax1) * (ay2 - ay1) + (bx2 - bx1) * (by2 - by1) - inter
    return inter / union if union > 0 else 0.0


def best_iou(predicted: Sequence[Box], gold: Sequence[Box]) -> float:
    """IoU of the model's first box with the gold box it overlaps most (0.0 with no boxes).

    Only the first predicted box counts, so listing many boxes cannot buy a hit.
    """
    if not predicted or not gold:
        return 0.0
    return max(iou(predicted[0], target) for target in gold)


# ---------------------------------------------------------------- random baseline


def random_baseline(item: Item) -> float | None:
    """Expected main score of the ``random`` model (a uniform guess); None for open kinds.

    1/k for k options (choice, classify with options); 1/|labels| for classify with a label
    set and no options; 1/(2^k − 1) for exact-set multi-answer (the random model draws a
    uniform non-empty subset of the k letters); 1/2 for yes/no and 1/3 when
    ``meta["answer_set"] == "yes/no/maybe"``. Open answers, reports and boxes have no chance
    level: None, shown as "–".
    """
    k = len(item.options)
    if item.kind == "choice" or (item.kind == "classify" and k):
        return 1.0 / k if k else None
    if item.kind == "classify" and item.meta.get("labels"):
        return 1.0 / len(item.meta["labels"].split("|"))
    if item.kind == "multi_choice":
        return 1.0 / (2**k - 1) if k else None
    if item.kind == "yes_no":
        return 1.0 / 3.0 if item.meta.get("answer_set") == "yes/no/maybe" else 0.5
    return None


def secondary_baselines(item: Item) -> dict[str, float]:
    """Chance levels of the secondary metrics of a multi-answer item under the random model's
    uniform non-empty subset of its k letters: E[Jaccard] and E[recall] = 2^(k−1)/(2^k − 1)."""
    k = len(item.options)
    if item.kind != "multi_choice" or not k or not isinstance(item.answer, str):
        return {}
    g = len(_letters(item.answer) & _letters("".join(item.options)))
    if not g:
        return {}
    from math import comb

    subsets = 2**k - 1
    jaccard_sum = sum(
        comb(g, a) * comb(k - g, b) * a / (g + b) for a in range(1, g + 1) for b in range(k - g + 1)
    )
    return {"jaccard": jaccard_sum / subsets, "recall": 2 ** (k - 1) / subsets}


def box_to_unit(box: Box, meta: dict[str, str] | Any) -> Box | None:
    """A box in 0–1 coordinates from the item's declared frame; None when pixel size is unknown."""
    if meta.get("box_format", "pixel") == "normalized":
        return box
    width, height = _image_size(meta)
    if width is None or height is None:
        return None
    return (box[0] / width, box[1] / height, box[2] / width, box[3] / height)


def _image_size(meta: Any) -> tuple[float | None, float | None]:
    try:
        return float(meta["image_width"]), float(meta["image_height"])
    except (KeyError, ValueError, TypeError):
        return None, None

"""Metric library: per-item scores, aggregates, random baselines and bootstrap confidence intervals.

Library-backed where a well-kept library does the job (scikit-learn F1/AUROC, sacrebleu BLEU,
rouge-score ROUGE-L); written here only for what those libraries do not offer per item (set
metrics on letter strings, token F1, box IoU) and for the vectorised grouped bootstrap.
Heavy imports happen inside the functions that need them.
"""

from __future__ import annotations

import functools
import re
import string
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from medlens.items import Box, Item

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


def micro_f1(gold: Sequence[str], predicted: Sequence[str | None]) -> float:
    """Micro-averaged F1 over gold labels (scikit-learn); an unanswered item counts as a miss."""
    from sklearn.metrics import f1_score

    labels = sorted(set(gold))
    y_pred = [p if p is not None else "\x00none" for p in predicted]
    return float(f1_score(gold, y_pred, labels=labels, average="micro", zero_division=0))


def macro_f1(gold: Sequence[str], predicted: Sequence[str | None]) -> float:
    """Macro-averaged F1 over the gold labels (scikit-learn); an unanswered item counts as a miss."""
    from sklearn.metrics import f1_score

    labels = sorted(set(gold))
    y_pred = [p if p is not None else "\x00none" for p in predicted]
    return float(f1_score(gold, y_pred, labels=labels, average="macro", zero_division=0))


def auroc(gold: Sequence[str], probabilities: Sequence[dict[str, float]]) -> float:
    """AUROC from per-option probabilities: binary when two labels, else one-vs-rest macro.

    `probabilities[i]` maps each option (letter or label) to its probability; missing keys are 0.
    Rows are renormalised to sum to 1 (backends return top-k log-probs that need not).
    """
    from sklearn.metrics import roc_auc_score

    labels = sorted({*gold, *(k for row in probabilities for k in row)})
    matrix = np.array([[row.get(label, 0.0) for label in labels] for row in probabilities], float)
    totals = matrix.sum(axis=1, keepdims=True)
    matrix = np.divide(matrix, totals, out=np.full_like(matrix, 1 / len(labels)), where=totals > 0)
    if len(labels) == 2:
        return float(roc_auc_score([label == labels[1] for label in gold], matrix[:, 1]))
    return float(roc_auc_score(gold, matrix, labels=labels, multi_class="ovr", average="macro"))


# ---------------------------------------------------------------- open answers

_ARTICLES = re.compile(r"\b(?:a|an|the)\b")
_PUNCTUATION = re.compile(r"[^\w\s]")


def normalize_answer(text: str) -> str:
    """SQuAD-style normalisation: lowercase, drop punctuation and articles, squeeze spaces."""
    text = _PUNCTUATION.sub(" ", text.lower())
    return " ".join(_ARTICLES.sub(" ", text).split())


def exact_match(predicted: str, gold: str) -> float:
    return 1.0 if normalize_answer(predicted) == normalize_answer(gold) else 0.0


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
    """Expected score of a uniform random answer; None for open kinds.

    1/k for k options (choice, classify with options); 1/(2^k − 1) for exact-set multi-answer;
    1/2 for yes/no and 1/3 when ``meta["answer_set"] == "yes/no/maybe"``.
    """
    k = len(item.options)
    if item.kind == "choice" or (item.kind == "classify" and k):
        return 1.0 / k if k else None
    if item.kind == "multi_choice":
        return 1.0 / (2**k - 1) if k else None
    if item.kind == "yes_no":
        return 1.0 / 3.0 if item.meta.get("answer_set") == "yes/no/maybe" else 0.5
    return None


# ---------------------------------------------------------------- bootstrap

_BATCH_CELLS = 4_000_000
"""Resampled values held in memory at once (× 8 bytes): bounds memory for 26,000+ items."""


def bootstrap_ci(
    values: np.ndarray,
    clusters: np.ndarray | None = None,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean; resamples whole clusters when some cluster repeats."""
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return float("nan"), float("nan")
    lo, hi = bootstrap_ci_groups(
        values, np.zeros(values.size, dtype=np.intp), clusters,
        n_resamples=n_resamples, seed=seed, level=level,
    )  # fmt: skip
    return float(lo[0]), float(hi[0])


def bootstrap_ci_groups(
    values: np.ndarray,
    groups: np.ndarray,
    clusters: np.ndarray | None = None,
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[np.ndarray, np.ndarray]:
    """Per-group percentile bootstrap CIs of the mean, all groups in one vectorised pass.

    `groups` holds any hashable labels; the returned arrays follow ``np.unique(groups)`` order.
    Each group is resampled on its own (its own n). With `clusters` (e.g. ``image_id``) and some
    cluster holding more than one item of a group, clusters are resampled and the mean is the
    ratio of resampled sums to resampled counts. Integer codes for `groups` and `clusters` are
    faster than strings (each call sorts them once).
    """
    values = np.asarray(values, dtype=float)
    group_codes = np.unique(np.asarray(groups), return_inverse=True)[1].ravel()
    rng = np.random.default_rng(seed)
    sums, unit_group, sizes = values, group_codes, np.ones(values.size)
    if clusters is not None:
        by_cluster = _cluster_units(values, group_codes, np.asarray(clusters))
        if by_cluster[2].max(initial=1) > 1:
            sums, unit_group, sizes = by_cluster
    means = _typed_means(rng, sums, sizes, unit_group, n_resamples)
    if means is None:
        means = resample_means(rng, sums, unit_group, sizes, n_resamples)
    return percentiles(means, level)


def _cluster_units(
    values: np.ndarray, group_codes: np.ndarray, clusters: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Collapse items into (group, cluster) units: per-unit value sum, group code and item count."""
    cluster_codes = np.unique(clusters, return_inverse=True)[1].ravel()
    pair = group_codes.astype(np.int64) * (int(cluster_codes.max(initial=0)) + 1) + cluster_codes
    unit_keys, unit_index = np.unique(pair, return_inverse=True)
    unit_index = unit_index.ravel()
    sums = np.bincount(unit_index, weights=values, minlength=unit_keys.size)
    sizes = np.bincount(unit_index, minlength=unit_keys.size).astype(float)
    unit_group = np.empty(unit_keys.size, dtype=group_codes.dtype)
    unit_group[unit_index] = group_codes
    return sums, unit_group, sizes


_MAX_TYPES = 64


def _typed_means(
    rng: np.random.Generator,
    sums: np.ndarray,
    sizes: np.ndarray,
    unit_group: np.ndarray,
    n_resamples: int,
) -> np.ndarray | None:
    """Bootstrap means drawn by unit *type* when units take few distinct (sum, size) values.

    Units of one type are interchangeable, so resampling a group's m units is a multinomial
    draw over its type frequencies, drawn as one conditional binomial per type, vectorised over
    resamples × groups. Same distribution as resampling units, at O(groups × types) instead of
    O(units) per resample: 0/1 scores (types 0 and 1) and small image clusters qualify. Returns
    None when there are too many types for this to pay off.
    """
    types, type_index = np.unique(np.stack([sums, sizes], axis=1), axis=0, return_inverse=True)
    n_groups = int(unit_group.max(initial=-1)) + 1
    if len(types) > _MAX_TYPES or n_groups * len(types) * 4 > sums.size:
        return None
    cell = unit_group.astype(np.int64) * len(types) + type_index.ravel()
    freq = np.bincount(cell, minlength=n_groups * len(types)).reshape(n_groups, len(types))
    remaining = np.repeat(freq.sum(axis=1)[None, :], n_resamples, axis=0)
    not_yet = freq.sum(axis=1).astype(float)
    total_sum = np.zeros((n_resamples, n_groups))
    total_size = np.zeros((n_resamples, n_groups))
    for t, (type_sum, type_size) in enumerate(types):
        share = np.divide(freq[:, t], not_yet, out=np.zeros(n_groups), where=not_yet > 0)
        draws = rng.binomial(remaining, np.clip(share, 0.0, 1.0))
        remaining -= draws
        not_yet -= freq[:, t]
        total_sum += draws * type_sum
        total_size += draws * type_size
    with np.errstate(invalid="ignore", divide="ignore"):
        return total_sum / total_size


def resample_means(
    rng: np.random.Generator,
    sums: np.ndarray,
    unit_group: np.ndarray,
    sizes: np.ndarray,
    n_resamples: int,
) -> np.ndarray:
    """(n_resamples, groups) ratio means from resampling units with replacement within groups."""
    order = np.argsort(unit_group, kind="stable")
    sums, sizes, unit_group = sums[order], sizes[order], unit_group[order]
    clustered = bool((sizes != 1).any())
    n_groups = int(unit_group.max(initial=-1)) + 1
    counts = np.bincount(unit_group, minlength=n_groups)
    starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
    # Each position draws a unit from its own group: start of the group + floor(u · group size).
    # Lemire's multiply-shift maps 32 random bits onto [0, group size) without a float pass;
    # about three times faster than rng.random + astype on (resamples × units) arrays.
    span, base = counts[unit_group].astype(np.uint64), starts[unit_group].astype(np.int64)
    nonempty = starts[counts > 0]
    out = np.full((n_resamples, n_groups), np.nan)
    batch = max(1, _BATCH_CELLS // max(1, sums.size))
    for first in range(0, n_resamples, batch):
        rows = min(batch, n_resamples - first)
        cells = rows * sums.size
        bits = rng.bit_generator.random_raw((cells + 1) // 2).view(np.uint32)[:cells]
        picks = bits.astype(np.uint64).reshape(rows, sums.size)
        picks *= span  # in place: temporaries of this size cost more than the arithmetic
        picks >>= np.uint64(32)
        picks = picks.view(np.int64)
        picks += base
        total = np.add.reduceat(sums[picks], nonempty, axis=1)
        size = np.add.reduceat(sizes[picks], nonempty, axis=1) if clustered else counts[counts > 0]
        out[first : first + rows, counts > 0] = total / size
    return out


def percentiles(means: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    tail = (1.0 - level) / 2.0 * 100.0
    if means.size == 0:
        return np.full(means.shape[1], np.nan), np.full(means.shape[1], np.nan)
    lo, hi = np.percentile(means, [tail, 100.0 - tail], axis=0)
    return np.asarray(lo, float), np.asarray(hi, float)


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

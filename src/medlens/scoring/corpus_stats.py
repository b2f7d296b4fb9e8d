"""Per-item sufficient statistics of the corpus metrics (see ``corpus_metrics``).

Each corpus metric is a function of sums over items, so one resample is one matrix product:

- macro-F1 over C classes: per class (true positives, gold count, predicted count);
  F1_c = 2·tp / (gold + predicted), averaged over the known classes that gold or a prediction
  names (scikit-learn's ``labels=`` with ``zero_division=nan``).
- micro-F1 of single-label data is accuracy (an unanswered item predicts a wrong label): a mean
  of 0/1 item values, with the interval of every mean (``bootstrap.group_cis``).
- corpus BLEU-4: sacrebleu's own per-sentence statistics (hypothesis and reference lengths,
  matching and total n-grams per order), turned into BLEU by ``BLEU.compute_bleu`` on the sums.
- CheXpert finding micro-F1: (tp, fp, fn, reference names a finding) over the 14 findings, on
  chest-radiograph reports only, under each uncertain-label policy; no value ("–") when no
  reference names a finding.
- box F1 at IoU ≥ 0.5: (matched boxes, predicted boxes, gold boxes).
- AUROC: the Mann–Whitney statistic with item weights, per class one-vs-rest.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

import numpy as np

from medlens.core.items import Box, Item
from medlens.core.records import Record
from medlens.extract.normalise import normalize_answer
from medlens.scoring.kind_rows import KindRows
from medlens.scoring.metrics import iou

if TYPE_CHECKING:
    from sacrebleu.metrics import BLEU

    from medlens.scoring.kind_rows import KindRows

HIT_IOU = 0.5
OPEN_MEANS = ("exact", "contains", "token_f1", "token_recall", "bleu1")


def build_kind_rows(kind: str, rows: KindRows) -> None:
    """Fill `rows` with the statistics of its kind's metrics."""
    if kind == "open":
        for name in OPEN_MEANS:
            rows.means[name] = _item_scores(rows.records, name)
    elif kind == "report":
        _report_rows(rows)
    elif kind == "classify":
        _classify_rows(rows)
    elif kind == "detect":
        rows.means["mean_iou"] = _item_scores(rows.records, "iou")
        rows.corpus["f1_50"] = (box_stats(rows.items, rows.records), box_f1_from_sums)


def _report_rows(rows: KindRows) -> None:
    """ROUGE-L, corpus BLEU-4 on the texts as written (normalised alike), and CheXpert F1 of
    the chest-radiograph items under each uncertain-label policy."""
    from medlens.scoring.chexpert import UNCERTAIN_POLICIES, is_chest_report
    from medlens.scoring.report_text import report_text

    rows.means["rouge_l"] = _item_scores(rows.records, "rouge_l")
    predicted = [report_text(_answer(record) or "") for record in rows.records]
    gold = [report_text(str(item.answer)) for item in rows.items]
    rows.corpus["bleu4"] = (bleu_stats(predicted, gold), bleu_from_sums)
    chest = np.array([is_chest_report(item) for item in rows.items], dtype=bool)
    if not chest.any():
        return
    for policy in UNCERTAIN_POLICIES:
        name = CHEXPERT_METRICS[policy]
        rows.corpus[name] = (chexpert_stats(predicted, gold, chest, policy), f1_from_counts)
        rows.notes[name] = {"uncertain": policy, "labeller": "rule-based"}
        rows.only[name] = chest
    add_label_f1_rows(rows, rule_labels(predicted, chest), rule_labels(gold, chest), chest)


def rule_labels(texts: list[str], chest: np.ndarray) -> list[dict[str, int]]:
    """The rule-based labeller's labels of the chest reports (no labels for the others)."""
    from medlens.scoring.chexpert import chexpert_labels

    return [chexpert_labels(t) if c else {} for t, c in zip(texts, chest.tolist(), strict=True)]


def add_label_f1_rows(
    rows: KindRows,
    predicted: list[dict[str, int]],
    gold: list[dict[str, int]],
    chest: np.ndarray,
    uncertain: str = "negative",
    labeller: str = "rule-based",
) -> None:
    """The CheXpert-label F1s (``scoring.label_f1``: macro over 14, micro/macro over 5)."""
    from medlens.scoring.label_f1 import label_f1_table, statistic_of

    for name, (stats, average) in label_f1_table(predicted, gold, uncertain).items():
        rows.corpus[name] = (stats, statistic_of(average))
        rows.notes[name] = {"uncertain": uncertain, "labeller": labeller}
        rows.only[name] = chest


CHEXPERT_METRICS = {
    "negative": "chexpert_f1",
    "positive": "chexpert_f1_uncertain_positive",
    "ignore": "chexpert_f1_uncertain_ignore",
}
"""The finding F1 under each uncertain-label policy; ``chexpert_f1`` (U-zeros) is the headline."""


def _answer(record: Record) -> str | None:
    answer = (record.get("extraction") or {}).get("answer")
    return None if answer is None else str(answer)


def _item_scores(records: list[Record], name: str) -> np.ndarray:
    return np.array([float((r.get("scores") or {}).get(name, 0.0)) for r in records], float)


# ---------------------------------------------------------------- classification


def known_labels(items: list[Item]) -> list[str]:
    """The class set: every label the items offer (options or ``meta["labels"]``) and gold."""
    from medlens.extract.open import classify_labels

    labels = {_label(label) for item in items for label in classify_labels(item.options, item.meta)}
    labels |= {_label(gold_label(item)) for item in items}
    return sorted(labels)


def gold_label(item: Item) -> str:
    gold = str(item.answer)
    return item.options.get(gold, gold)


@functools.lru_cache(maxsize=4096)
def _label(text: str) -> str:
    return normalize_answer(text)


def label_key(text: str) -> str:
    """A class label as the classify metrics compare it (normalised)."""
    return _label(text)


def _classify_rows(rows: KindRows) -> None:
    labels = known_labels(rows.items)
    gold = [_label(gold_label(item)) for item in rows.items]
    predicted = [_answer(record) for record in rows.records]
    pred = [_label(p) if p is not None else None for p in predicted]
    rows.corpus["macro_f1"] = (class_stats(gold, pred, labels), macro_f1_from_sums)
    # micro-F1 of single-label data is accuracy, a mean: its CI is the one every score gets
    rows.means["micro_f1"] = np.array([float(g == p) for g, p in zip(gold, pred, strict=True)])
    matrix = probability_matrix(rows.items, rows.records, labels)
    if matrix is not None:
        truth = np.array([labels.index(g) for g in gold])
        rows.weighted["auroc"] = functools.partial(weighted_auroc, matrix, truth)
        rows.intervals["auroc"] = functools.partial(auroc_bounds, matrix, truth)


def class_stats(gold: list[str], predicted: list[str | None], labels: list[str]) -> np.ndarray:
    """(items × 3C): per class, is a true positive, is gold, is predicted."""
    g = np.array([[x == label for label in labels] for x in gold], dtype=float)
    p = np.array([[x == label for label in labels] for x in predicted], dtype=float)
    return np.hstack([g * p, g, p]).reshape(len(gold), 3 * len(labels))


def macro_f1_from_sums(sums: np.ndarray) -> np.ndarray:
    """Mean per-class F1 over the classes gold or a prediction names (a known class absent
    from both has no F1: scikit-learn's ``zero_division=nan`` with ``labels=``)."""
    tp, gold, predicted = np.split(sums, 3, axis=1)
    denominator = gold + predicted
    f1 = np.divide(2 * tp, denominator, out=np.full_like(tp, np.nan), where=denominator > 0)
    named = denominator > 0
    count = named.sum(axis=1)
    total = np.where(named, f1, 0.0).sum(axis=1)
    return np.divide(total, count, out=np.full(count.shape, np.nan), where=count > 0)


def ratio_from_sums(sums: np.ndarray) -> np.ndarray:
    return np.divide(
        sums[:, 0], sums[:, 1], out=np.full(sums.shape[0], np.nan), where=sums[:, 1] > 0
    )


def probability_matrix(
    items: list[Item], records: list[Record], labels: list[str]
) -> np.ndarray | None:
    """(items × labels) renormalised probabilities, or None unless every record has them.

    A record's ``option_probs`` maps labels (or the item's option letters, read as their
    texts) to probabilities (``models/option_logprobs.py``); AUROC needs one fixed label set, so items whose labels differ
    from the others' mean no AUROC.
    """
    from medlens.extract.open import classify_labels

    sets = {frozenset(_label(x) for x in classify_labels(i.options, i.meta)) for i in items}
    if len(sets) != 1 or len(labels) < 2:
        return None
    rows = []
    for item, record in zip(items, records, strict=True):
        probabilities = record.get("option_probs")
        if not isinstance(probabilities, dict) or not probabilities:
            return None
        named = {_label(item.options.get(k, k)): float(v) for k, v in probabilities.items()}
        rows.append([named.get(label, 0.0) for label in labels])
    matrix = np.array(rows, dtype=float)
    totals = matrix.sum(axis=1, keepdims=True)
    return np.divide(matrix, totals, out=np.full_like(matrix, 1 / len(labels)), where=totals > 0)


def weighted_auroc(
    matrix: np.ndarray, truth: np.ndarray, weights: np.ndarray, index: np.ndarray
) -> np.ndarray:
    """One-vs-rest macro AUROC of the items `index` with (resamples × items) `weights`.

    Per class: Σ over positives of the weight of negatives scored lower plus half the weight of
    ties, over (positive weight × negative weight): scikit-learn's AUROC with sample weights.
    Two classes: the AUROC of the second class (scikit-learn's binary case; the first gives
    the same). A resample without positives or negatives of a class is NaN.
    """
    scores, labels = matrix[index], truth[index]
    classes = [1] if matrix.shape[1] == 2 else range(matrix.shape[1])
    per_class = [weighted_binary_auc(scores[:, c], labels == c, weights) for c in classes]
    return np.asarray(np.mean(per_class, axis=0))


def auroc_bounds(
    matrix: np.ndarray, truth: np.ndarray, index: np.ndarray, clusters: np.ndarray
) -> tuple[float, float]:
    """The interval of the AUROC of the items `index` on images `clusters`
    (:func:`medlens.stats.auroc.auroc_ci`); NaN when a class lacks positives or negatives."""
    from medlens.stats.auroc import auroc_ci

    _, ci = auroc_ci(matrix[index], truth[index], clusters)
    return (ci[0], ci[1]) if ci is not None else (float("nan"), float("nan"))


def weighted_binary_auc(score: np.ndarray, positive: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """AUROC of `score` for `positive` under each row of (resamples × items) `weights`."""
    order = np.argsort(score, kind="stable")
    sorted_score = score[order]
    starts = np.flatnonzero(np.r_[True, sorted_score[1:] != sorted_score[:-1]])
    w = weights[:, order]
    pos = np.add.reduceat(w * positive[order], starts, axis=1)
    neg = np.add.reduceat(w * ~positive[order], starts, axis=1)
    below = np.cumsum(neg, axis=1) - neg
    pairs = pos.sum(axis=1) * neg.sum(axis=1)
    wins = (pos * (below + 0.5 * neg)).sum(axis=1)
    return np.divide(wins, pairs, out=np.full(pairs.shape, np.nan), where=pairs > 0)


# ---------------------------------------------------------------- reports


@functools.lru_cache(maxsize=1)
def corpus_bleu_metric() -> BLEU:
    """sacrebleu's BLEU with its defaults: the corpus BLEU-4 report-generation papers quote."""
    from sacrebleu.metrics import BLEU

    return BLEU()


def bleu_stats(predicted: list[str], gold: list[str]) -> np.ndarray:
    """(items × 10): sacrebleu's sentence statistics (sys_len, ref_len, 4 matches, 4 totals)."""
    metric = corpus_bleu_metric()
    rows = []
    for hypothesis, reference in zip(predicted, gold, strict=True):
        found = metric.corpus_score([hypothesis], [[reference]])
        rows.append([found.sys_len, found.ref_len, *found.counts, *found.totals])
    return np.array(rows, dtype=float).reshape(len(predicted), 10)


def bleu_from_sums(sums: np.ndarray) -> np.ndarray:
    metric = corpus_bleu_metric()
    out = np.empty(sums.shape[0])
    for row, s in enumerate(sums.tolist()):
        found = metric.compute_bleu(
            correct=[int(v) for v in s[2:6]],
            total=[int(v) for v in s[6:10]],
            sys_len=int(s[0]),
            ref_len=int(s[1]),
            smooth_method=metric.smooth_method,
            smooth_value=metric.smooth_value,
            effective_order=metric.effective_order,
            max_ngram_order=metric.max_ngram_order,
        )
        out[row] = found.score / 100.0
    return out


def chexpert_stats(
    predicted: list[str], gold: list[str], chest: np.ndarray, uncertain: str = "negative"
) -> np.ndarray:
    """(items × 4): true positives, false positives, false negatives of positive findings and
    whether the reference names a finding, for the `chest` items (zeros elsewhere)."""
    from medlens.scoring.chexpert import chexpert_labels, compared_findings, names_a_finding

    rows = []
    for p, g, is_chest in zip(predicted, gold, chest.tolist(), strict=True):
        if not is_chest:
            rows.append([0, 0, 0, 0])
            continue
        labels = chexpert_labels(g)
        said, wanted = compared_findings(chexpert_labels(p), labels, uncertain)
        rows.append(
            [len(said & wanted), len(said - wanted), len(wanted - said), names_a_finding(labels)]
        )
    return np.array(rows, dtype=float).reshape(len(predicted), 4)


def f1_from_counts(sums: np.ndarray) -> np.ndarray:
    """Micro-F1 from summed (tp, fp, fn[, references naming a finding]); NaN ("–") when the
    references of the resample name no finding."""
    tp, fp, fn = sums[:, 0], sums[:, 1], sums[:, 2]
    denominator = 2 * tp + fp + fn
    defined = denominator > 0
    if sums.shape[1] > 3:
        defined &= sums[:, 3] > 0
    return np.divide(2 * tp, denominator, out=np.full(tp.shape, np.nan), where=defined)


# ---------------------------------------------------------------- boxes


def matched_boxes(predicted: list[Box], gold: list[Box], threshold: float = HIT_IOU) -> int:
    """Predicted boxes matched one-to-one to gold boxes at IoU ≥ `threshold`, best IoU first."""
    pairs = sorted(
        ((iou(p, g), i, j) for i, p in enumerate(predicted) for j, g in enumerate(gold)),
        reverse=True,
    )
    used_p: set[int] = set()
    used_g: set[int] = set()
    for overlap, i, j in pairs:
        if overlap < threshold:
            break
        if i not in used_p and j not in used_g:
            used_p.add(i)
            used_g.add(j)
    return len(used_p)


def box_stats(items: list[Item], records: list[Record]) -> np.ndarray:
    """(items × 3): matched boxes, predicted boxes, gold boxes."""
    from medlens.extract.open import boxes_from_text

    rows = []
    for item, record in zip(items, records, strict=True):
        gold = (
            list(item.answer)
            if isinstance(item.answer, tuple)
            else boxes_from_text(str(item.answer))
        )
        answer = _answer(record)
        predicted = boxes_from_text(answer) if answer is not None else []
        rows.append([matched_boxes(predicted, gold), len(predicted), len(gold)])
    return np.array(rows, dtype=float).reshape(len(items), 3)


def box_f1_from_sums(sums: np.ndarray) -> np.ndarray:
    matched, predicted, gold = sums[:, 0], sums[:, 1], sums[:, 2]
    denominator = predicted + gold
    return np.divide(
        2 * matched, denominator, out=np.full(matched.shape, np.nan), where=denominator > 0
    )

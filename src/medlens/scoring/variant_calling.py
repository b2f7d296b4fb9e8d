"""SNV and indel precision, recall and F1 of pileup genotype calls (``pileup:`` runs).

A site is a variant when its genotype is heterozygous or homozygous alternate. As hap.py
counts genotype matches: a true positive is a variant call whose genotype equals the gold
variant genotype; a false positive is a variant call at a reference site or with the wrong
genotype; a false negative is a gold variant not called with its genotype (an unread answer
calls nothing). F1 = 2·TP / (2·TP + FP + FN), each with a 1,000-resample percentile CI
(``corpus_metrics.corpus_ci``), per ``variant_type`` and overall.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from medlens.core.items import Item
from medlens.core.records import Record
from medlens.extract.normalise import normalize_answer
from medlens.scoring.corpus_metrics import FEW_IMAGES_CORPUS, corpus_ci
from medlens.scoring.corpus_stats import f1_from_counts
from medlens.stats.jackknife import MIN_IMAGES

REFERENCE = "homozygous reference"


def call_counts(gold: str, called: str | None) -> tuple[int, int, int]:
    """(TP, FP, FN) of one site."""
    gold_variant = normalize_answer(gold) != normalize_answer(REFERENCE)
    call = normalize_answer(called) if called is not None else None
    call_variant = call is not None and call != normalize_answer(REFERENCE)
    match = call is not None and call == normalize_answer(gold)
    tp = int(gold_variant and call_variant and match)
    fp = int(call_variant and not match)
    fn = int(gold_variant and not match)
    return tp, fp, fn


def variant_calling_section(
    items: Sequence[Item], records: dict[str, Record]
) -> dict[str, Any] | None:
    """``{type: {n, tp, fp, fn, precision, recall, f1, ci}}`` for SNV, indel and all."""
    rows = []
    for item in items:
        record = records.get(item.id)
        if record is None or record.get("error") is not None or item.answer is None:
            continue
        called = (record.get("extraction") or {}).get("answer")
        rows.append((item, call_counts(str(item.answer), called)))
    if not rows or not any(item.meta.get("variant_type") for item, _ in rows):
        return None
    out = {}
    for name in ("SNV", "indel", "all"):
        chosen = [(i, c) for i, c in rows if name == "all" or i.meta.get("variant_type") == name]
        if chosen:
            out[name] = _cell(chosen)
    return out


def _cell(rows: list[tuple[Item, tuple[int, int, int]]]) -> dict[str, Any]:
    stats = np.array([counts for _, counts in rows], dtype=float).reshape(len(rows), 3)
    tp, fp, fn = (float(v) for v in stats.sum(axis=0))
    clusters = np.array([item.meta.get("image_id", item.id) for item, _ in rows], dtype=object)
    f1 = float(f1_from_counts(stats.sum(axis=0)[None, :])[0])
    lo, hi = corpus_ci(stats, clusters, f1_from_counts)
    cell: dict[str, Any] = {
        "n": len(rows), "tp": int(tp), "fp": int(fp), "fn": int(fn),
        "precision": tp / (tp + fp) if tp + fp else None,
        "recall": tp / (tp + fn) if tp + fn else None,
        "f1": f1 if np.isfinite(f1) else None,
        "ci": [lo, hi] if np.isfinite(lo) and np.isfinite(hi) else None,
    }  # fmt: skip
    if cell["f1"] is not None and cell["ci"] is None and len(set(clusters.tolist())) < MIN_IMAGES:
        cell["note"] = FEW_IMAGES_CORPUS
    return cell

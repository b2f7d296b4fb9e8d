"""MMBU as its paper scores it: micro-F1 per task and form with 1,000-resample CIs, the chance
level of each, and the closed−open Δ paired per sample.

- Classification (unanchored, mask- and box-anchored) is single-label, so micro-F1 equals
  accuracy (an unparsed answer is a wrong label); its CI is the one every mean gets
  (``bootstrap.group_cis``, images as clusters). Chance: 1/k for the closed form (k options),
  none for the open form (free text has no chance level).
- Open detection: micro-F1 over boxes at IoU ≥ 0.5 (every predicted box may hit a distinct gold
  box), with the corpus statistics' cluster-jackknife interval (:func:`box_f1_ci`);
  no chance level.
  Closed detection (candidate boxes as options): accuracy = micro-F1, chance 1/k.
- Paired Δ: ``scoring.closed_open.closed_open_delta`` (the closed and open forms of one sample,
  the paired cluster-aware interval ``compare`` uses; items without a partner are counted).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from medlens.core.items import Item
from medlens.core.records import Record
from medlens.scoring.closed_open import closed_open_delta, pair_keys
from medlens.scoring.corpus_metrics import FEW_IMAGES_CORPUS, corpus_ci
from medlens.scoring.corpus_stats import box_f1_from_sums, box_stats
from medlens.scoring.metrics import random_baseline
from medlens.sources.mmbu import GRANULARITY
from medlens.stats.bootstrap import group_cis
from medlens.stats.jackknife import MIN_IMAGES


def mmbu_section(items: Sequence[Item], records: dict[str, Record]) -> dict[str, Any]:
    """``{"tasks": {task: {form: cell}}, "paired_delta": {...}}`` for an MMBU run."""
    scored = [
        (item, records[item.id])
        for item in items
        if item.id in records and records[item.id].get("error") is None
        and records[item.id].get("score") is not None
    ]  # fmt: skip
    tasks: dict[str, dict[str, Any]] = {}
    for task in GRANULARITY:
        for form in ("closed", "open"):
            chosen = [
                (i, r) for i, r in scored
                if i.meta.get("task") == task and i.meta.get("answer_type") == form
            ]  # fmt: skip
            if chosen:
                tasks.setdefault(task, {})[form] = task_cell(chosen)
    return {"tasks": tasks, "paired_delta": paired_delta(scored)}


def task_cell(rows: list[tuple[Item, Record]]) -> dict[str, Any]:
    """micro-F1 of one task and form, with n, images, CI and chance."""
    items = [item for item, _ in rows]
    clusters = np.array([item.meta.get("image_id", item.id) for item in items], dtype=object)
    if items[0].kind == "detect":
        stats = box_stats(items, [record for _, record in rows])
        value = float(box_f1_from_sums(stats.sum(axis=0)[None, :])[0])
        lo, hi = box_f1_ci(stats, clusters)
        chance = None
    else:
        scores = np.array([float(record["score"]) for _, record in rows])
        value = float(scores.mean())
        los, his = group_cis(scores, np.zeros(scores.size, np.intp), clusters)
        lo, hi = float(los[0]), float(his[0])
        chances = [random_baseline(item) for item in items]
        chance = None if None in chances else float(np.mean([c for c in chances if c is not None]))
    images = len(set(clusters.tolist()))
    cell: dict[str, Any] = {
        "metric": "micro_f1",
        "n": len(items),
        "images": images,
        "value": value if np.isfinite(value) else None,
        "ci": [lo, hi] if np.isfinite(lo) and np.isfinite(hi) else None,
        "chance": chance,
    }
    if cell["value"] is not None and cell["ci"] is None and images < MIN_IMAGES:
        cell["note"] = FEW_IMAGES_CORPUS
    return cell


def box_f1_ci(stats: np.ndarray, clusters: np.ndarray) -> tuple[float, float]:
    """CI of micro-F1 = 2·matched / (predicted + gold) over boxes (`stats`: items × (matched,
    predicted, gold)): the corpus statistics' cluster jackknife (``corpus_metrics.corpus_ci``),
    so the MMBU section and a detection run's ``f1_50`` print one interval."""
    return corpus_ci(stats, np.asarray(clusters), box_f1_from_sums)


def paired_delta(rows: list[tuple[Item, Record]]) -> dict[str, Any] | None:
    """Mean closed − open score over samples that have both forms, with the paired clustered CI
    (``scoring.closed_open.closed_open_delta``: the one Δ every display prints)."""
    items = [item for item, _ in rows]
    forms = np.array([item.meta.get("answer_type") for item in items], dtype=object)
    scores = np.array([float(record["score"]) for _, record in rows])
    clusters = np.array([item.meta.get("image_id", item.id) for item in items], dtype=object)
    gap = closed_open_delta(forms, pair_keys(items), scores, clusters)
    return gap if gap is not None and gap["paired"] else None

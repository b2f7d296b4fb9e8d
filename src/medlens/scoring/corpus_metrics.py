"""Corpus metrics per kind, overall and per slice, each with n and a 1,000-resample CI.

``results["metrics"][kind][name] = {"n", "images", "value", "ci"}`` and the same under
``results["by"][axis][value]["metrics"]``:

- ``classify``: ``macro_f1`` over the known class set (every label the items offer),
  ``micro_f1`` (an unanswered item is a wrong label, so it equals accuracy), ``auroc``
  (one-vs-rest macro) only when every record holds per-label ``option_probs`` and the items
  share one fixed label set.
- ``report``: ``rouge_l`` (mean ROUGE-L F), ``bleu4`` (sacrebleu corpus BLEU, its defaults:
  13a tokenisation, exp smoothing), both of the texts as written, prediction and reference
  normalised alike (``report_text``), so a perfect answer scores 1.0 and ``bleu4`` equals
  ``sacrebleu.corpus_bleu``; ``chexpert_f1`` (micro-F1 over the rule-based labeller's 14
  findings, ``medlens.scoring.chexpert``), for chest-radiograph reports only (MIMIC-CXR,
  IU-Xray, a chest X-ray modality; ``n`` counts those), ``None`` ("–") when their references
  name no finding. Uncertain mentions count as negative (the "U-zeros" policy, stated in the
  cell as ``"uncertain": "negative"``); ``chexpert_f1_uncertain_positive`` (U-ones) and
  ``chexpert_f1_uncertain_ignore`` (uncertain findings left out) stand beside it; and the
  CheXpert-label F1s of the Med-PaLM M papers (``scoring.label_f1``): ``chexpert_macro_f1_14``,
  ``chexpert_micro_f1_5``, ``chexpert_macro_f1_5`` (rule-based labeller, U-zeros; ``medlens
  chexpert RUN`` recomputes them under another policy or a learned labeller).
- ``open``: means of ``exact``, ``contains``, ``token_f1``, ``token_recall``, ``bleu1``.
- ``detect``: ``f1_50`` (micro over boxes: a predicted box is a hit when it matches a distinct
  gold box at IoU ≥ 0.5, greedily by IoU) and ``mean_iou`` (first box, as the item score).

Means take their interval from ``bootstrap.group_spread`` (the single source for a reported
score's CI). Corpus statistics (F1s, BLEU, box micro-F1) are not means of item scores: their
interval is the cluster jackknife's on the logit scale with t(G − 1) (``stats.jackknife``),
from per-image sums of per-item sufficient statistics (the 1,000-resample percentile bootstrap
it replaces covered 84–92% with ≤ 20 images). AUROC is recomputed on 1,000 resamples of
images (item weights) for its logit interval (``stats.auroc``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from medlens.core.items import Item
from medlens.core.records import Record
from medlens.scoring.corpus_stats import build_kind_rows
from medlens.scoring.item_scores import ZERO_ONE_SECONDARY
from medlens.scoring.kind_rows import KindRows, Statistic
from medlens.stats.bootstrap import group_spread
from medlens.stats.jackknife import MIN_IMAGES, cluster_sums, jackknife_interval

N_RESAMPLES = 1000
_BATCH_CELLS = 4_000_000
"""Resample counts held at once (resamples × images), bounding memory for 26,000+ items."""

KIND_METRICS: dict[str, tuple[str, ...]] = {
    "classify": ("macro_f1", "micro_f1", "auroc"),
    "report": (
        "rouge_l",
        "bleu4",
        "chexpert_f1",
        "chexpert_f1_uncertain_positive",
        "chexpert_f1_uncertain_ignore",
        "chexpert_macro_f1_14",
        "chexpert_micro_f1_5",
        "chexpert_macro_f1_5",
    ),
    "open": ("exact", "contains", "token_f1", "token_recall", "bleu1"),
    "detect": ("f1_50", "mean_iou"),
}
ZERO_ONE_MEANS = ZERO_ONE_SECONDARY | {"micro_f1"}
"""Mean metrics that are 0/1 per item by definition (their interval is a proportion's)."""


def attach_corpus_metrics(
    results: dict[str, Any], items: Sequence[Item], records: dict[str, Record]
) -> None:
    """Add ``results["metrics"]`` and a ``"metrics"`` key in every ``results["by"]`` cell."""
    by_kind = _rows_by_kind(items, records)
    results["metrics"] = {kind: _metric_cells(rows, None) for kind, rows in by_kind.items()}
    for axis, cells in (results.get("by") or {}).items():
        per_kind = {kind: _by_value(rows, axis) for kind, rows in by_kind.items()}
        for value, target in cells.items():
            found = {kind: cells_[value] for kind, cells_ in per_kind.items() if value in cells_}
            if found:
                target["metrics"] = found


def _rows_by_kind(items: Sequence[Item], records: dict[str, Record]) -> dict[str, KindRows]:
    grouped: dict[str, KindRows] = {}
    for item in items:
        record = records.get(item.id)
        if item.kind not in KIND_METRICS or item.answer is None or record is None:
            continue
        if record.get("error") is not None or record.get("score") is None:
            continue
        rows = grouped.setdefault(item.kind, KindRows())
        rows.items.append(item)
        rows.records.append(record)
    for kind, rows in grouped.items():
        build_kind_rows(kind, rows)
    return grouped


def _clusters(rows: KindRows) -> np.ndarray:
    if rows.clusters is None:
        rows.clusters = np.array(
            [item.meta.get("image_id", item.id) for item in rows.items], dtype=object
        )
    return rows.clusters


def _metric_cells(
    rows: KindRows, mask: np.ndarray | None, means: dict[str, dict[str, Any]] | None = None
) -> dict[str, dict[str, Any]]:
    """Every metric of one kind over the items in `mask` (None: all); `means` holds the cells
    of the mean metrics when they were computed for many slices at once."""
    clusters = _clusters(rows)
    chosen = np.ones(len(rows.items), dtype=bool) if mask is None else mask
    out: dict[str, dict[str, Any]] = dict(means or {})
    if means is None:
        overall = np.zeros(len(rows.items), dtype=object)
        out.update(_mean_cells(rows, overall, clusters).get("0", {}))
    out.update(_resampled_cells(rows, chosen, clusters[chosen]))
    return {name: out[name] for name in KIND_METRICS_ORDER if name in out}


def _resampled_cells(
    rows: KindRows, chosen: np.ndarray, clusters: np.ndarray
) -> dict[str, dict[str, Any]]:
    """Corpus statistics and weighted metrics over `chosen`, all from one set of resamples."""
    if not rows.corpus and not rows.weighted:
        return {}
    codes = np.unique(clusters.astype(str), return_inverse=True)[1].ravel()
    n_clusters = int(codes.max()) + 1 if codes.size else 0
    out: dict[str, dict[str, Any]] = {}
    for name, (stats, statistic) in rows.corpus.items():
        applies = rows.only.get(name)
        subset = applies[chosen] if applies is not None else np.ones(int(chosen.sum()), bool)
        if not subset.any():
            continue
        part, part_codes = stats[chosen][subset], codes[subset]
        if applies is not None:  # resample only the clusters the metric applies to
            part_codes = np.unique(part_codes, return_inverse=True)[1].ravel()
        value = float(statistic(part.sum(axis=0)[None, :])[0])
        ci = jackknife_interval(cluster_sums(part, part_codes), statistic) if n_clusters else None
        ci = ci if ci is not None else (np.nan, np.nan)
        out[name] = {**_cell(part, clusters[subset], value, ci), **rows.notes.get(name, {})}
    index = np.flatnonzero(chosen)
    for name, weighted in rows.weighted.items():
        value = float(weighted(np.ones((1, index.size)), index)[0])
        ci = rows.intervals[name](index, clusters) if np.isfinite(value) else (np.nan, np.nan)
        out[name] = _cell(index, clusters, value, ci)
    return out


KIND_METRICS_ORDER = tuple(name for names in KIND_METRICS.values() for name in names)


def corpus_cells(rows: KindRows) -> dict[str, dict[str, Any]]:
    """Every corpus statistic of `rows` over all its items, each with n, images and its
    cluster-bootstrap CI (what ``results["metrics"]`` holds), for a table built elsewhere."""
    chosen = np.ones(len(rows.items), dtype=bool)
    return _resampled_cells(rows, chosen, _clusters(rows))


def _mean_cells(
    rows: KindRows, groups: np.ndarray, clusters: np.ndarray
) -> dict[Any, dict[str, dict[str, Any]]]:
    """Cells of the mean metrics for every group, each metric's CIs from one `group_spread` call
    (continuous for every metric but the 0/1 ones)."""
    labels = np.unique(groups.astype(str))
    out: dict[Any, dict[str, dict[str, Any]]] = {label: {} for label in labels.tolist()}
    keys = groups.astype(str)
    for name, values in rows.means.items():
        # a token F1 or BLEU-1 that happens to be all 0/1 is still continuous: no Wilson on it
        continuous = name not in ZERO_ONE_MEANS
        lo, hi = group_spread(values, keys, clusters, continuous=continuous).bounds()
        for i, label in enumerate(labels.tolist()):
            mask = keys == label
            value = float(values[mask].mean())
            out[label][name] = _cell(values[mask], clusters[mask], value, (lo[i], hi[i]))
    return out if groups.size else {}


def _by_value(rows: KindRows, axis: str) -> dict[str, dict[str, dict[str, Any]]]:
    values = np.array([item.meta.get(axis, "") for item in rows.items], dtype=object)
    means = _mean_cells(rows, values, _clusters(rows))
    return {
        str(value): _metric_cells(rows, values == value, means[str(value)])
        for value in sorted(set(values.tolist()))
        if value != ""
    }


def _cell(
    units: np.ndarray, clusters: np.ndarray, value: float, ci: tuple[float, float]
) -> dict[str, Any]:
    lo_f, hi_f = float(ci[0]), float(ci[1])
    finite = bool(np.isfinite(value))
    images = len(set(clusters.tolist()))
    cell: dict[str, Any] = {
        "n": len(units),
        "images": images,
        "value": value if finite else None,
        "ci": [lo_f, hi_f] if finite and np.isfinite(lo_f) and np.isfinite(hi_f) else None,
    }
    if finite and cell["ci"] is None and images < MIN_IMAGES:
        cell["note"] = FEW_IMAGES_CORPUS
    return cell


FEW_IMAGES_CORPUS = f"fewer than {MIN_IMAGES} images: too few for a corpus statistic's interval"


def item_weights(
    clusters: np.ndarray, n_resamples: int = N_RESAMPLES, seed: int = 0
) -> list[np.ndarray]:
    """(resamples × items) weights of cluster-bootstrap resamples (an item weighs as many times
    as its cluster was drawn), in memory-bounded batches: the resamples every corpus statistic
    and weighted metric here uses."""
    codes = np.unique(clusters.astype(str), return_inverse=True)[1].ravel()
    if codes.size == 0:
        return []
    return [
        counts[:, codes] for counts in _resample_counts(int(codes.max()) + 1, n_resamples, seed)
    ]


def _resample_counts(n_clusters: int, n_resamples: int, seed: int) -> list[np.ndarray]:
    """(rows × clusters) counts of each cluster in each resample, in memory-bounded batches."""
    rng = np.random.default_rng(seed)
    batch = max(1, _BATCH_CELLS // max(n_clusters, 1))
    out = []
    for first in range(0, n_resamples, batch):
        rows = min(batch, n_resamples - first)
        picks = rng.integers(0, n_clusters, size=(rows, n_clusters), dtype=np.int64)
        picks += (np.arange(rows, dtype=np.int64) * n_clusters)[:, None]
        counts = np.bincount(picks.ravel(), minlength=rows * n_clusters).reshape(rows, -1)
        out.append(counts.astype(float))  # float: the matrix products below run in BLAS
    return out


def corpus_ci(
    stats: np.ndarray,
    clusters: np.ndarray,
    statistic: Statistic,
    *,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[float, float]:
    """CI of a corpus statistic of clustered items: the cluster jackknife's logit interval
    (``stats.jackknife``; `n_resamples` and `seed` are kept for callers written for the
    percentile bootstrap it replaced and change nothing).

    `stats` (items × k) are additive per-item sufficient statistics; `statistic` maps their
    sums to the value.
    """
    if stats.shape[0] == 0:
        return float("nan"), float("nan")
    codes = np.unique(clusters.astype(str), return_inverse=True)[1].ravel()
    return jackknife_interval(cluster_sums(stats, codes), statistic, level)

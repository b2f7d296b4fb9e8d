"""The closed − open Δ: one function for every place that prints it (issue 35).

Results (``closed_open`` in results.json, overall and per slice), the judge stage (closed by the
rules, open judged), MMBU's protocol section and ``board --layout mmbu`` all call
:func:`closed_open_delta`, so one run shows one figure.

- **Paired** when the benchmark pairs its forms (MMBU): the closed and open forms of one sample
  are the items sharing ``sample_id``, else (items that carry a ``task`` and a ``template``, or
  one of MMBU's four tasks: the official TSVs have no template column) the same image, task,
  template and gold label (detection: the same image, task and template).
  Δ = mean over pairs of closed − open, with the paired, cluster-aware interval ``compare`` uses
  (``stats.paired.paired_ci``, images as clusters); items without a scored partner are left out
  and counted (``unpaired``).
- **Unpaired** when no sample has both forms (SLAKE, VQA-RAD: closed and open are different
  questions): Δ = mean(closed) − mean(open) with ``stats.paired.difference_ci`` (Newcombe /
  Welch, enveloped with the cluster-robust interval), and ``paired`` false, ``n_pairs`` 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from medlens.core.items import Item
from medlens.extract.normalise import normalize_answer
from medlens.stats.paired import difference_ci, paired_ci

PairKey = tuple[str, ...]


PAIRED_TASKS = frozenset({"classification", "mask_classification", "box_classification",
                          "detection"})  # fmt: skip
"""MMBU's four tasks: each sample comes in a closed and an open form, in every MMBU layout (the
official inference TSVs carry no context template: one file per task and form)."""


def pair_key(item: Item) -> PairKey | None:
    """What ties the closed and open forms of one sample (None: the item is in no pair)."""
    meta = item.meta
    if meta.get("sample_id"):
        return ("sample", str(meta["sample_id"]))
    task = meta.get("task")
    if not task or ("template" not in meta and task not in PAIRED_TASKS):
        return None  # not a benchmark that pairs its forms
    base = (str(meta.get("image_id", "")), str(task), str(meta.get("template", "")))
    if meta["task"] == "detection":
        return base
    gold = str(item.answer)
    label = item.options.get(gold, gold) if item.options else gold
    return (*base, normalize_answer(label))


def pair_keys(items: Sequence[Item]) -> list[PairKey | None]:
    return [pair_key(item) for item in items]


def closed_open_delta(
    forms: np.ndarray,
    keys: Sequence[PairKey | None],
    scores: np.ndarray,
    clusters: np.ndarray,
) -> dict[str, Any] | None:
    """The closed − open Δ over items with `forms` ("closed"/"open"/other), their pair `keys`,
    `scores` (NaN: not scored) and images; None when neither form has a scored item.

    Keys of the dict: paired, n_pairs, unpaired, closed, open, n_closed, n_open, images_closed,
    images_open, delta, delta_ci (see the module docstring)."""
    forms = np.asarray(forms, dtype=object)
    scores = np.asarray(scores, dtype=float)
    clusters = np.asarray(clusters).astype(str)
    scored = ~np.isnan(scores)
    closed, opened = scored & (forms == "closed"), scored & (forms == "open")
    if not closed.any() and not opened.any():
        return None
    first_closed, first_open = _pairs(keys, closed, opened)
    if first_closed.size:
        return _paired(first_closed, first_open, scores, clusters, int(closed.sum() + opened.sum()))
    return _unpaired(closed, opened, scores, clusters)


def _pairs(
    keys: Sequence[PairKey | None], closed: np.ndarray, opened: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Index arrays (closed item, open item) of the keys with exactly one scored item per form."""
    found: dict[PairKey, tuple[list[int], list[int]]] = {}
    for index, key in enumerate(keys):
        if key is not None and (closed[index] or opened[index]):
            entry = found.setdefault(key, ([], []))
            entry[0 if closed[index] else 1].append(index)
    pairs = [(c[0], o[0]) for c, o in found.values() if len(c) == 1 and len(o) == 1]
    if not pairs:
        return np.zeros(0, np.intp), np.zeros(0, np.intp)
    first, second = zip(*pairs, strict=True)
    return np.array(first, np.intp), np.array(second, np.intp)


def _paired(
    c: np.ndarray, o: np.ndarray, scores: np.ndarray, clusters: np.ndarray, scored: int
) -> dict[str, Any]:
    closed, opened = scores[c], scores[o]
    lo, hi = paired_ci(opened, closed, clusters[c])  # CI of mean(closed − open)
    images = len(set(clusters[c].tolist()) | set(clusters[o].tolist()))
    return {
        "paired": True,
        "n_pairs": int(c.size),
        "unpaired": scored - 2 * int(c.size),
        "closed": float(closed.mean()),
        "open": float(opened.mean()),
        "n_closed": int(c.size),
        "n_open": int(o.size),
        "images_closed": images,
        "images_open": images,
        "delta": float((closed - opened).mean()),
        "delta_ci": [float(lo), float(hi)],
    }


def _unpaired(
    closed: np.ndarray, opened: np.ndarray, scores: np.ndarray, clusters: np.ndarray
) -> dict[str, Any]:
    both = closed.any() and opened.any()
    ci = difference_ci(scores, closed, opened, clusters) if both else None
    return {
        "paired": False,
        "n_pairs": 0,
        "unpaired": int(closed.sum() + opened.sum()),
        "closed": float(scores[closed].mean()) if closed.any() else None,
        "open": float(scores[opened].mean()) if opened.any() else None,
        "n_closed": int(closed.sum()),
        "n_open": int(opened.sum()),
        "images_closed": len(set(clusters[closed].tolist())),
        "images_open": len(set(clusters[opened].tolist())),
        "delta": float(scores[closed].mean() - scores[opened].mean()) if both else None,
        "delta_ci": None if ci is None else [float(ci[0]), float(ci[1])],
    }


def delta_influence(
    forms: np.ndarray, keys: Sequence[PairKey | None], scores: np.ndarray
) -> np.ndarray | None:
    """Per item, its term ψ in the linearised Δ (Δ̂ − Δ ≈ Σ ψ), paired or unpaired as
    :func:`closed_open_delta` pairs them: a pair's (d − d̄)/n_pairs on its closed item (the
    open one 0); unpaired, (y − ȳ_closed)/n_closed and −(y − ȳ_open)/n_open. Summed by image, it
    gives a cluster-robust variance of Δ, or of a mean of Δs over tasks sharing images. None
    where :func:`closed_open_delta` has no Δ."""
    forms = np.asarray(forms, dtype=object)
    scores = np.asarray(scores, dtype=float)
    scored = ~np.isnan(scores)
    closed, opened = scored & (forms == "closed"), scored & (forms == "open")
    psi = np.zeros(scores.size)
    first_closed, first_open = _pairs(keys, closed, opened)
    if first_closed.size:
        d = scores[first_closed] - scores[first_open]
        psi[first_closed] = (d - d.mean()) / d.size
        return psi
    if not closed.any() or not opened.any():
        return None
    psi[closed] = (scores[closed] - scores[closed].mean()) / closed.sum()
    psi[opened] = -(scores[opened] - scores[opened].mean()) / opened.sum()
    return psi


def pairing_text(gap: dict[str, Any]) -> str:
    """How the Δ was formed, for every display: "26 pairs" or "unpaired: different questions"."""
    if gap.get("paired"):
        pairs = int(gap["n_pairs"])
        return f"{pairs} pair{'' if pairs == 1 else 's'}"
    return "unpaired: different questions"

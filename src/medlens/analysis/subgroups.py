"""``medlens subgroups RUN --by AXIS``: per-group accuracy and AUROC, the largest gap between
groups with its interval, and screening operating points (MultiMedBench's classification
tasks, MMBU's metadata, fairness audits by sex or age band).

- Accuracy per group is the run's rule score, with the interval every score gets
  (``stats.bootstrap.group_cis``: clusters are images).
- AUROC (one-vs-rest macro; binary: the positive label's) needs per-label probabilities in
  every record (``openai:…&logprobs=true&top_logprobs=K``); without them it is left out and
  the result says why. Its interval is Newcombe's score interval with the design effect of
  shared images (``stats.auroc``); a group without positives or negatives has none, and says so.
- The largest gap is max − min over the groups with n ≥ `min_n` (and, for AUROC, both classes
  present), with an interval for the true largest gap, simultaneous over every pair of groups
  (``analysis.subgroup_gaps``).
- Binary screening (two labels, probabilities present, the positive one named by ``--positive``
  or ``yes``): sensitivity at specificity ≥ s and specificity at sensitivity ≥ t, overall and
  per group, each with the interval of ``stats.operating_point`` (the threshold's own
  uncertainty from the negatives' binomial count, the positives' Wilson interval, combined;
  none below 5 positives or negatives, with a note).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from medlens.analysis.subgroup_gaps import largest_gap
from medlens.core.errors import SpecError
from medlens.core.items import Item
from medlens.core.records import Record
from medlens.runs.view import RunView
from medlens.scoring.corpus_metrics import item_weights
from medlens.scoring.corpus_stats import gold_label, known_labels, label_key, probability_matrix
from medlens.stats.auroc import auroc_ci
from medlens.stats.bootstrap import group_cis
from medlens.stats.operating_point import sensitivity_at, specificity_at


def scored_pairs(store: RunView) -> tuple[list[Item], list[Record]]:
    """Items with a gold answer and a scored, error-free record (what every score counts)."""
    records = store.records()
    pairs = [(i, records[i.id]) for i in store.items() if i.answer is not None and i.id in records]
    kept = [(i, r) for i, r in pairs if r.get("error") is None and r.get("score") is not None]
    return [i for i, _ in kept], [r for _, r in kept]


def subgroup_result(
    run: Path, axis: str, *, specificity: float = 0.9, sensitivity: float = 0.9,
    positive: str | None = None, min_n: int = 50,
) -> dict[str, Any]:  # fmt: skip
    """The per-group table, gaps and screening points of `run` by `axis` (module docstring)."""
    for name, value in (("--at-specificity", specificity), ("--at-sensitivity", sensitivity)):
        if not 0.0 < value < 1.0:
            raise SpecError(f"{name} {value:g}: expected a rate strictly between 0 and 1")
    store = RunView(run)
    items, records = scored_pairs(store)
    if not items:
        raise SpecError(f"{run}: no scored items with a gold answer")
    groups = np.array([item.meta.get(axis, "") for item in items], dtype=object)
    if not (groups != "").any():
        raise SpecError(f"--by {axis!r}: no item of {store.path.name} has this axis")
    clusters = np.array([item.meta.get("image_id", item.id) for item in items], dtype=object)
    correct = np.array([float(r["score"] >= 1.0) for r in records])
    weights = item_weights(clusters)
    probs = _probabilities(items, records, positive)
    result: dict[str, Any] = {
        "run": store.path.name, "axis": axis, "n": len(items), "min_n": min_n,
        "auroc_scores": probs["note"], "positive": probs.get("positive"),
    }  # fmt: skip
    names = sorted(set(groups.tolist()) - {""})
    result["groups"] = _group_cells(names, groups, correct, clusters, probs, min_n)
    result["gaps"] = {
        metric: largest_gap(
            names, groups, weights, result["groups"], metric, correct, probs, clusters
        )
        for metric in ("accuracy", "auroc")
    }
    if probs.get("score") is not None:
        result["screening"] = _screening(groups, names, clusters, probs, specificity, sensitivity)
    elif "screening_note" in probs:
        result["screening_note"] = probs["screening_note"]
    return result


def _probabilities(
    items: list[Item], records: list[Record], positive: str | None
) -> dict[str, Any]:
    """The probability matrix and truth (or why there are none), and the binary score."""
    labels = known_labels(items)
    matrix = probability_matrix(items, records, labels) if items[0].kind == "classify" else None
    if matrix is None:
        return {"note": "no AUROC: records need per-label probabilities (logprobs=true) on "
                        "classify items sharing one label set"}  # fmt: skip
    truth = np.array([labels.index(label_key(gold_label(item))) for item in items])
    out: dict[str, Any] = {"note": "per-label probabilities", "matrix": matrix, "truth": truth,
                           "labels": labels}  # fmt: skip
    if len(labels) == 2:
        chosen = (
            label_key(positive) if positive is not None else ("yes" if "yes" in labels else None)
        )
        if chosen is None:
            out["screening_note"] = f"give --positive ({' or '.join(labels)}) for screening points"
            return out
        if chosen not in labels:
            raise SpecError(f"--positive {positive!r}: the labels are {', '.join(labels)}")
        column = labels.index(chosen)
        out.update(positive=chosen, score=matrix[:, column], is_positive=truth == column)
    elif positive is not None:
        raise SpecError(f"--positive: the task has {len(labels)} labels, not two")
    return out


def _group_cells(
    names: list[str], groups: np.ndarray, correct: np.ndarray, clusters: np.ndarray,
    probs: dict[str, Any], min_n: int,
) -> dict[str, dict[str, Any]]:  # fmt: skip
    keys = groups.astype(str)
    low, high = group_cis(correct, keys, clusters)
    order = np.unique(keys).tolist()
    out = {}
    for name in names:
        mask = groups == name
        at = order.index(name)
        cell: dict[str, Any] = {
            "n": int(mask.sum()), "images": len(set(clusters[mask].tolist())),
            "accuracy": float(correct[mask].mean()), "accuracy_ci": [float(low[at]), float(high[at])],
            "small": bool(mask.sum() < min_n),
        }  # fmt: skip
        if "matrix" in probs:
            value, ci = group_auroc(probs, np.flatnonzero(mask), clusters)
            cell.update(auroc=value, auroc_ci=ci)
            if value is None:
                cell["auroc_note"] = _missing_class(probs, np.flatnonzero(mask))
        out[name] = cell
    return out


def group_auroc(
    probs: dict[str, Any], index: np.ndarray, clusters: np.ndarray | None = None
) -> tuple[float | None, list[float] | None]:
    """The group's AUROC and its interval (``stats.auroc.auroc_ci``: Newcombe's score interval
    with the design effect of shared images); (None, None) when a class lacks positives or
    negatives in the group."""
    part = None if clusters is None else clusters[index]
    return auroc_ci(probs["matrix"][index], probs["truth"][index], part)


def _missing_class(probs: dict[str, Any], index: np.ndarray) -> str:
    """Why a group has no AUROC, in the labels' words."""
    labels = probs.get("labels") or [str(c) for c in range(probs["matrix"].shape[1])]
    present = sorted({labels[c] for c in probs["truth"][index].tolist()})
    if len(present) == 1:
        return f"every item in this group is {present[0]!r}: no AUROC"
    absent = sorted(set(labels) - set(present))
    return f"no {', '.join(map(repr, absent))} in this group: no AUROC"


def _screening(
    groups: np.ndarray, names: list[str], clusters: np.ndarray, probs: dict[str, Any],
    specificity: float, sensitivity: float,
) -> dict[str, Any]:  # fmt: skip
    """Overall and per group: sensitivity at the specificity, specificity at the sensitivity,
    each with the interval of ``stats.operating_point`` (images as clusters)."""

    def points(index: np.ndarray) -> dict[str, Any]:
        score, positive = probs["score"][index], probs["is_positive"][index]
        out: dict[str, Any] = {"n": int(index.size), "positives": int(positive.sum())}
        for key, function, target in (
            ("sensitivity_at_specificity", sensitivity_at, specificity),
            ("specificity_at_sensitivity", specificity_at, sensitivity),
        ):
            found = function(score, positive, target, clusters[index])
            out[key] = {"value": found.value, "ci": found.ci}
            if found.note:
                out[key]["note"] = found.note
        return out

    return {
        "positive": probs["positive"], "at_specificity": specificity, "at_sensitivity": sensitivity,
        "overall": points(np.arange(groups.size)),
        "by": {name: points(np.flatnonzero(groups == name)) for name in names},
        "ci_method": "threshold from the negatives' binomial count, positives' Wilson interval, "
                     "combined (MOVER); images as clusters",
    }  # fmt: skip


def subgroup_lines(result: dict[str, Any]) -> list[str]:
    """What the command prints: one line per group, the gaps, the screening points."""
    lines = [f"{result['run']} by {result['axis']}: {result['n']} scored items; "
             f"AUROC from {result['auroc_scores']}"]  # fmt: skip
    for name, cell in result["groups"].items():
        text = f"  {name}: n={cell['n']} images={cell['images']} accuracy {_ci(cell['accuracy'], cell['accuracy_ci'])}"
        if "auroc" in cell:
            text += f", AUROC {_ci(cell['auroc'], cell['auroc_ci'])}"
            text += f" ({cell['auroc_note']})" if cell.get("auroc_note") else ""
        lines.append(text + (f" (n < {result['min_n']}: not in the gap)" if cell["small"] else ""))
    for metric, gap in result["gaps"].items():
        if gap is not None:
            lines.append(
                f"largest {metric} gap: {_ci(gap['value'], gap['ci'])} ({gap['highest']} − "
                f"{gap['lowest']}, among {gap['groups']} groups; the interval is for the true "
                "largest gap, simultaneous over every pair of groups)"
            )
    screening = result.get("screening")
    if "screening_note" in result:
        lines.append(f"screening: {result['screening_note']}")
    if screening:
        lines.append(f"screening (positive = {screening['positive']!r}):")
        for name, point in [("overall", screening["overall"]), *screening["by"].items()]:
            sens, spec = point["sensitivity_at_specificity"], point["specificity_at_sensitivity"]
            notes = sorted({p["note"] for p in (sens, spec) if p.get("note")})
            lines.append(
                f"  {name}: sensitivity at specificity ≥ {screening['at_specificity']:g} "
                f"{_ci(sens['value'], sens['ci'])}; specificity at sensitivity ≥ "
                f"{screening['at_sensitivity']:g} {_ci(spec['value'], spec['ci'])} "
                f"(n={point['n']}, positives {point['positives']}"
                + "".join(f"; {note}" for note in notes)
                + ")"
            )
    return lines


def _ci(value: float | None, ci: list[float] | None) -> str:
    shown = "–" if value is None else f"{value:.3f}"
    return shown + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci and value is not None else "")

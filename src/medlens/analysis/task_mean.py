"""The across-task mean closed − open Δ, and MMBU's headline gap, on a run and on the published
table.

MMBU's headline is, by the paper's definition (its text, ``shared/references``: "averages about
0.26 over the three classification tasks (unanchored 0.38, box 0.29, mask 0.36)"; issue 48), the
mean over its **three classification tasks** — unanchored, box- and mask-anchored — of the
per-task Δ, each task weighing the same; detection is left out. On the paper's own main table
(``data/references/mmbu.csv``, 17 models) that mean is 0.3408 (0.375, 0.292, 0.355: the
per-task gaps the paper quotes). The number the paper prints beside that definition, 0.26, is
what the mean over all **four** tasks gives on the same table (0.2646); no average over the
classification tasks gives it. medlens prints the definition as the headline and the four-task
mean beside it, labelled, so both readings are visible (:func:`published_gap`,
``tests/analysis/test_task_mean.py``); and the mean over every task of the run when the run has
tasks beyond MMBU's four.

Each task's Δ and its 95% CI come from the one closed − open function (``results["closed_open"]
["by"]["task"]``, whatever pairing it uses); each task weighs the same. The interval is the
envelope of

- the per-task intervals combined as if the tasks were independent: SE = √(Σ SEₜ²) / T, each
  SEₜ read off its CI (half-width / 1.96), a normal interval on it (it carries every per-task
  safeguard);
- the cluster-robust interval of the mean over the images the tasks share (MMBU asks every task
  about one image): each item's term of the linearised mean (``closed_open.delta_influence``,
  / T) summed by image, CR1, t(G_eff − 1) with Kish's effective images. Tasks on one image
  move together (an image read well helps its open answers in every task), which the first
  interval ignores: it covered 88–91% (issue 45).

Needs at least two tasks with a Δ.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from medlens.scoring.closed_open import PairKey, delta_influence

Z95 = 1.959963984540054
MMBU_GAP_TASKS = ("classification", "box_classification", "mask_classification", "detection")
"""MMBU's four tasks (the ``task`` values of ``sources/mmbu.py``), in its table's order."""
MMBU_CLASSIFICATION = MMBU_GAP_TASKS[:3]
TASK_LABELS = {"classification": "unanchored", "box_classification": "box-anchored",
               "mask_classification": "mask-anchored", "detection": "detection"}  # fmt: skip
HEADLINE = "MMBU headline (the paper's definition): mean over its 3 classification tasks, each weighs the same"
FOUR_TASKS = "all 4 MMBU tasks, detection included (the mean the paper's printed 0.26 matches)"


@dataclass(frozen=True)
class TaskItems:
    """A run's scored items as the across-task Δ needs them (parallel arrays)."""

    task: np.ndarray
    form: np.ndarray
    keys: Sequence[PairKey | None]
    score: np.ndarray
    image: np.ndarray


def task_mean_delta(
    closed_open: Mapping[str, Any] | None,
    tasks: Sequence[str] | None = None,
    shared: TaskItems | None = None,
) -> dict[str, Any] | None:
    """``{"tasks", "delta", "ci", "by": {task: Δ}[, "images", "ci_method"]}`` over `tasks`
    (default: every task with a Δ), or None with fewer than two of them. Without `shared` (the
    items), the interval assumes independent tasks."""
    cells = ((closed_open or {}).get("by") or {}).get("task") or {}
    usable = {
        task: cell for task, cell in cells.items()
        if (tasks is None or task in tasks) and cell.get("delta") is not None
        and cell.get("delta_ci")
    }  # fmt: skip
    if len(usable) < 2:
        return None
    count = len(usable)
    mean = sum(float(c["delta"]) for c in usable.values()) / count
    variance = sum(
        ((c["delta_ci"][1] - c["delta_ci"][0]) / (2 * Z95)) ** 2 for c in usable.values()
    )
    half = Z95 * math.sqrt(variance) / count
    out: dict[str, Any] = {
        "tasks": count,
        "delta": mean,
        "ci": [mean - half, mean + half],
        "by": {task: float(c["delta"]) for task, c in sorted(usable.items())},
    }
    clustered = None if shared is None else _clustered(shared, sorted(usable), mean)
    if clustered is not None:
        (low, high), images = clustered
        out["ci"] = [min(mean - half, low), max(mean + half, high)]
        out["images"] = images
        out["ci_method"] = ("the per-task intervals combined, enveloped with the cluster-robust "
                            "interval over the images the tasks share")  # fmt: skip
    return out


def _clustered(
    shared: TaskItems, tasks: list[str], mean: float
) -> tuple[tuple[float, float], int] | None:
    """The cluster-robust t(G_eff − 1) interval of the mean Δ over `tasks`, and the images."""
    from scipy.special import stdtrit

    psi = np.zeros(shared.score.size)
    used = np.zeros(shared.score.size, dtype=bool)
    for task in tasks:
        chosen = np.flatnonzero(shared.task == task)
        keys = [shared.keys[i] for i in chosen.tolist()]
        part = delta_influence(shared.form[chosen], keys, shared.score[chosen])
        if part is None:
            return None
        psi[chosen] = part / len(tasks)
        used[chosen] = ~np.isnan(shared.score[chosen])
    codes = np.unique(shared.image[used].astype(str), return_inverse=True)[1].ravel()
    groups = int(codes.max()) + 1 if codes.size else 0
    if groups < 3:
        return None
    totals = np.bincount(codes, psi[used])
    sizes = np.bincount(codes).astype(float)
    se = math.sqrt(groups / (groups - 1) * float((totals**2).sum()))
    effective = min(float(sizes.sum() ** 2 / (sizes**2).sum()), float(groups))
    half = float(stdtrit(max(effective - 1, 1.0), 0.975)) * se
    return (mean - half, mean + half), groups


def mmbu_gap(
    closed_open: Mapping[str, Any] | None, shared: TaskItems | None = None
) -> dict[str, Any] | None:
    """MMBU's headline gap of a run (None when its items carry none of MMBU's tasks):
    ``headline`` (over MMBU's three classification tasks that have a Δ; ``missing`` names the
    others), ``four_tasks`` (detection included) and ``all`` (every task with a Δ, when that is
    more than the four tasks')."""
    cells = ((closed_open or {}).get("by") or {}).get("task") or {}
    if not set(cells) & set(MMBU_GAP_TASKS):
        return None
    headline = task_mean_delta(closed_open, MMBU_CLASSIFICATION, shared)
    four = task_mean_delta(closed_open, MMBU_GAP_TASKS, shared)
    everything = task_mean_delta(closed_open, None, shared)
    return {
        "headline": headline,
        "missing": [t for t in MMBU_CLASSIFICATION if t not in ((headline or {}).get("by") or {})],
        "four_tasks": four if four and headline and four["tasks"] > headline["tasks"] else None,
        "all": everything if everything and four and everything["tasks"] > four["tasks"]
        else None,
    }  # fmt: skip


def task_mean_text(result: Mapping[str, Any]) -> str:
    """``mean closed − open Δ over 3 tasks: +0.260, 95% CI +0.21…+0.31 (…)``."""
    return f"mean closed − open Δ over {result['tasks']} tasks: {_value(result)} (each task weighs the same)"


def mmbu_gap_lines(gap: Mapping[str, Any]) -> list[str]:
    """The headline first, then the four-task and all-task means, labelled."""
    lines = []
    head = gap.get("headline")
    if head:
        short = (
            f" — {head['tasks']} of 3 tasks, no {', '.join(TASK_LABELS[t] for t in gap['missing'])}:"
            " not the paper's definition"
            if gap.get("missing")
            else ""
        )
        lines.append(f"{HEADLINE}: {_value(head)}{short}")
    if gap.get("four_tasks"):
        lines.append(f"  {FOUR_TASKS}: {_value(gap['four_tasks'])}")
    if gap.get("all"):
        lines.append(f"  all {gap['all']['tasks']} tasks of the run: {_value(gap['all'])}")
    return lines


def _value(result: Mapping[str, Any]) -> str:
    low, high = result["ci"]
    return f"{result['delta']:+.3f}, 95% CI {low:+.3f}…{high:+.3f}"


PUBLISHED_PREFIXES = {"unanchored": "classification", "box_anchored": "box_classification",
                      "mask_anchored": "mask_classification", "detection": "detection"}  # fmt: skip


def published_gap(table: Any) -> dict[str, Any] | None:
    """MMBU's headline on a published table (``analysis.reference_tables.ReferenceTable`` with
    the ``{task}_delta`` columns): per task, the mean Δ as printed over the rows that have one
    (the Random row has none); the headline over the three classification tasks and the
    four-task mean."""
    per_task: dict[str, float] = {}
    models = 0
    for prefix, task in PUBLISHED_PREFIXES.items():
        column = f"{prefix}_delta"
        values = [r.values.get(column) for r in table.rows if r.values.get(column) is not None]
        if values:
            per_task[task] = sum(values) / len(values)
            models = max(models, len(values))
    if len(per_task) < len(MMBU_GAP_TASKS):
        return None
    return {
        "models": models,
        "by": per_task,
        "headline": sum(per_task[t] for t in MMBU_CLASSIFICATION) / len(MMBU_CLASSIFICATION),
        "four_tasks": sum(per_task.values()) / len(per_task),
    }


def published_gap_text(gap: Mapping[str, Any]) -> str:
    """One line: the published headline (the paper's definition) and the four-task mean."""
    by = gap["by"]
    cls = ", ".join(f"{TASK_LABELS[t]} {by[t]:.3f}" for t in MMBU_CLASSIFICATION)
    return (
        f"published ({gap['models']} models): mean closed − open Δ over the 3 classification "
        f"tasks {gap['headline']:.4f} ({cls}); over all 4 tasks, detection "
        f"{by['detection']:.3f} included, {gap['four_tasks']:.4f} (the paper prints "
        f"{gap['four_tasks']:.2f})"
    )

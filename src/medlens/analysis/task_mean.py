"""MMBU's across-task mean closed − open Δ (its paper: about 0.26 over the three
classification tasks), from the per-task Δs the run already has.

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


@dataclass(frozen=True)
class TaskItems:
    """A run's scored items as the across-task Δ needs them (parallel arrays)."""

    task: np.ndarray
    form: np.ndarray
    keys: Sequence[PairKey | None]
    score: np.ndarray
    image: np.ndarray


def task_mean_delta(
    closed_open: Mapping[str, Any] | None, shared: TaskItems | None = None
) -> dict[str, Any] | None:
    """``{"tasks", "delta", "ci", "by"[, "images", "ci_method"]}``, or None with fewer than two
    tasks. Without `shared` (the items), the interval assumes independent tasks."""
    cells = ((closed_open or {}).get("by") or {}).get("task") or {}
    usable = {
        task: cell for task, cell in cells.items()
        if cell.get("delta") is not None and cell.get("delta_ci")
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


def task_mean_text(result: Mapping[str, Any]) -> str:
    """``mean closed − open Δ over 3 tasks: +0.260, 95% CI +0.21…+0.31``."""
    low, high = result["ci"]
    return (
        f"mean closed − open Δ over {result['tasks']} tasks: {result['delta']:+.3f}, 95% CI "
        f"{low:+.3f}…{high:+.3f} (each task weighs the same, as MMBU averages them)"
    )

"""MMBU's across-task mean closed − open Δ (its paper: about 0.26 over the three
classification tasks), from the per-task Δs the run already has.

Each task's Δ and its 95% CI come from the one closed − open function (``results["closed_open"]
["by"]["task"]``, whatever pairing it uses); the tasks hold different items, so their
estimates are independent and the mean's standard error is √(Σ SEₜ²) / T, each SEₜ read off
its CI (half-width / 1.96). A normal interval on that: simple, and as honest as the per-task
intervals it is built from. Needs at least two tasks with a Δ.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

Z95 = 1.959963984540054


def task_mean_delta(closed_open: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """``{"tasks", "delta", "ci", "by": {task: Δ}}``, or None with fewer than two tasks."""
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
    return {
        "tasks": count,
        "delta": mean,
        "ci": [mean - half, mean + half],
        "by": {task: float(c["delta"]) for task, c in sorted(usable.items())},
    }


def task_mean_text(result: Mapping[str, Any]) -> str:
    """``mean closed − open Δ over 3 tasks: +0.260, 95% CI +0.21…+0.31``."""
    low, high = result["ci"]
    return (
        f"mean closed − open Δ over {result['tasks']} tasks: {result['delta']:+.3f}, 95% CI "
        f"{low:+.3f}…{high:+.3f} (each task weighs the same, as MMBU averages them)"
    )

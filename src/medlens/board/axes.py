"""Per-axis tables: models × values of one axis (Med-CMR's dimensions, GMAI's tasks)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from medlens.board.align import Aligned
from medlens.board.ranks import SMALL_N, is_small


def check_board_axes(aligned: Aligned, axes: Sequence[str]) -> None:
    from medlens.slices import check_axes

    check_axes(axes, sorted(k for k in aligned.meta if k != "image_id"), "--by")


def axis_values(aligned: Aligned, axis: str) -> tuple[list[str], np.ndarray]:
    """Sorted non-empty values of `axis` and each item's code into them (−1: no value)."""
    column = aligned.meta[axis].astype(str)
    values = sorted(set(column.tolist()) - {""})
    lookup = {v: i for i, v in enumerate(values)}
    return values, np.array([lookup.get(v, -1) for v in column.tolist()], dtype=np.intp)


def by_axis(
    aligned: Aligned, axes: Sequence[str], min_n: int = SMALL_N
) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """{axis: {value: [one cell per run, in board order]}}, the best score per value marked."""
    return {axis: _axis_table(aligned, axis, min_n) for axis in axes}


def _axis_table(aligned: Aligned, axis: str, min_n: int) -> dict[str, list[dict[str, Any]]]:
    from medlens.bootstrap import group_cis

    values, codes = axis_values(aligned, axis)
    runs = aligned.scores.shape[0]
    keep = codes >= 0
    if not values or not keep.any():
        return {}
    n_values = len(values)
    cells = (np.arange(runs)[:, None] * n_values + codes[keep][None, :]).ravel()
    lo, hi = group_cis(
        aligned.scores[:, keep].ravel(), cells, np.tile(aligned.cluster[keep], runs)
    )  # bounds follow np.unique(cells): every (run, value) with items, in code order
    present = np.unique(cells)
    bound = {int(c): (float(lo[i]), float(hi[i])) for i, c in enumerate(present.tolist())}
    n = np.bincount(codes[keep], minlength=n_values)
    table: dict[str, list[dict[str, Any]]] = {}
    for v, value in enumerate(values):
        mask = codes == v
        images = int(np.unique(aligned.cluster[mask]).size)
        row: list[dict[str, Any]] = []
        for r, run in enumerate(aligned.runs):
            row.append({
                "run": run.run,
                "n": int(n[v]),
                "images": images,
                "score": float(aligned.scores[r, mask].mean()),
                "ci": list(bound[r * n_values + v]),
                "small": is_small(int(n[v]), images, min_n),
            })  # fmt: skip
        best = max(float(c["score"]) for c in row)
        for c in row:
            c["best"] = abs(float(c["score"]) - best) <= 1e-12
        table[value] = row
    return table

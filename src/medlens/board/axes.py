"""Per-axis tables: models × values of one axis (Med-CMR's dimensions, GMAI's tasks)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from medlens.board.align import Aligned
from medlens.board.ranks import SMALL_N, cell_cis, is_small


def check_board_axes(aligned: Aligned, axes: Sequence[str]) -> None:
    from medlens.analysis.groupable import check_by_axes

    check_by_axes(axes, aligned.meta)


def axis_values(aligned: Aligned, axis: str) -> tuple[list[str], np.ndarray]:
    """Sorted non-empty values of `axis` and each item's code into them (−1: no value)."""
    if axis not in aligned.codes:
        names, inverse = np.unique(aligned.meta[axis].astype(str), return_inverse=True)
        values = names.tolist()
        codes = inverse.ravel().astype(np.intp)
        if "" in values:  # items without a value: code −1, and "" is no column
            empty = values.index("")
            codes = np.where(codes == empty, -1, codes - (codes > empty))
            values.remove("")
        aligned.codes[axis] = (values, codes)
    return aligned.codes[axis]


def axis_chance(aligned: Aligned, axes: Sequence[str]) -> dict[str, dict[str, float | None]]:
    """Chance level of each axis value (results.baseline_mean: open items count 0 in a mix)."""
    from medlens.analysis.score_table import baseline_mean

    out: dict[str, dict[str, float | None]] = {}
    for axis in axes:
        values, codes = axis_values(aligned, axis)
        out[axis] = {v: baseline_mean(aligned.random[codes == c]) for c, v in enumerate(values)}
    return out


def by_axis(
    aligned: Aligned, axes: Sequence[str], min_n: int = SMALL_N
) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """{axis: {value: [one cell per run, in board order]}}, the best score per value marked."""
    return {axis: _axis_table(aligned, axis, min_n) for axis in axes}


def _axis_table(aligned: Aligned, axis: str, min_n: int) -> dict[str, list[dict[str, Any]]]:
    values, codes = axis_values(aligned, axis)
    keep = codes >= 0
    if not values or not keep.any():
        return {}
    n_values = len(values)
    lo, hi = cell_cis(aligned, codes, n_values)
    n = np.bincount(codes[keep], minlength=n_values)
    sums = np.stack([np.bincount(codes[keep], row[keep], minlength=n_values)
                     for row in aligned.scores])  # fmt: skip
    unit, per_unit = np.unique(codes[keep].astype(np.int64) * aligned.n_images
                               + aligned.cluster[keep], return_counts=True)  # fmt: skip
    images = np.bincount(unit // aligned.n_images, minlength=n_values)
    squares = np.bincount(unit // aligned.n_images, per_unit.astype(float) ** 2, minlength=n_values)
    table: dict[str, list[dict[str, Any]]] = {}
    for v, value in enumerate(values):
        if n[v] == 0:
            continue
        means = sums[:, v] / n[v]
        best = means.max()
        small = is_small(int(n[v]), float(n[v]) ** 2 / squares[v], min_n)  # Kish's images
        table[value] = [
            {"run": run.run, "n": int(n[v]), "images": int(images[v]), "score": float(means[r]),
             "ci": [float(lo[r, v]), float(hi[r, v])], "small": small,
             "best": bool(abs(means[r] - best) <= 1e-12)}
            for r, run in enumerate(aligned.runs)
        ]  # fmt: skip
    return table

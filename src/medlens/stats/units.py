"""Collapsed resampling units: what every interval and bootstrap of a mean is computed from.

A unit is one image's questions in a group (or one item without an image); equal units are
merged into one row with a count, so the arithmetic is the same however the rows arrived.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Units:
    """Resampling units of many groups, collapsed: `count` units in `group`, each of `size`
    items whose values sum to `sum` (one image's questions in a cell, or one item)."""

    group: np.ndarray
    """Integer group codes 0…n_groups-1."""
    sum: np.ndarray
    size: np.ndarray
    count: np.ndarray


def collapse(
    group: np.ndarray, sums: np.ndarray, sizes: np.ndarray, counts: np.ndarray | None = None
) -> Units:
    """Units sorted by (group, sum, size), equal ones merged into one row with a count.

    Sums are rounded to 1e-9 so that the order a cluster's values were added in (numpy here,
    DuckDB in slices.py) cannot change a bit of any interval.
    """
    sums = np.round(np.asarray(sums, dtype=float), 9)
    order = np.lexsort((sizes, sums, group))
    group, sums, sizes = np.asarray(group)[order], sums[order], np.asarray(sizes, float)[order]
    weights = np.ones(group.size, np.int64) if counts is None else np.asarray(counts)[order]
    if group.size == 0:
        return Units(group.astype(np.intp), sums, sizes, weights.astype(np.int64))
    new = np.ones(group.size, dtype=bool)
    new[1:] = (group[1:] != group[:-1]) | (sums[1:] != sums[:-1]) | (sizes[1:] != sizes[:-1])
    first = np.flatnonzero(new)
    merged = np.add.reduceat(weights, first).astype(np.int64)
    return Units(group[first].astype(np.intp), sums[first], sizes[first], merged)

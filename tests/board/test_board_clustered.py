"""Board cells over clustered items (several questions per image): the (cell, image) units built
from the items' pairs give exactly the intervals of ``bootstrap.group_cis`` over runs × items."""

from __future__ import annotations

import numpy as np
import pytest

from medlens.board.align import Aligned
from medlens.board.ranks import cell_cis, clustered_binary_units
from medlens.stats.bootstrap import group_cis, mean_cis


def aligned(scores: np.ndarray, cluster: np.ndarray) -> Aligned:
    n = scores.shape[1]
    return Aligned(
        runs=[], ids=np.arange(n).astype(str).astype(object), scores=scores,
        cluster=np.unique(cluster, return_inverse=True)[1].ravel().astype(np.intp),
        random=np.full(n, 0.25), meta={}, dropped={},
    )  # fmt: skip


@pytest.mark.parametrize("seed", range(6))
def test_clustered_cells_equal_group_cis_over_every_row(seed: int) -> None:
    rng = np.random.default_rng(seed)
    runs, n, n_codes = int(rng.integers(1, 7)), int(rng.integers(20, 400)), int(rng.integers(1, 9))
    per_image = int(rng.integers(2, 5))
    cluster = np.repeat(np.arange(n), per_image)[:n]
    scores = (rng.random((runs, n)) < rng.uniform(0.05, 0.95, (runs, 1))).astype(float)
    codes = rng.integers(-1, n_codes, n)  # -1: an item without this axis, in no cell
    board = aligned(scores, cluster)
    lo, hi = cell_cis(board, codes, n_codes)
    keep = codes >= 0
    cells = (np.arange(runs)[:, None] * n_codes + codes[keep][None, :]).ravel()
    want_lo, want_hi = group_cis(scores[:, keep].ravel(), cells, np.tile(board.cluster[keep], runs))
    present = np.unique(cells)
    np.testing.assert_array_equal(lo.ravel()[present], want_lo)
    np.testing.assert_array_equal(hi.ravel()[present], want_hi)
    absent = np.setdiff1d(np.arange(runs * n_codes), present)
    assert np.isnan(lo.ravel()[absent]).all() and np.isnan(hi.ravel()[absent]).all()


def test_units_count_each_image_of_each_cell_once() -> None:
    scores = np.array([[1.0, 1.0, 0.0, 1.0, 0.0, 0.0]])
    codes = np.array([0, 0, 0, 1, 1, 1])
    cluster = np.array([0, 0, 1, 1, 2, 2])  # image 1 holds an item of each cell
    units = clustered_binary_units(scores, codes, cluster, 2)
    rows = sorted(zip(units.group.tolist(), units.sum.tolist(), units.size.tolist(),
                      units.count.tolist(), strict=True))  # fmt: skip
    assert rows == [(0, 0.0, 1.0, 1), (0, 2.0, 2.0, 1), (1, 0.0, 2.0, 1), (1, 1.0, 1.0, 1)]
    lo, hi = mean_cis(units, None, 2)
    assert 0 <= lo[0] < 2 / 3 < hi[0] <= 1 and 0 <= lo[1] < 1 / 3 < hi[1] <= 1

"""Issue 45: each interval class the round-4 simulations found short or too wide, against a
reference computation where there is one, and small fixed-seed checks with loose bounds (the
coverage figures live in bench/coverage_round4.py)."""

from __future__ import annotations

import numpy as np
import pytest

from medlens.judges.results import mean_ci


@pytest.mark.parametrize("n", [10, 40, 200])
@pytest.mark.parametrize("rating", [3.0, 7.0, 8.0, 9.0])
def test_an_all_equal_clustered_rubric_cell_is_not_the_whole_scale(n: int, rating: float) -> None:
    images = (np.arange(n) // 3).astype(str)  # three ratings per image, all equal
    lo, hi = mean_ci(np.full(n, rating), images, 10.0)["ci"]
    assert lo < rating < hi  # never zero-width
    # was [0, 10] at every n: a rounding residue in the cluster SE sent the effective n to 1
    assert 0 < lo and hi < 10 and hi - lo < (6.0 if n < 40 else 3.0)

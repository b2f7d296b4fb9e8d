"""Win shares between groups of models (a categorical --meta column: medical vs general).

For groups A and B, every item and every model pair (a in A, b in B) is one comparison: a wins,
ties or loses on that item. The win share is wins / (wins + losses), as MMBU reports medical
models' wins over general ones per sub-modality. Its 95% CI resamples images (the same draw for
every model pair, so the pairs' dependence is kept): percentile bootstrap of Σwins / Σdecided
over the images with at least one decided comparison.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Any

import numpy as np

from medlens.board.align import Aligned
from medlens.board.axes import axis_values
from medlens.board.meta import MAX_GROUPS, ModelMeta


def win_shares(
    aligned: Aligned, meta: ModelMeta, axes: Sequence[str], n_resamples: int = 1000, seed: int = 0
) -> dict[str, Any]:
    """{column: [one entry per pair of groups]} (or {"skipped": reason}) per categorical column."""
    runs = [run.run for run in aligned.runs]
    out: dict[str, Any] = {}
    for column, values in meta.categorical.items():
        groups: dict[str, list[int]] = {}
        for r, run in enumerate(runs):
            if run in values:
                groups.setdefault(values[run], []).append(r)
        if len(groups) > MAX_GROUPS:
            out[column] = {"skipped": f"{len(groups)} groups (at most {MAX_GROUPS} are compared)"}
            continue
        out[column] = [
            _group_pair(aligned, a, groups[a], b, groups[b], axes, n_resamples, seed)
            for a, b in combinations(sorted(groups), 2)
        ]
    return out


def _group_pair(
    aligned: Aligned,
    name_a: str,
    rows_a: list[int],
    name_b: str,
    rows_b: list[int],
    axes: Sequence[str],
    n_resamples: int,
    seed: int,
) -> dict[str, Any]:
    scores = aligned.scores
    wins = np.zeros(aligned.ids.size)
    losses = np.zeros(aligned.ids.size)
    for b in rows_b:
        wins += (scores[rows_a] > scores[b]).sum(axis=0)
        losses += (scores[rows_a] < scores[b]).sum(axis=0)
    comparisons = len(rows_a) * len(rows_b)
    everything = np.zeros(aligned.ids.size, dtype=np.intp)
    by = {}
    for axis in axes:
        values, codes = axis_values(aligned, axis)
        shares = _shares(aligned, wins, losses, codes, comparisons, n_resamples, seed)
        by[axis] = {values[c]: cell for c, cell in shares.items()}
    return {
        "group": name_a,
        "versus": name_b,
        "models": [len(rows_a), len(rows_b)],
        "overall": _shares(aligned, wins, losses, everything, comparisons, n_resamples, seed)[0],
        "by": by,
    }


def _shares(
    aligned: Aligned,
    wins: np.ndarray,
    losses: np.ndarray,
    codes: np.ndarray,
    comparisons: int,
    n_resamples: int,
    seed: int,
) -> dict[int, dict[str, Any]]:
    """Win share of each code's items (code −1: left out), with the image-bootstrap CI."""
    from medlens.stats.bootstrap import resampled_cis
    from medlens.stats.units import Units

    keep = codes >= 0
    n_codes = int(codes.max(initial=-1)) + 1
    g = aligned.n_images
    unit = codes[keep].astype(np.int64) * g + aligned.cluster[keep]
    keys, index = np.unique(unit, return_inverse=True)
    unit_wins = np.bincount(index.ravel(), wins[keep], minlength=keys.size)
    decided = np.bincount(index.ravel(), (wins + losses)[keep], minlength=keys.size)
    some = decided > 0
    units = Units(
        group=(keys[some] // g).astype(np.intp),
        sum=unit_wins[some],
        size=decided[some],
        count=np.ones(int(some.sum()), dtype=np.int64),
    )
    lo, hi = resampled_cis(units, n_codes, n_resamples=n_resamples, seed=seed)
    out = {}
    for code in np.unique(codes[keep]).tolist():
        mask = codes == code
        w, lost = float(wins[mask].sum()), float(losses[mask].sum())
        total = int(mask.sum()) * comparisons
        out[code] = {
            "items": int(mask.sum()),
            "comparisons": total,
            "wins": int(w),
            "losses": int(lost),
            "ties": int(total - w - lost),
            "win_share": w / (w + lost) if w + lost else None,
            "ci": None if w + lost == 0 else [float(lo[code]), float(hi[code])],
        }
    return out

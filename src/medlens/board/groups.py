"""Win shares between groups of models (a categorical --meta column: medical vs general).

Two shares, each named for what it is:

- **per-item win share**: for groups A and B, every item and every model pair (a in A, b in B)
  is one comparison: a wins, ties or loses on that item; the share is wins / (wins + losses).
  Its 95% CI resamples images (the same draw for every model pair, so the pairs' dependence is
  kept): percentile bootstrap of Σwins / Σdecided over the images with a decided comparison.
- **per-value win share** (MMBU's 62.28%: "medical models win 62.28% of sub-modality
  comparisons"): for every value of the sub-modality axis (else ``modality``) and every model
  pair (a, b), one comparison of a's and b's mean score on that value's items (MMBU: F1); the
  share is wins / comparisons (ties counted apart), beside the mean lead of a over b.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Any

import numpy as np

from medlens.board.align import Aligned
from medlens.board.axes import axis_values
from medlens.board.meta import MAX_GROUPS, ModelMeta

SUBMODALITY_AXES = ("submodality", "sub_modality", "metadata_submodality", "modality")
"""Where the sub-modality is found (MMBU's public split: ``metadata_submodality``), in order."""


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
        "counts_for": name_a,
        "models": [len(rows_a), len(rows_b)],
        "overall": _shares(aligned, wins, losses, everything, comparisons, n_resamples, seed)[0],
        "by": by,
        "per_value": value_shares(aligned, rows_a, rows_b),
    }


def value_shares(aligned: Aligned, rows_a: list[int], rows_b: list[int]) -> dict[str, Any] | None:
    """Share of (value, model pair) comparisons of mean scores that group A's model wins, over
    the values of the sub-modality axis (see the module docstring); None without such an axis."""
    axis = next((a for a in SUBMODALITY_AXES if a in aligned.meta), None)
    if axis is None:
        return None
    values, codes = axis_values(aligned, axis)
    keep = codes >= 0
    n = np.bincount(codes[keep], minlength=len(values)).astype(float)
    sums = np.stack(
        [np.bincount(codes[keep], row[keep], minlength=len(values)) for row in aligned.scores]
    )
    present = n > 0
    means = sums[:, present] / n[present]
    leads = (means[rows_a][:, None, :] - means[rows_b][None, :, :]).ravel()
    wins, losses = int((leads > 1e-12).sum()), int((leads < -1e-12).sum())
    comparisons = int(leads.size)
    return {
        "axis": axis,
        "values": int(present.sum()),
        "comparisons": comparisons,
        "wins": wins,
        "ties": comparisons - wins - losses,
        "losses": losses,
        "win_share": wins / comparisons if comparisons else None,
        "mean_lead": float(leads.mean()) if comparisons else None,
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

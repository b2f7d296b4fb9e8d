"""Paired families (`--pairs BASE:TUNED`): each medical fine-tune against its base model.

Per pair: tuned − base with the paired CI, exact McNemar p and per-item win/tie/loss of
:func:`medlens.analysis.compare.paired_cell` (what `medlens compare` prints for the same two runs), overall
and per value of each --by axis. Across pairs: a sign test and a Wilcoxon signed-rank test over
the differences of every pair × cell of one --by axis (one test per axis: two axes' cells hold
the same items and are never pooled), or over each pair's overall difference without --by, as
Med-CMR tests fine-tunes across its 7 dimensions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from medlens.board.align import Aligned
from medlens.core.notation import bad, split_list, tagged


def parse_pairs(text: str, known: Sequence[str]) -> list[tuple[str, str]]:
    """``BASE:TUNED,BASE:TUNED`` of run folder names on the board."""
    pairs = []
    for term in split_list(text):
        base, tuned, colon = tagged(term)
        if not colon or not base or not tuned:
            raise bad(
                "--pairs", text, f"cannot read {term!r} (use BASE:TUNED with run folder names)"
            )
        for name in (base, tuned):
            if name not in known:
                raise bad("--pairs", text,
                          f"unknown run {name!r} in {term!r} (runs on the board: {', '.join(known)})")  # fmt: skip
        if base == tuned:
            raise bad("--pairs", text, f"{term!r} pairs a run with itself")
        pairs.append((base, tuned))
    return pairs


def _paired(aligned: Aligned, base: int, tuned: int) -> Any:
    from medlens.analysis.compare import _Paired

    return _Paired(
        a=aligned.scores[base],
        b=aligned.scores[tuned],
        random=aligned.random,
        cluster=aligned.cluster,
        meta=aligned.meta,
    )


def pair_results(
    aligned: Aligned,
    pairs: Sequence[tuple[str, str]],
    axes: Sequence[str],
    n_resamples: int = 1000,
    seed: int = 0,
) -> list[dict[str, Any]]:
    from medlens.analysis.compare import paired_cell

    index = {run.run: r for r, run in enumerate(aligned.runs)}
    everything = np.ones(aligned.ids.size, dtype=bool)
    out = []
    for base, tuned in pairs:
        paired = _paired(aligned, index[base], index[tuned])
        overall = paired_cell(paired, everything, (), n_resamples, seed).to_json()
        del overall["key"]
        by = {axis: _axis_cells(aligned, paired, axis, n_resamples, seed) for axis in axes}
        out.append({"base": base, "tuned": tuned, "overall": overall, "by": by})
    return out


def _axis_cells(
    aligned: Aligned, paired: Any, axis: str, n_resamples: int, seed: int
) -> dict[str, dict[str, Any]]:
    """Every value's paired cell exactly as ``medlens compare --by`` gives it (Holm-adjusted
    p across the axis's values)."""
    from medlens.analysis.compare import by_axis

    values = paired.meta[axis].astype(str)
    local = type(paired)(
        a=paired.a, b=paired.b, random=paired.random, cluster=paired.cluster,
        meta={**paired.meta, axis: values},
    )  # fmt: skip
    cells = {}
    for cell in by_axis(local, axis, n_resamples, seed):
        entry = cell.to_json()
        cells[str(entry.pop("key")[axis])] = entry
    return cells


def pair_tests(pairs: Sequence[dict[str, Any]], axes: Sequence[str]) -> dict[str, Any] | None:
    """Sign and Wilcoxon tests over the differences of all pairs × the cells of the first
    --by axis (every pair's overall difference without --by); see :func:`pair_tests_by_axis`
    for one test per axis."""
    if not pairs:
        return None
    if axes:
        return pair_tests_by_axis(pairs, axes[:1])[axes[0]]
    return differences_test(
        [pair["overall"]["difference"] for pair in pairs], "pairs (overall difference)"
    )


def pair_tests_by_axis(
    pairs: Sequence[dict[str, Any]], axes: Sequence[str]
) -> dict[str, dict[str, Any]]:
    """One test per --by axis over pairs × that axis's cells. The cells of two axes hold the
    same items, so they are never pooled into one test as if they were independent pairs."""
    return {
        axis: differences_test(
            [cell["difference"] for pair in pairs for cell in pair["by"].get(axis, {}).values()],
            f"pairs × cells of {axis}",
        )
        for axis in axes
    }


def differences_test(differences: Sequence[float], over: str) -> dict[str, Any]:
    """Sign and Wilcoxon signed-rank tests (scipy, two-sided, zeros dropped) of differences."""
    from medlens.stats.significance import sign_test, wilcoxon_test

    kept = [float(d) for d in differences if d == d]  # NaN: a cell one side lacks
    sign, rank = sign_test(kept), wilcoxon_test(kept)
    return {
        "n": len(kept),
        "sign_p": sign["p"],
        "wilcoxon_p": rank["p"],
        "median_difference": float(np.median(kept)) if kept else None,
        "n_nonzero": sign["n"],
        "positive": sign["positive"],
        "negative": sign["negative"],
        "min_p": sign["min_p"],
        "wilcoxon_method": rank["method"],
        "over": over,
    }

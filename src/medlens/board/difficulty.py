"""Item difficulty over the board: items every run solved, none solved, share of models right.

"Right" is a main score of 1 (a correct closed answer, an exact set, a box at IoU ≥ 0.5). The ids
solved by every run can be written to a file (`--solved-by-all FILE`, one id per line), which
Med-CMR's difficulty filter drops from a benchmark.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from medlens.board.align import Aligned


def item_shares(aligned: Aligned) -> np.ndarray:
    """Share of runs with a full score on each item."""
    if aligned.scores.size == 0:
        return np.zeros(aligned.ids.size)
    return np.asarray((aligned.scores >= 1.0).mean(axis=0), dtype=float)


def difficulty(aligned: Aligned) -> dict[str, Any]:
    runs = aligned.scores.shape[0]
    shares = item_shares(aligned)
    right = np.rint(shares * runs).astype(np.int64)
    histogram = np.bincount(right, minlength=runs + 1)
    solved_by_all = aligned.ids[right == runs].tolist() if runs else []
    return {
        "n": int(aligned.ids.size),
        "runs": runs,
        "solved_by_all": len(solved_by_all),
        "solved_by_none": int((right == 0).sum()),
        "mean_share": float(shares.mean()) if shares.size else None,
        "histogram": [
            {"right": k, "share": k / runs if runs else None, "items": int(histogram[k])}
            for k in range(runs + 1)
        ],
        "solved_by_all_ids": solved_by_all,
        "per_item": dict(zip(aligned.ids.tolist(), shares.tolist(), strict=True)),
    }


def solved_ids_text(ids: list[str]) -> str:
    """The ids solved by every run, one per line (for `subset --drop-solved-by`-style filters)."""
    return "".join(f"{i}\n" for i in ids)

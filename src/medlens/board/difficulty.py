"""Item difficulty over the board: items every run solved, none solved, share of models right.

"Right" is a main score of 1 (a correct closed answer, an exact set, a box at IoU ≥ 0.5). The ids
solved by every run can be written to a file (`--solved-by-all FILE`, one id per line), which
Med-CMR's difficulty filter drops from a benchmark. Judged scores that are not all 0/1 (a rubric
judge's under ``--score judge:NAME``) have no "solved": the section says so and lists nothing
(rule scores keep "right = 1", partial credit included).
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


CONTINUOUS_NOTE = (
    "scores are not 0/1 (a judge's rubric scores): no item is 'solved', so no solved-by-every-run "
    "table or difficulty histogram is given"
)


def is_binary(scores: np.ndarray) -> bool:
    return bool(np.isin(scores[~np.isnan(scores)], (0.0, 1.0)).all()) if scores.size else True


def difficulty(aligned: Aligned) -> dict[str, Any]:
    runs = aligned.scores.shape[0]
    if aligned.source != "rules" and not is_binary(aligned.scores):  # a rubric judge's scores
        return {"n": int(aligned.ids.size), "runs": runs, "continuous": True, "note": CONTINUOUS_NOTE,
                "solved_by_all": None, "solved_by_none": None, "mean_share": None, "histogram": [],
                "solved_by_all_ids": [], "per_item": {}}  # fmt: skip
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
